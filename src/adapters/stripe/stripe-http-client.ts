/**
 * An HTTP client for the official `stripe` package built on the executor kit's transport: one
 * request per attempt, no keep-alive surprises, failures that say whether anything was sent, and
 * (inside a guarded call) at most one write per call. `stripeClientSettings` is the safe client
 * configuration: this client, `maxNetworkRetries: 0`, and a finite timeout.
 */
import type Stripe from 'stripe';
import type { ExecutorTransport } from '../../executor-kit/executor-transport.js';
import { reasonToken } from '../../executor-kit/http-outcome.js';
import { findTransportError, TransportError } from '../../executor-kit/transport-failure.js';
import type { TransportMethod, TransportResponse } from '../../executor-kit/transport-types.js';
import { currentStripeScope, type StripeCallScope } from './stripe-call-scope.js';

const kitClients = new WeakSet<object>();

/** True when `client` was made by `createStripeHttpClient` (of this copy of Sideguard). */
export function isKitStripeHttpClient(client: unknown): boolean {
  return typeof client === 'object' && client !== null && kitClients.has(client);
}

/** Stripe's error code from an error body: `error.code`, else `error.type`, as a safe token. */
export function stripeErrorCode(body: unknown): string | undefined {
  const error = (body as { error?: { code?: unknown; type?: unknown } } | null)?.error;
  return reasonToken(error?.code) ?? reasonToken(error?.type);
}

function errorCodeOf(response: TransportResponse): string | undefined {
  if (response.status < 300) return undefined;
  try {
    return stripeErrorCode(response.json());
  } catch {
    return undefined;
  }
}

class KitStripeResponse implements Stripe.HttpClientResponse {
  readonly #response: TransportResponse;

  constructor(response: TransportResponse) {
    this.#response = response;
  }
  getStatusCode(): number {
    return this.#response.status;
  }
  getHeaders(): Record<string, string> {
    return { ...this.#response.headers };
  }
  getRawResponse(): TransportResponse {
    return this.#response;
  }
  toStream(streamCompleteCallback: () => void): ReadableStream<Uint8Array> {
    streamCompleteCallback();
    return new Response(this.#response.body).body as ReadableStream<Uint8Array>;
  }
  async toJSON(): Promise<unknown> {
    const text = this.#response.text();
    try {
      return JSON.parse(text) as unknown;
    } catch (error) {
      // The `stripe` client reads `rawBody` to report an unparsable answer.
      if (error instanceof Error) Object.assign(error, { rawBody: text });
      throw error;
    }
  }
}

const isWrite = (method: string): boolean => method !== 'GET' && method !== 'HEAD';

function refuseRetry(scope: StripeCallScope, method: string, target: string): TransportError {
  scope.attempts.push({ kind: 'transport', method, sent: false, failure: 'retry_refused' });
  return new TransportError(target, { sent: false, failure: 'retry_refused' });
}

function recordFailure(scope: StripeCallScope | undefined, method: string, error: unknown): void {
  const found = findTransportError(error);
  scope?.attempts.push(
    found === undefined
      ? { kind: 'transport', method, sent: true, failure: 'unclassified' }
      : { kind: 'transport', method, sent: found.sent, failure: found.failure },
  );
}

/** A `stripe` HTTP client that sends through `transport` (see the module comment). */
export function createStripeHttpClient(transport: ExecutorTransport): Stripe.HttpClient {
  const client: Stripe.HttpClient = {
    getClientName: () => 'sideguard-executor-kit',
    async makeRequest(host, port, path, method, headers, requestData, protocol, timeout) {
      const origin = `${protocol === 'http' ? 'http' : 'https'}://${host}:${port}`;
      const scope = currentStripeScope();
      if (scope !== undefined && isWrite(method) && ++scope.writes > 1) {
        throw refuseRetry(scope, method, `${method} ${origin}`);
      }
      try {
        const response = await transport.request({
          url: `${origin}${path}`,
          method: method as TransportMethod,
          headers: Object.fromEntries(
            Object.entries(headers).map(([name, value]) => [name, String(value)]),
          ),
          ...(requestData ? { body: requestData } : {}),
          timeoutMs: timeout,
          ...(scope?.signal === undefined ? {} : { signal: scope.signal }),
        });
        const errorCode = errorCodeOf(response);
        scope?.attempts.push({
          kind: 'response',
          method,
          status: response.status,
          headers: response.headers,
          ...(errorCode === undefined ? {} : { errorCode }),
        });
        return new KitStripeResponse(response);
      } catch (error) {
        recordFailure(scope, method, error);
        throw error;
      }
    },
  };
  kitClients.add(client);
  return client;
}

/** Options of `stripeClientSettings`. */
export interface StripeClientSettingsOptions {
  /** The longest one request may take (Stripe's `timeout`). @default 10_000 */
  readonly timeoutMs?: number;
}

/**
 * The safe settings to spread into `new Stripe(key, { ...stripeClientSettings(transport) })`:
 * the kit's HTTP client, `maxNetworkRetries: 0`, and `timeout`.
 */
export function stripeClientSettings(
  transport: ExecutorTransport,
  options: StripeClientSettingsOptions = {},
): { httpClient: Stripe.HttpClient; maxNetworkRetries: 0; timeout: number } {
  return {
    httpClient: createStripeHttpClient(transport),
    maxNetworkRetries: 0,
    timeout: options.timeoutMs ?? 10_000,
  };
}
