/**
 * One guarded Stripe call: the `stripe` client takes no AbortSignal and hides its retries, so
 * the call runs inside an async-local scope that the kit's HTTP client reads. The scope hands
 * the signal to every request, records every attempt (what was sent, what came back), and
 * refuses a second write inside one call before it leaves the process — so a client retry,
 * however the client decides to make one, never reaches Stripe.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { TransportFailure } from '../../executor-kit/transport-failure.js';

/** What one HTTP attempt inside a scope ended with. */
export type StripeAttempt =
  | {
      readonly kind: 'response';
      readonly method: string;
      readonly status: number;
      /** Lower-case response headers (for `retry-after`). */
      readonly headers: Readonly<Record<string, string>>;
      /** Stripe's `error.code` (or `error.type`) from the body, when the status is not 2xx. */
      readonly errorCode?: string;
    }
  | {
      readonly kind: 'transport';
      readonly method: string;
      readonly sent: boolean;
      readonly failure: TransportFailure | 'unclassified';
    };

/** The state of one scope. */
export interface StripeCallScope {
  readonly signal: AbortSignal | undefined;
  readonly attempts: StripeAttempt[];
  /** Write requests (anything but GET/HEAD) started in this scope. */
  writes: number;
}

const scopes = new AsyncLocalStorage<StripeCallScope>();

/** The scope the current async context runs in, if any. */
export function currentStripeScope(): StripeCallScope | undefined {
  return scopes.getStore();
}

/** How a scoped call ended, with every attempt it made. */
export type ScopedCall<T> =
  | { readonly kind: 'returned'; readonly value: T; readonly attempts: readonly StripeAttempt[] }
  | {
      readonly kind: 'threw';
      readonly error: unknown;
      readonly attempts: readonly StripeAttempt[];
    };

/** Runs `call` in a fresh scope. Never throws: a thrown error is returned with the attempts. */
export async function runInStripeScope<T>(
  call: () => Promise<T>,
  signal: AbortSignal | undefined,
): Promise<ScopedCall<T>> {
  const scope: StripeCallScope = { signal, attempts: [], writes: 0 };
  try {
    const value = await scopes.run(scope, call);
    return { kind: 'returned', value, attempts: scope.attempts };
  } catch (error) {
    return { kind: 'threw', error, attempts: scope.attempts };
  }
}

/**
 * The signal for an execute/verify call: the guard's (the context's `signal`, aborted when the
 * execution lease ends) and the pair's own `fallback`, whichever aborts first.
 */
export function contextSignal(context: object, fallback?: AbortSignal): AbortSignal | undefined {
  const { signal } = context as { signal?: unknown };
  const fromGuard = signal instanceof AbortSignal ? signal : undefined;
  if (fromGuard === undefined) return fallback;
  return fallback === undefined ? fromGuard : AbortSignal.any([fromGuard, fallback]);
}
