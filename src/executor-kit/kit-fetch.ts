/**
 * A WHATWG `fetch` on top of the executor transport, for clients that take a fetch function.
 * The request body is encoded by the platform's `Request` (so strings, URLSearchParams, Blobs
 * and FormData get their usual content types), then sent once by the transport.
 */
import type { TransportMethod, TransportRequest, TransportResponse } from './transport-types.js';

/** The `fetch` signature the kit offers. */
export type KitFetch = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/** Statuses whose response must have a null body. */
const NULL_BODY_STATUSES = new Set([204, 205, 304]);

function toResponse(response: TransportResponse): Response {
  const body = NULL_BODY_STATUSES.has(response.status) ? null : response.body;
  return new Response(body, { status: response.status, headers: response.headers });
}

/** Wraps `request` as a fetch function. */
export function createKitFetch(
  request: (call: TransportRequest) => Promise<TransportResponse>,
): KitFetch {
  return async (input, init = {}) => {
    const signal = init.signal ?? (input instanceof Request ? input.signal : undefined);
    const { signal: _ignored, ...rest } = init;
    // Encodes the body and its content type; nothing is sent here.
    const prepared = new Request(input, { ...rest, duplex: 'half' } as RequestInit);
    const bytes = prepared.body === null ? undefined : new Uint8Array(await prepared.arrayBuffer());
    const response = await request({
      url: prepared.url,
      method: prepared.method as TransportMethod,
      headers: Object.fromEntries(prepared.headers),
      ...(bytes === undefined ? {} : { body: bytes }),
      ...(signal ? { signal } : {}),
    });
    return toResponse(response);
  };
}
