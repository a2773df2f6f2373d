/**
 * Relays a forwarded answer's body from the upstream to the agent as it arrives, on Node's own
 * response object: exact bytes, the upstream's status, its returnable headers. The first chunk
 * waits until the upstream's current read is handled, so that a small answer still leaves in one
 * write with its length; larger or slower ones stream,
 * pausing the upstream while the agent's socket is full. If the agent goes away the upstream
 * request is dropped; if the upstream fails mid-body the agent's connection is closed (a status
 * was already sent, so a truncated answer must never look complete).
 */
import type { ServerResponse } from 'node:http';
import { NULL_BODY_STATUSES, returnableHeaders } from './http-guarded-answer.js';
import type { StreamedReply } from './upstream-transport.js';

/** The upstream's declared length, when it declared exactly one valid one. */
function declaredLength(headers: readonly (readonly [string, string])[]): number | undefined {
  let found: number | undefined;
  for (const [name, value] of headers) {
    if (name !== 'content-length') continue;
    if (found !== undefined || !/^\d+$/.test(value)) return undefined;
    found = Number(value);
  }
  return found !== undefined && Number.isSafeInteger(found) ? found : undefined;
}

/** Sends `reply` to `outgoing` (the gateway's `extra` headers on top of the upstream's). */
export function relayStreamed(
  reply: StreamedReply,
  outgoing: ServerResponse,
  method: string,
  extra: Readonly<Record<string, string>>,
): void {
  const headers = returnableHeaders(reply.headers, extra);
  const empty = method === 'HEAD' || NULL_BODY_STATUSES.has(reply.status);
  const declared = empty ? undefined : declaredLength(reply.headers);
  let held: Buffer | undefined;
  let started = false;
  const start = (length: number | undefined): void => {
    if (length !== undefined) headers['content-length'] = String(length);
    started = true;
    outgoing.writeHead(reply.status, headers);
  };
  const write = (chunk: Buffer): boolean => {
    const flowing = outgoing.write(chunk);
    if (!flowing) outgoing.once('drain', () => reply.resume());
    return flowing;
  };
  const fail = (): void => {
    reply.abort();
    outgoing.destroy();
  };
  // A held first chunk leaves once the upstream's current read is handled, with or without
  // more: a slow upstream's first bytes are never kept waiting for its next ones.
  const flushHeld = (): void => {
    if (started || held === undefined) return;
    const chunk = held;
    held = undefined;
    try {
      start(declared);
      write(chunk);
    } catch {
      fail();
    }
  };
  outgoing.once('close', () => {
    if (!outgoing.writableFinished) reply.abort();
  });
  if (outgoing.destroyed) {
    reply.abort();
    return;
  }
  reply.relay({
    data(chunk) {
      if (empty) return true;
      try {
        if (!started && held === undefined) {
          held = chunk;
          process.nextTick(flushHeld);
          return true;
        }
        if (!started) flushHeld();
        return write(chunk);
      } catch {
        fail();
        return false;
      }
    },
    end() {
      try {
        if (!started) start(empty ? undefined : (declared ?? held?.byteLength ?? 0));
        const chunk = held;
        held = undefined;
        if (chunk === undefined) outgoing.end();
        else outgoing.end(chunk);
      } catch {
        fail();
      }
    },
    error() {
      outgoing.destroy();
    },
  });
}
