/**
 * What an HTTP status means for a write, per provider: applied (2xx), certainly not applied
 * (the statuses the provider documents as refusing before any effect) or unknown (everything
 * else: 5xx, 409, redirects, statuses the provider does not document). Reason codes carry the
 * status and the provider's error code, never its free text (it may name a customer).
 */
import type { ExecuteResult } from '../core/action.js';

/** A failed write as the guard records it. */
export type ExecutionFailure = Extract<ExecuteResult, { kind: 'failed_known' | 'failed_unknown' }>;

/** How a provider's 429 is read. */
export const RateLimitReading = {
  /** The provider rate-limits before executing anything: a 429 is never applied. */
  not_applied: 'not_applied',
  /** Not applied only when the answer carries `Retry-After` (a deliberate rate-limit answer). */
  not_applied_with_retry_after: 'not_applied_with_retry_after',
  /** A 429 says nothing about the write. */
  unknown: 'unknown',
} as const;
export type RateLimitReading = (typeof RateLimitReading)[keyof typeof RateLimitReading];

/** A provider's documented semantics of failed writes. */
export interface HttpOutcomeRules {
  /** Non-2xx statuses (other than 429) the provider documents as "the write was not applied". */
  readonly notApplied: readonly number[];
  readonly rateLimited: RateLimitReading;
}

/**
 * For a provider that documents nothing better: the 4xx statuses HTTP defines as refusing the
 * request as sent (malformed, unauthenticated, forbidden, not found, method, failed
 * precondition, too large, media type, unprocessable), and 429 only with `Retry-After`. 408,
 * 409, 410, other 4xx, every 3xx and every 5xx are unknown.
 */
export const genericHttpRules: HttpOutcomeRules = {
  notApplied: [400, 401, 403, 404, 405, 412, 413, 415, 422],
  rateLimited: RateLimitReading.not_applied_with_retry_after,
};

/** The result of a response: the write happened, or a failure to record. */
export type HttpOutcome = { readonly kind: 'succeeded' } | ExecutionFailure;

/** Options of `classifyHttpStatus`. */
export interface ClassifyHttpOptions {
  /** Response headers (lower-case names); only `retry-after` is read. */
  readonly headers?: Readonly<Record<string, string>>;
  /** The provider's machine-readable error code (e.g. Stripe's `card_declined`), if any. */
  readonly errorCode?: string;
  /** @default genericHttpRules */
  readonly rules?: HttpOutcomeRules;
}

const REASON_TOKEN = /^[a-z0-9_]{1,40}$/;

/**
 * A provider error code made safe for a reason code: lower-case letters, digits and `_` (with
 * `-` and `.` read as `_`), at most 40 characters; anything else gives `undefined`.
 */
export function reasonToken(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const token = value.toLowerCase().replaceAll('-', '_').replaceAll('.', '_');
  return REASON_TOKEN.test(token) ? token : undefined;
}

/** `http_<status>` or `http_<status>_<code>`, e.g. `http_402_card_declined`. */
export function httpReason(status: number, errorCode?: string): string {
  const token = reasonToken(errorCode);
  return token === undefined ? `http_${status}` : `http_${status}_${token}`;
}

function rateLimitMaybeApplied(
  reading: RateLimitReading,
  headers: Readonly<Record<string, string>>,
): boolean {
  if (reading === RateLimitReading.not_applied) return false;
  if (reading === RateLimitReading.unknown) return true;
  return headers['retry-after'] === undefined;
}

/** Classifies a final HTTP status (200–599) for a write. */
export function classifyHttpStatus(status: number, options: ClassifyHttpOptions = {}): HttpOutcome {
  if (!Number.isInteger(status) || status < 200 || status > 599) {
    return { kind: 'failed_unknown', reason: 'http_status_invalid' };
  }
  if (status < 300) return { kind: 'succeeded' };
  const rules = options.rules ?? genericHttpRules;
  const reason = httpReason(status, options.errorCode);
  const notApplied =
    status === 429
      ? !rateLimitMaybeApplied(rules.rateLimited, options.headers ?? {})
      : rules.notApplied.includes(status);
  return notApplied ? { kind: 'failed_known', reason } : { kind: 'failed_unknown', reason };
}
