/**
 * Stripe's documented error semantics, and a guarded Stripe call turned into the guard's
 * results. Stripe documents 4xx "content errors" as requests it did not carry out (400, 401,
 * 402 card errors, 403, 404) and runs its rate limiters before anything executes (every 429);
 * a 409 means another request with the same key may still be running, and a 5xx is
 * indeterminate. See docs/decisions/080-executor-kit.md.
 */
import type Stripe from 'stripe';
import { ConfigurationError } from '../../core/errors.js';
import {
  classifyHttpStatus,
  type ExecutionFailure,
  type HttpOutcomeRules,
  RateLimitReading,
} from '../../executor-kit/http-outcome.js';
import { runInStripeScope, type StripeAttempt } from './stripe-call-scope.js';
import { isKitStripeHttpClient } from './stripe-http-client.js';

/** Stripe's failed-write semantics. */
export const stripeHttpRules: HttpOutcomeRules = {
  notApplied: [400, 401, 402, 403, 404],
  rateLimited: RateLimitReading.not_applied,
};

type AttemptReading = { readonly kind: 'succeeded' } | ExecutionFailure;

function readAttempt(attempt: StripeAttempt): AttemptReading {
  if (attempt.kind === 'transport') {
    const reason = `transport_${attempt.failure}`;
    return attempt.sent ? { kind: 'failed_unknown', reason } : { kind: 'failed_known', reason };
  }
  return classifyHttpStatus(attempt.status, {
    rules: stripeHttpRules,
    headers: attempt.headers,
    ...(attempt.errorCode === undefined ? {} : { errorCode: attempt.errorCode }),
  });
}

/**
 * Why a Stripe call that failed failed, from every attempt it made: no attempt at all → the
 * client refused it before sending (`failed_known`); any attempt that may have applied the write
 * (a 2xx whose answer the client could not read, a lost response, a 5xx, a 409) →
 * `failed_unknown`; only attempts Stripe documents as not applied → `failed_known`.
 */
export function classifyStripeAttempts(attempts: readonly StripeAttempt[]): ExecutionFailure {
  const readings = attempts.map(readAttempt);
  if (readings.length === 0) return { kind: 'failed_known', reason: 'stripe_request_not_sent' };
  if (readings.some((reading) => reading.kind === 'succeeded')) {
    return { kind: 'failed_unknown', reason: 'stripe_response_unreadable' };
  }
  const unknown = readings.find((reading) => reading.kind === 'failed_unknown');
  if (unknown !== undefined) return unknown as ExecutionFailure;
  return readings[readings.length - 1] as ExecutionFailure;
}

/** A guarded Stripe call's result. */
export type StripeCallOutcome<T> =
  | { readonly kind: 'succeeded'; readonly value: T }
  | ExecutionFailure;

/**
 * Runs one Stripe call (one write, plus any reads it needs) so that it is sent at most once and
 * its failure is classified: `runStripeCall(() => stripe.refunds.create(params, { idempotencyKey }),
 * { signal })`. The `stripe` client must use the kit's HTTP client (`stripeClientSettings`).
 */
export async function runStripeCall<T>(
  call: () => Promise<T>,
  options: { readonly signal?: AbortSignal | undefined } = {},
): Promise<StripeCallOutcome<T>> {
  const result = await runInStripeScope(call, options.signal);
  return result.kind === 'returned'
    ? { kind: 'succeeded', value: result.value }
    : classifyStripeAttempts(result.attempts);
}

/**
 * Refuses a `stripe` client that can send a write twice on its own: one that retries
 * (`maxNetworkRetries` above 0) or that does not send through the kit's HTTP client.
 */
export function assertSafeStripeClient(stripe: Stripe, caller: string): void {
  const retries = stripe.getMaxNetworkRetries();
  if (retries !== 0) {
    throw new ConfigurationError(
      'stripe_client_unsafe',
      `${caller}: the stripe client retries on its own (maxNetworkRetries: ${retries}), which can send a write twice; create it with new Stripe(key, { ...stripeClientSettings(transport) })`,
    );
  }
  if (!isKitStripeHttpClient(stripe.getApiField('httpClient'))) {
    throw new ConfigurationError(
      'stripe_client_unsafe',
      `${caller}: the stripe client does not send through the executor kit (its own HTTP client retries a reset connection even with maxNetworkRetries: 0); create it with new Stripe(key, { ...stripeClientSettings(transport) })`,
    );
  }
}
