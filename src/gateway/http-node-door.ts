/**
 * The HTTP door on Node's own `http` server, for the addresses where agents reach upstreams
 * (an upstream's port, or its prefix on the main port): the same checks, decision, answers and
 * decision event as every door (`runHttpDoor`), without turning each request into a web
 * `Request` and each answer into a web `Response`, and with a forwarded read's body streamed
 * through instead of buffered. See decision 110.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { GatewayRuntime } from './gateway-runtime.js';
import { runHttpDoor } from './http-door.js';
import type { Answer, CheckedCall, DoorRequest } from './http-door-call.js';
import {
  bufferedForward,
  FORWARD_HEADERS,
  forwardRequest,
  noResponseAnswer,
} from './http-forward.js';
import { relayStreamed } from './http-node-relay.js';
import { headersOfNode, readIncomingWithin } from './http-request-reader.js';
import type { StreamedReply } from './upstream-transport.js';

/** Forwards and answers at the upstream's head; the body is relayed once the event is recorded. */
async function streamedForward(
  runtime: GatewayRuntime,
  call: CheckedCall,
): Promise<Answer<StreamedReply | Response>> {
  // Recording keeps the whole answer as a replay case: it needs the body in hand.
  if (runtime.recordSession !== undefined) return bufferedForward(runtime, call);
  const { transport, raw } = forwardRequest(runtime, call);
  const opened = await transport.open(raw);
  if (opened.kind === 'no_response') return noResponseAnswer(opened.reason);
  return { response: opened, code: 'forwarded' };
}

const isStreamed = (reply: StreamedReply | Response): reply is StreamedReply =>
  (reply as { kind?: unknown }).kind === 'streamed';

/** Writes a web `Response` the door built (a refusal, a guarded answer, a replay). */
async function sendResponse(outgoing: ServerResponse, response: Response): Promise<void> {
  const body = response.body === null ? undefined : Buffer.from(await response.arrayBuffer());
  const headers: Record<string, string> = {};
  for (const [name, value] of response.headers) headers[name] = value;
  if (body !== undefined) headers['content-length'] = String(body.byteLength);
  outgoing.writeHead(response.status, headers);
  if (body === undefined) outgoing.end();
  else outgoing.end(body);
}

/**
 * Handles one request to `upstream`; `target` is the raw target relative to its mount. Never
 * rejects: a failure to write the answer closes the agent's connection.
 */
export async function serveNodeCall(
  runtime: GatewayRuntime,
  upstream: string,
  target: string,
  incoming: IncomingMessage,
  outgoing: ServerResponse,
): Promise<void> {
  const method = incoming.method ?? 'GET';
  const request: DoorRequest = {
    upstream,
    method,
    target,
    headers: headersOfNode(incoming.rawHeaders),
    readBody: (limit) => readIncomingWithin(incoming, limit),
  };
  let opened: StreamedReply | undefined;
  const reply = await runHttpDoor(runtime, request, async (current, call) => {
    const answer = await streamedForward(current, call);
    if (isStreamed(answer.response)) opened = answer.response;
    return answer;
  });
  const streamed = isStreamed(reply) ? reply : undefined;
  // The door failed after the upstream answered (its 500 replaces the answer): let go of it.
  if (streamed === undefined) opened?.abort();
  try {
    if (streamed === undefined) await sendResponse(outgoing, reply as Response);
    else relayStreamed(streamed, outgoing, method.toUpperCase(), FORWARD_HEADERS);
  } catch {
    streamed?.abort();
    outgoing.destroy();
  }
}
