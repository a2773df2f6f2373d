/**
 * Reads what the HTTP door needs from an agent's request, refusing what the gateway will not
 * handle before anything else happens: reserved `x-sideguard-*` headers (400), bodies over the
 * limit (413, read no further than the limit), unparsable bodies (400), unsafe paths (400).
 */
import { parseForm } from '../sandbox/form-encoding.js';
import type { BoundHttpRequest } from './config-types.js';
import { forwardableRequestHeader, RESERVED_HEADER_PREFIX } from './header-policy.js';

/** A request refused before any decision. */
export interface RequestRefusal {
  readonly status: 400 | 413 | 415;
  readonly code: string;
  readonly detail: string;
  readonly hint: string;
}

/**
 * A request's headers as the door reads them, whichever server received the request: lower-case
 * names, a repeated header's values joined with `", "` (as the web `Headers` class joins them).
 */
export type RequestHeaders = Readonly<Record<string, string>>;

/** The door's view of web `Headers`. */
export function headersOfWeb(headers: Headers): RequestHeaders {
  const record: Record<string, string> = Object.create(null);
  for (const [name, value] of headers) record[name] = value;
  return record;
}

/** The door's view of a Node request's `rawHeaders` (`[name, value, name, value, …]`). */
export function headersOfNode(rawHeaders: readonly string[]): RequestHeaders {
  const record: Record<string, string> = Object.create(null);
  for (let index = 0; index + 1 < rawHeaders.length; index += 2) {
    const name = (rawHeaders[index] as string).toLowerCase();
    const value = rawHeaders[index + 1] as string;
    const existing = record[name];
    record[name] = existing === undefined ? value : `${existing}, ${value}`;
  }
  return record;
}

/** The first reserved header a request carries, if any. */
export function reservedHeader(headers: RequestHeaders): string | undefined {
  for (const name in headers) if (name.startsWith(RESERVED_HEADER_PREFIX)) return name;
  return undefined;
}

/** The refusal of a body over the limit. */
export const bodyTooLarge = (limitBytes: number): RequestRefusal => ({
  status: 413,
  code: 'body_too_large',
  detail: `The request body is larger than the gateway's limit of ${limitBytes} bytes.`,
  hint: 'Send a smaller body; nothing was forwarded.',
});

/** Reads a Node request's body, never more than `limitBytes` (+1 to know it is over). */
export function readIncomingWithin(
  incoming: NodeJS.ReadableStream & { readonly headers: Record<string, unknown> },
  limitBytes: number,
): Promise<Uint8Array | RequestRefusal> {
  const declared = Number(incoming.headers['content-length'] ?? '0');
  if (Number.isFinite(declared) && declared > limitBytes) {
    return Promise.resolve(bodyTooLarge(limitBytes));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.byteLength;
      if (size > limitBytes) {
        incoming.off('data', onData);
        incoming.pause();
        resolve(bodyTooLarge(limitBytes));
        return;
      }
      chunks.push(chunk);
    };
    incoming.on('data', onData);
    incoming.once('end', () =>
      resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks)),
    );
    incoming.once('error', reject);
  });
}

/** Reads a web request's body, never more than `limitBytes` (+1 to know it is over). */
export async function readBodyWithin(
  request: Request,
  limitBytes: number,
): Promise<Uint8Array | RequestRefusal> {
  const tooLarge = bodyTooLarge(limitBytes);
  const declared = Number(request.headers.get('content-length') ?? '0');
  if (Number.isFinite(declared) && declared > limitBytes) return tooLarge;
  if (request.body === null) return new Uint8Array();
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limitBytes) {
      await reader.cancel().catch(() => {});
      return tooLarge;
    }
    chunks.push(value);
  }
  return chunks.length === 1 ? (chunks[0] as Uint8Array) : Buffer.concat(chunks);
}

const formToObject = (text: string): unknown => {
  const parsed = parseForm(text);
  if (parsed.kind === 'malformed') return undefined;
  // No prototype: a field named `__proto__` must stay a field.
  const result: Record<string, unknown> = Object.create(null);
  for (const [name, value] of parsed.fields) {
    result[name] = value instanceof Map ? Object.fromEntries(value) : value;
  }
  return result;
};

/** A parsed body, or why it cannot be read. */
export type ParsedBody =
  | { readonly kind: 'parsed'; readonly value: unknown }
  | ({ readonly kind: 'refused' } & RequestRefusal);

/** Parses a JSON or form body (`undefined` when empty). */
export function parseBody(contentType: string, body: Uint8Array): ParsedBody {
  if (body.byteLength === 0) return { kind: 'parsed', value: undefined };
  const text = Buffer.from(body).toString('utf8');
  const type = contentType.split(';')[0]?.trim().toLowerCase() ?? '';
  if (type === 'application/x-www-form-urlencoded') {
    const form = formToObject(text);
    if (form !== undefined) return { kind: 'parsed', value: form };
    return {
      kind: 'refused',
      status: 400,
      code: 'body_invalid',
      detail: 'The form body is malformed (bad percent-encoding or mixed shapes of one field).',
      hint: 'Send a well-formed application/x-www-form-urlencoded body.',
    };
  }
  if (type === 'application/json' || type.endsWith('+json')) {
    try {
      return { kind: 'parsed', value: JSON.parse(text) as unknown };
    } catch {
      return {
        kind: 'refused',
        status: 400,
        code: 'body_invalid',
        detail: 'The JSON body does not parse.',
        hint: 'Send valid JSON.',
      };
    }
  }
  return {
    kind: 'refused',
    status: 415,
    code: 'body_type_unsupported',
    detail: `A bound write takes JSON or a form body, not ${type || 'an untyped body'}.`,
    hint: 'Send Content-Type: application/json or application/x-www-form-urlencoded.',
  };
}

/** Request headers a binding may see, or that may be forwarded: no credentials or hop-by-hop. */
export function forwardableHeaders(headers: RequestHeaders): Record<string, string> {
  const result: Record<string, string> = {};
  for (const name in headers) {
    if (forwardableRequestHeader(name)) result[name] = headers[name] as string;
  }
  return result;
}

/** What a binding's `toInput` sees. */
export function boundRequestOf(options: {
  readonly method: string;
  readonly path: string;
  readonly params: Readonly<Record<string, string>>;
  readonly pairs: readonly (readonly [string, string])[];
  readonly body: unknown;
  readonly headers: RequestHeaders;
}): BoundHttpRequest {
  const query: Record<string, string | string[]> = {};
  for (const [name, value] of options.pairs) {
    const existing = query[name];
    if (existing === undefined) query[name] = value;
    else if (Array.isArray(existing)) existing.push(value);
    else query[name] = [existing, value];
  }
  return {
    method: options.method,
    path: options.path,
    params: options.params,
    query,
    body: options.body,
    headers: forwardableHeaders(options.headers),
  };
}
