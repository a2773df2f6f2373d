/**
 * `sideguard/executor-kit`: a transport for executors and verifiers that sends each request at
 * most once and says whether anything was sent, plus the classification of what happened into
 * the guard's results (`failed_known` when nothing reached the provider or the provider refused
 * the write; `failed_unknown` otherwise). See docs/executor-kit.md.
 */
export {
  createExecutorTransport,
  type ExecutorTransport,
  type ExecutorTransportConfig,
} from './executor-transport.js';
export {
  type ClassifyHttpOptions,
  classifyHttpStatus,
  type ExecutionFailure,
  genericHttpRules,
  type HttpOutcome,
  type HttpOutcomeRules,
  httpReason,
  RateLimitReading,
  reasonToken,
} from './http-outcome.js';
export type { KitFetch } from './kit-fetch.js';
export {
  findTransportError,
  isTransportError,
  MaybeSentFailure,
  NotSentFailure,
  TransportError,
  TransportErrorCode,
  type TransportErrorDetails,
  type TransportFailure,
} from './transport-failure.js';
export type { TransportMethod, TransportRequest, TransportResponse } from './transport-types.js';
export {
  classifyTransportError,
  type SendWriteOptions,
  sendWrite,
  type WriteOutcome,
} from './write-outcome.js';
