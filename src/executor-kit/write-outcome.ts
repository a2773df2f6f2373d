/**
 * From what happened to a write to what the guard records: a `TransportError` that was not sent
 * is `failed_known` (nothing reached the provider), every other failure is `failed_unknown`,
 * and a response is read by the provider's rules. `sendWrite` does both for one request.
 */

import type { ExecutorTransport } from './executor-transport.js';
import {
  classifyHttpStatus,
  type ExecutionFailure,
  type HttpOutcomeRules,
} from './http-outcome.js';
import { findTransportError } from './transport-failure.js';
import type { TransportRequest, TransportResponse } from './transport-types.js';

/**
 * Classifies a thrown error (looking through `cause` and `detail` for a `TransportError`):
 * not sent → `failed_known` with `transport_<failure>`; sent → `failed_unknown` with
 * `transport_<failure>`; anything else → `failed_unknown` with `transport_unclassified`.
 */
export function classifyTransportError(error: unknown): ExecutionFailure {
  const found = findTransportError(error);
  if (found === undefined) return { kind: 'failed_unknown', reason: 'transport_unclassified' };
  const reason = `transport_${found.failure}`;
  return found.sent ? { kind: 'failed_unknown', reason } : { kind: 'failed_known', reason };
}

/** What one write produced; a failure keeps the response when there was one. */
export type WriteOutcome =
  | { readonly kind: 'succeeded'; readonly response: TransportResponse }
  | (ExecutionFailure & { readonly response?: TransportResponse });

/** Options of `sendWrite`. */
export interface SendWriteOptions {
  /** @default genericHttpRules */
  readonly rules?: HttpOutcomeRules;
  /** Reads the provider's error code from a failed response (e.g. Stripe's `error.code`). */
  readonly errorCode?: (response: TransportResponse) => string | undefined;
}

/** Sends one write and classifies it; never throws for transport failures. */
export async function sendWrite(
  transport: ExecutorTransport,
  request: TransportRequest,
  options: SendWriteOptions = {},
): Promise<WriteOutcome> {
  let response: TransportResponse;
  try {
    response = await transport.request(request);
  } catch (error) {
    if (findTransportError(error) === undefined) throw error;
    return classifyTransportError(error);
  }
  const errorCode = response.status >= 300 ? options.errorCode?.(response) : undefined;
  const outcome = classifyHttpStatus(response.status, {
    headers: response.headers,
    ...(errorCode === undefined ? {} : { errorCode }),
    ...(options.rules === undefined ? {} : { rules: options.rules }),
  });
  return outcome.kind === 'succeeded' ? { kind: 'succeeded', response } : { ...outcome, response };
}
