/**
 * What can go wrong with one request, split by the only fact the guard needs: whether any byte
 * of the request left this process. `TransportError` carries that fact; it is recognised by a
 * brand, so two copies of the library still agree on it.
 */
import { SideguardError } from '../core/errors.js';

/** Failures where nothing of the request was written: the provider cannot have applied it. */
export const NotSentFailure = {
  /** The host answered the TCP handshake with a reset (`ECONNREFUSED`). */
  connection_refused: 'connection_refused',
  /** The host name did not resolve (`ENOTFOUND`, `EAI_AGAIN`, …). */
  dns_failure: 'dns_failure',
  /** The TLS handshake failed (bad certificate, wrong protocol, …). */
  tls_failure: 'tls_failure',
  /** Connecting (DNS, TCP, TLS) took longer than `connectTimeoutMs`. */
  connect_timeout: 'connect_timeout',
  /** Any other failure while connecting (a reset during the TLS handshake, …). */
  connect_failed: 'connect_failed',
  /** The caller's signal aborted the call before the request was written. */
  aborted_before_send: 'aborted_before_send',
  /** The call's timeout ended it before the request was written. */
  timeout_before_send: 'timeout_before_send',
  /** The request itself was refused locally (a bad header, an unsupported body). */
  request_invalid: 'request_invalid',
  /** A second send inside one guarded call was refused (a client's hidden retry). */
  retry_refused: 'retry_refused',
} as const;
export type NotSentFailure = (typeof NotSentFailure)[keyof typeof NotSentFailure];

/** Failures after the request was handed to the socket: the provider may have applied it. */
export const MaybeSentFailure = {
  /** The connection was reset (`ECONNRESET`, `EPIPE`). */
  connection_reset: 'connection_reset',
  /** The server closed the connection without a (complete) response. */
  connection_closed: 'connection_closed',
  /** No complete response within the call's timeout. */
  timeout: 'timeout',
  /** The caller's signal aborted the call after the request was written. */
  aborted_after_send: 'aborted_after_send',
  /** The response body exceeded `maxResponseBytes`. */
  response_too_large: 'response_too_large',
  /** The response could not be parsed as HTTP. */
  response_invalid: 'response_invalid',
  /** Any other failure after the request was written. */
  failed_after_send: 'failed_after_send',
} as const;
export type MaybeSentFailure = (typeof MaybeSentFailure)[keyof typeof MaybeSentFailure];

/** Every transport failure. */
export type TransportFailure = NotSentFailure | MaybeSentFailure;

/** The two error codes a `TransportError` can have. */
export const TransportErrorCode = {
  /** Nothing of the request left the process: sending again cannot duplicate it. */
  not_sent: 'transport_not_sent',
  /** The request may have reached the provider: verify before sending again. */
  outcome_unknown: 'transport_outcome_unknown',
} as const;
export type TransportErrorCode = (typeof TransportErrorCode)[keyof typeof TransportErrorCode];

const brand: unique symbol = Symbol.for('sideguard.transport-error');

/** Details of a transport failure. `errorCode` is the underlying error's code, if any. */
export type TransportErrorDetails =
  | { readonly sent: false; readonly failure: NotSentFailure; readonly errorCode?: string }
  | { readonly sent: true; readonly failure: MaybeSentFailure; readonly errorCode?: string };

/**
 * A request failed. `sent` is false only when the executor kit saw that no byte of the request
 * was written; in every other case it is true, even when the server probably never read it.
 */
export class TransportError extends SideguardError {
  override readonly code: TransportErrorCode;
  /** Whether any byte of the request may have left the process. */
  readonly sent: boolean;
  readonly failure: TransportFailure;
  readonly [brand] = true;

  constructor(
    target: string,
    details: TransportErrorDetails,
    options: { readonly cause?: unknown } = {},
  ) {
    const code = details.sent ? TransportErrorCode.outcome_unknown : TransportErrorCode.not_sent;
    const what = details.failure.replaceAll('_', ' ');
    const underlying = details.errorCode === undefined ? '' : ` (${details.errorCode})`;
    super(
      code,
      details.sent
        ? `Request ${target} failed after it was sent: ${what}${underlying}. The provider may have applied it; verify with the provider before sending it again.`
        : `Request ${target} was not sent: ${what}${underlying}. Nothing reached the provider; sending it again cannot duplicate it.`,
      {
        data: {
          sent: details.sent,
          failure: details.failure,
          ...(details.errorCode === undefined ? {} : { errorCode: details.errorCode }),
        },
        cause: options.cause,
      },
    );
    this.code = code;
    this.sent = details.sent;
    this.failure = details.failure;
  }
}

/** True for a `TransportError` from any copy of Sideguard (checked by brand, not `instanceof`). */
export function isTransportError(value: unknown): value is TransportError {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as { [brand]?: unknown })[brand] === true &&
    typeof (value as { failure?: unknown }).failure === 'string' &&
    typeof (value as { sent?: unknown }).sent === 'boolean'
  );
}

/**
 * Finds a `TransportError` in an error or the errors it wraps (`cause`, and `detail` as the
 * `stripe` client's `StripeConnectionError` uses), at most 8 levels deep.
 */
export function findTransportError(error: unknown): TransportError | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 8 && typeof current === 'object' && current !== null; depth++) {
    if (isTransportError(current)) return current;
    const { cause, detail } = current as { cause?: unknown; detail?: unknown };
    current = isTransportError(detail) ? detail : (cause ?? detail);
  }
  return undefined;
}
