/**
 * The executor kit's transport: HTTP requests for executors and verifiers that are sent at most
 * once. No retry of any kind (no redirect following, no re-dispatch, no resend after a stale
 * connection), a timeout per call covering connect to last body byte, the caller's AbortSignal,
 * and by default a fresh connection per call (`connection: close`), so a request is never
 * written onto a pooled socket the server is closing. Failures are `TransportError`s that say
 * whether anything was sent.
 */
import type { ConnectionOptions } from 'node:tls';
import type { Dispatcher } from 'undici';
import { SideguardError } from '../core/errors.js';
import { DispatchAttempt } from './dispatch-attempt.js';
import { createKitFetch, type KitFetch } from './kit-fetch.js';
import type { TransportRequest, TransportResponse } from './transport-types.js';
import { Agent } from './undici-agent.js';

/** How a transport behaves; every call may override `timeoutMs`. */
export interface ExecutorTransportConfig {
  /** The longest one call may take, from dispatch to the last body byte. @default 10_000 */
  readonly timeoutMs?: number;
  /** The longest DNS + TCP + TLS may take (a connect timeout is "not sent"). @default 5_000 */
  readonly connectTimeoutMs?: number;
  /** The largest response body read; a larger one fails as `response_too_large`. @default 8 MiB */
  readonly maxResponseBytes?: number;
  /**
   * Reuse connections between calls. Off by default: a request written onto a kept-alive socket
   * the server is just closing fails after the write, so its outcome becomes unknown for no
   * reason. @default false
   */
  readonly keepAlive?: boolean;
  /** TLS settings for `https:` (extra CAs, server name). */
  readonly tls?: Pick<ConnectionOptions, 'ca' | 'rejectUnauthorized' | 'servername'>;
}

/** A transport with its own connections. */
export interface ExecutorTransport {
  /** Sends one request; resolves with the complete response or rejects with a `TransportError`. */
  request(request: TransportRequest): Promise<TransportResponse>;
  /**
   * A WHATWG `fetch` over `request`: the body is read before it resolves, redirects are returned
   * rather than followed, and failures reject with a `TransportError`. Hand it to clients that
   * take a fetch function (`Stripe.createFetchHttpClient(transport.fetch)`).
   */
  readonly fetch: KitFetch;
  /** Ends every connection now; calls in flight fail ("not sent" or unknown, by phase). */
  close(): Promise<void>;
}

const METHODS: readonly string[] = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'];
/** Headers the transport owns: framing and connection handling are not the caller's to set. */
const OWNED_HEADERS = new Set(['connection', 'content-length', 'keep-alive', 'transfer-encoding']);

function invalid(message: string): SideguardError {
  return new SideguardError('transport_request_invalid', message);
}

function positive(value: number | undefined, fallback: number, name: string): number {
  const result = value ?? fallback;
  if (!Number.isSafeInteger(result) || result < 1) {
    throw invalid(`Executor transport: ${name} must be a positive integer, got ${String(value)}`);
  }
  return result;
}

function requestUrl(value: string | URL): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw invalid('Executor transport: the request URL is not an absolute URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw invalid(`Executor transport: only http: and https: URLs are sent, not ${url.protocol}`);
  }
  return url;
}

function ownHeaders(headers: Readonly<Record<string, string>> | undefined): Record<string, string> {
  const result: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers ?? {})) {
    if (!OWNED_HEADERS.has(name.toLowerCase())) result[name] = value;
  }
  return result;
}

/** Creates a transport with its own connection pool (undici `Agent`). */
export function createExecutorTransport(config: ExecutorTransportConfig = {}): ExecutorTransport {
  const timeoutMs = positive(config.timeoutMs, 10_000, 'timeoutMs');
  const connectTimeoutMs = positive(config.connectTimeoutMs, 5_000, 'connectTimeoutMs');
  const maxResponseBytes = positive(config.maxResponseBytes, 8 * 1024 * 1024, 'maxResponseBytes');
  const keepAlive = config.keepAlive ?? false;
  const agent = new Agent({
    connect: { timeout: connectTimeoutMs, ...config.tls },
    // 0: one request per connection, sent with `connection: close`; 1: reuse, never pipeline.
    pipelining: keepAlive ? 1 : 0,
    allowH2: false,
  });

  const request = (call: TransportRequest): Promise<TransportResponse> => {
    const url = requestUrl(call.url);
    const method = call.method ?? 'GET';
    if (!METHODS.includes(method))
      throw invalid(`Executor transport: unsupported method ${method}`);
    const callTimeoutMs = positive(call.timeoutMs, timeoutMs, 'timeoutMs');
    const attempt = new DispatchAttempt({
      target: `${method} ${url.origin}`,
      timeoutMs: callTimeoutMs,
      signal: call.signal,
      maxResponseBytes,
      ...(call.onSent === undefined ? {} : { onSent: call.onSent }),
    });
    if (!attempt.arm()) return attempt.done;
    const options: Dispatcher.DispatchOptions = {
      origin: url.origin,
      path: `${url.pathname}${url.search}`,
      method,
      headers: ownHeaders(call.headers),
      body: call.body ?? null,
      reset: !keepAlive,
      headersTimeout: callTimeoutMs,
      bodyTimeout: callTimeoutMs,
    };
    try {
      agent.dispatch(options, attempt);
    } catch (error) {
      attempt.refuse(error);
    }
    return attempt.done;
  };

  return {
    request,
    fetch: createKitFetch(request),
    close: () => agent.destroy(),
  };
}
