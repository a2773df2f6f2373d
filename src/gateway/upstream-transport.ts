/**
 * The gateway's own transport to HTTP upstreams: one request per call, the upstream's
 * credentials injected, a deadline, and no retries of any kind — the gateway, not an HTTP
 * client, decides what is ever sent again. Network failures are values that say whether the
 * request can have reached the upstream.
 */
import { Agent, request } from 'undici';
import type { UpstreamReply, UpstreamRequestSpec } from './config-types.js';

/** How to reach one upstream. */
export interface UpstreamTransportConfig {
  /** The upstream's base URL; a path in it prefixes every request path. */
  readonly baseUrl: string;
  /** Credentials and other headers added to every request (they win over the caller's). */
  readonly headers: Readonly<Record<string, string>>;
  /**
   * How long the upstream may take to send the response head, and at most between two chunks
   * of its body, in ms. (undici's own timers: far cheaper per request than an AbortSignal.)
   */
  readonly timeoutMs: number;
}

/** One raw request: what the door forwards, or what a binding's spec becomes. */
export interface RawUpstreamRequest {
  readonly method: string;
  /** Path relative to the base URL, still percent-encoded, starting with `/`. */
  readonly path: string;
  /** Raw query string without `?`, or `''`. */
  readonly search: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: Uint8Array | string;
}

/** Sends requests to one upstream. */
export interface UpstreamTransport {
  send(raw: RawUpstreamRequest): Promise<UpstreamReply>;
  /** Closes pooled connections. */
  close(): Promise<void>;
}

const NOT_SENT = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_CONNECT_TIMEOUT',
]);

/** Whether a failure proves the request never left (connect refused, DNS, connect timeout). */
function failureReason(error: unknown): 'not_sent' | 'timeout' | 'lost' {
  const codes: unknown[] = [];
  for (let cursor = error, depth = 0; cursor !== undefined && depth < 4; depth++) {
    const value = cursor as { code?: unknown; name?: unknown; cause?: unknown } | null;
    if (value === null || typeof value !== 'object') break;
    codes.push(value.code, value.name);
    cursor = value.cause;
  }
  if (codes.some((code) => typeof code === 'string' && NOT_SENT.has(code))) return 'not_sent';
  if (
    codes.some(
      (code) =>
        code === 'TimeoutError' ||
        code === 'AbortError' ||
        code === 'UND_ERR_HEADERS_TIMEOUT' ||
        code === 'UND_ERR_BODY_TIMEOUT',
    )
  ) {
    return 'timeout';
  }
  return 'lost';
}

function parseJson(body: Uint8Array): unknown {
  if (body.byteLength === 0) return undefined;
  try {
    return JSON.parse(Buffer.from(body).toString('utf8'));
  } catch {
    return undefined;
  }
}

/** Builds the reply value of a complete response. */
export function responseReply(
  status: number,
  headers: readonly (readonly [string, string])[],
  body: Uint8Array,
): UpstreamReply {
  let parsed: { value: unknown } | undefined;
  return {
    kind: 'response',
    status,
    headers,
    body,
    json: () => {
      parsed ??= { value: parseJson(body) };
      return parsed.value;
    },
  };
}

const headerPairs = (
  headers: Record<string, string | string[] | undefined>,
): [string, string][] => {
  const pairs: [string, string][] = [];
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    for (const item of Array.isArray(value) ? value : [value])
      pairs.push([name.toLowerCase(), item]);
  }
  return pairs;
};

/** A transport with its own connection pool. */
export function createUpstreamTransport(config: UpstreamTransportConfig): UpstreamTransport {
  const base = new URL(config.baseUrl);
  const basePath = base.pathname.replace(/\/+$/, '');
  const dispatcher = new Agent({ keepAliveTimeout: 4_000, pipelining: 1 });
  return {
    async send(raw) {
      const url = `${base.origin}${basePath}${raw.path}${raw.search === '' ? '' : `?${raw.search}`}`;
      try {
        const response = await request(url, {
          method: raw.method as 'GET',
          headers: { ...raw.headers, ...config.headers },
          ...(raw.body === undefined ? {} : { body: raw.body }),
          headersTimeout: config.timeoutMs,
          bodyTimeout: config.timeoutMs,
          dispatcher,
        });
        const body = new Uint8Array(await response.body.arrayBuffer());
        return responseReply(response.statusCode, headerPairs(response.headers), body);
      } catch (error) {
        return { kind: 'no_response', reason: failureReason(error) };
      }
    },
    close: () => dispatcher.close(),
  };
}

function encodeQuery(query: UpstreamRequestSpec['query']): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query ?? {})) {
    for (const item of typeof value === 'string' ? [value] : value) params.append(name, item);
  }
  return params.toString();
}

/** Turns a binding's request spec into a raw request (form or JSON body encoded). */
export function rawRequestOf(
  spec: UpstreamRequestSpec & { readonly method: string },
): RawUpstreamRequest {
  if (!spec.path.startsWith('/')) {
    throw new TypeError(
      `an upstream request path must start with "/", got ${JSON.stringify(spec.path)}`,
    );
  }
  const headers: Record<string, string> = { accept: 'application/json' };
  for (const [name, value] of Object.entries(spec.headers ?? {}))
    headers[name.toLowerCase()] = value;
  let body: string | undefined;
  if (spec.form !== undefined) {
    headers['content-type'] = 'application/x-www-form-urlencoded';
    body = new URLSearchParams(Object.entries(spec.form)).toString();
  } else if (spec.json !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(spec.json);
  }
  return {
    method: spec.method.toUpperCase(),
    path: spec.path,
    search: encodeQuery(spec.query),
    headers,
    ...(body === undefined ? {} : { body }),
  };
}
