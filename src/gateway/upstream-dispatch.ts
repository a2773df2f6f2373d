/**
 * The two ways the gateway's transport reads an upstream's answer over undici's dispatch API
 * (no URL parsing, web streams or body objects per request): buffered whole — what guarded writes
 * keep and replay — or streamed to a sink once the head arrived — what forwarded reads relay.
 * Network failures become values that say whether the request can have reached the upstream.
 */
import type { Dispatcher } from 'undici';
import type { UpstreamReply } from './config-types.js';

/** Why no (complete) response came: see `UpstreamReply`'s `no_response`. */
export type NoResponseReason = 'not_sent' | 'timeout' | 'lost';

const NOT_SENT = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_CONNECT_TIMEOUT',
]);

const TIMEOUT = new Set([
  'TimeoutError',
  'AbortError',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
]);

/** Whether a failure proves the request never left (connect refused, DNS, connect timeout). */
export function failureReason(error: unknown): NoResponseReason {
  const codes: unknown[] = [];
  for (let cursor = error, depth = 0; cursor !== undefined && depth < 4; depth++) {
    const value = cursor as { code?: unknown; name?: unknown; cause?: unknown } | null;
    if (value === null || typeof value !== 'object') break;
    codes.push(value.code, value.name);
    cursor = value.cause;
  }
  if (codes.some((code) => typeof code === 'string' && NOT_SENT.has(code))) return 'not_sent';
  if (codes.some((code) => typeof code === 'string' && TIMEOUT.has(code))) return 'timeout';
  return 'lost';
}

/** Response headers as lower-case pairs in arrival order (undici lower-cases the names). */
export function headerPairs(
  headers: Record<string, string | string[] | undefined>,
): [string, string][] {
  const pairs: [string, string][] = [];
  for (const name in headers) {
    const value = headers[name];
    if (value === undefined) continue;
    if (typeof value === 'string') pairs.push([name, value]);
    else for (const item of value) pairs.push([name, item]);
  }
  return pairs;
}

type Controller = Dispatcher.DispatchController;
type Headers = Record<string, string | string[] | undefined>;

/** Reads a whole response into memory, then calls `done` once with the reply. */
export function bufferedHandler(
  done: (reply: UpstreamReply) => void,
  complete: (status: number, headers: [string, string][], body: Uint8Array) => UpstreamReply,
): Dispatcher.DispatchHandler {
  let status = 0;
  let headers: [string, string][] = [];
  const chunks: Buffer[] = [];
  return {
    // Its presence is what tells undici this handler speaks the controller API.
    onRequestStart() {},
    onResponseStart(_controller: Controller, statusCode: number, raw: Headers) {
      // 1xx heads (e.g. 100 Continue) come before the final one.
      if (statusCode < 200) return;
      status = statusCode;
      headers = headerPairs(raw);
    },
    onResponseData(_controller: Controller, chunk: Buffer) {
      chunks.push(chunk);
    },
    onResponseEnd() {
      const body = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
      done(complete(status, headers, body));
    },
    onResponseError(_controller: Controller, error: Error) {
      done({ kind: 'no_response', reason: failureReason(error) });
    },
  };
}

/** Where a streamed body goes. */
export interface BodySink {
  /** One chunk; `false` asks the transport to pause until `StreamedReply.resume()`. */
  data(chunk: Buffer): boolean;
  end(): void;
  /** The upstream failed after its head: the body is incomplete. */
  error(reason: NoResponseReason): void;
}

/** An upstream answer whose head arrived and whose body is still coming. */
export interface StreamedReply {
  readonly kind: 'streamed';
  readonly status: number;
  /** Lower-case header names, in arrival order. */
  readonly headers: readonly (readonly [string, string])[];
  /** Starts delivering the body to `sink` (chunks that came early first). Call once. */
  relay(sink: BodySink): void;
  /** Continues after `sink.data` returned false. */
  resume(): void;
  /** Stops reading and drops the upstream connection (the agent went away). Idempotent. */
  abort(): void;
}

/** What opening a streamed request gives: its head, or why none came. */
export type OpenedReply =
  | StreamedReply
  | { readonly kind: 'no_response'; readonly reason: NoResponseReason };

/**
 * How much body may arrive before `relay` is called, in bytes, before the upstream is paused. A
 * small answer's body usually comes in the same read as its head: keeping it costs less CPU than
 * pausing the parser (which pushes the unread bytes back onto the socket and parses them again).
 */
export const EARLY_BODY_LIMIT_BYTES = 64 * 1024;

/** Calls `opened` once the head arrived (or failed); the body waits for `relay`. */
export function streamedHandler(opened: (reply: OpenedReply) => void): Dispatcher.DispatchHandler {
  let controller: Controller | undefined;
  let sink: BodySink | undefined;
  let early: Buffer[] = [];
  let earlyBytes = 0;
  let ended = false;
  let failure: NoResponseReason | undefined;
  let headSeen = false;
  let finished = false;
  const finish = (): void => {
    if (sink === undefined || finished) return;
    if (failure !== undefined) {
      finished = true;
      sink.error(failure);
    } else if (ended) {
      finished = true;
      sink.end();
    }
  };
  const reply = (status: number, headers: [string, string][]): StreamedReply => ({
    kind: 'streamed',
    status,
    headers,
    relay(target) {
      sink = target;
      const queued = early;
      early = [];
      let flowing = true;
      for (const chunk of queued) flowing = target.data(chunk) && flowing;
      finish();
      if (finished) return;
      // Read on only while the sink keeps up (it calls `resume` once it drained).
      if (flowing) controller?.resume();
      else controller?.pause();
    },
    resume: () => controller?.resume(),
    abort() {
      if (ended || failure !== undefined) return;
      failure = 'lost';
      finished = true;
      controller?.abort(new Error('the agent closed the connection'));
    },
  });
  return {
    onRequestStart(started: Controller) {
      controller = started;
    },
    onResponseStart(_controller: Controller, statusCode: number, raw: Headers) {
      if (statusCode < 200) return;
      headSeen = true;
      opened(reply(statusCode, headerPairs(raw)));
    },
    onResponseData(started: Controller, chunk: Buffer) {
      if (sink === undefined) {
        // Nothing reads the body until the door relays it: past the limit, hold the socket.
        early.push(chunk);
        earlyBytes += chunk.byteLength;
        if (earlyBytes >= EARLY_BODY_LIMIT_BYTES) started.pause();
        return;
      }
      if (!sink.data(chunk)) started.pause();
    },
    onResponseEnd() {
      ended = true;
      finish();
    },
    onResponseError(_controller: Controller, error: Error) {
      const reason = failureReason(error);
      if (!headSeen) {
        opened({ kind: 'no_response', reason });
        return;
      }
      if (failure === undefined) failure = reason;
      finish();
    },
  };
}
