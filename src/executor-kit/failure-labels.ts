/**
 * Names what went wrong, given the phase it happened in. The phase (was the request written?)
 * decides "not sent" versus "maybe sent"; the error's code only picks the label within a phase,
 * because the same code (`ECONNRESET`) can happen during the TLS handshake or after the write.
 */
import { MaybeSentFailure, NotSentFailure } from './transport-failure.js';

const SAFE_CODE = /^[A-Za-z0-9_.-]{1,48}$/;

/** The underlying error's `code` (or its first inner error's), when it is a short safe token. */
export function errorCodeOf(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const { code, errors } = error as { code?: unknown; errors?: unknown };
  if (typeof code === 'string' && SAFE_CODE.test(code)) return code;
  // Happy-eyeballs connects fail with an AggregateError holding one error per address.
  if (Array.isArray(errors)) return errorCodeOf(errors[0]);
  return undefined;
}

const DNS_CODES = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_NONAME', 'EAI_FAIL', 'EAI_NODATA']);
const TLS_CODES = new Set([
  'EPROTO',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'HOSTNAME_MISMATCH',
]);

/** Labels a failure that happened before any byte of the request was written. */
export function notSentFailure(error: unknown): NotSentFailure {
  const code = errorCodeOf(error);
  if (code === undefined) return NotSentFailure.connect_failed;
  if (code === 'ECONNREFUSED') return NotSentFailure.connection_refused;
  if (DNS_CODES.has(code)) return NotSentFailure.dns_failure;
  if (TLS_CODES.has(code) || code.startsWith('ERR_TLS_') || code.startsWith('ERR_SSL_')) {
    return NotSentFailure.tls_failure;
  }
  if (code === 'UND_ERR_CONNECT_TIMEOUT') return NotSentFailure.connect_timeout;
  if (code === 'UND_ERR_INVALID_ARG' || code === 'UND_ERR_NOT_SUPPORTED') {
    return NotSentFailure.request_invalid;
  }
  return NotSentFailure.connect_failed;
}

/** Labels a failure that happened after the request was handed to the socket. */
export function maybeSentFailure(error: unknown): MaybeSentFailure {
  const code = errorCodeOf(error);
  if (code === 'ECONNRESET' || code === 'EPIPE') return MaybeSentFailure.connection_reset;
  if (code === 'UND_ERR_SOCKET' || code === 'UND_ERR_CLOSED') {
    return MaybeSentFailure.connection_closed;
  }
  if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') {
    return MaybeSentFailure.timeout;
  }
  const parserError = (error as { name?: unknown } | null)?.name === 'HTTPParserError';
  if (parserError || code?.startsWith('HPE_') || code === 'UND_ERR_RES_CONTENT_LENGTH_MISMATCH') {
    return MaybeSentFailure.response_invalid;
  }
  return MaybeSentFailure.failed_after_send;
}
