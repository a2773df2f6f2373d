/**
 * The HTTP door's `forward` decision: the agent's request goes to the upstream through the
 * gateway's transport with the agent's credentials and hop-by-hop headers removed (the transport
 * injects the upstream's own). The buffered form answers with a web `Response`; the Node door
 * streams the body instead (`http-node-door.ts`). Both answer a missing upstream the same way.
 */
import type { GatewayRuntime } from './gateway-runtime.js';
import type { Answer, CheckedCall } from './http-door-call.js';
import { recordedResponse } from './http-guarded-answer.js';
import { problemResponse } from './http-problems.js';
import { forwardableHeaders } from './http-request-reader.js';
import { recordReplayCase, resourceKey } from './rehearsal-state.js';
import type { RawUpstreamRequest, UpstreamTransport } from './upstream-transport.js';

/** Headers the gateway adds to every forwarded answer. */
export const FORWARD_HEADERS: Readonly<Record<string, string>> = {
  'x-sideguard-decision': 'forward',
};

/** The transport of a call's upstream and the request to send on it. */
export function forwardRequest(
  runtime: GatewayRuntime,
  call: CheckedCall,
): { readonly transport: UpstreamTransport; readonly raw: RawUpstreamRequest } {
  const upstream = runtime.http.get(call.upstream);
  if (upstream === undefined) throw new Error(`no transport for ${call.upstream}`);
  return {
    transport: upstream.transport,
    raw: {
      method: call.method,
      path: call.rawPath,
      search: call.search,
      headers: forwardableHeaders(call.headers),
    },
  };
}

/** The answer when the upstream did not answer (502, or 504 after the deadline). */
export function noResponseAnswer(reason: 'not_sent' | 'timeout' | 'lost'): Answer {
  const timeout = reason === 'timeout';
  const code = timeout ? 'upstream_timeout' : 'upstream_unavailable';
  return {
    response: problemResponse(timeout ? 504 : 502, code, 'The upstream did not answer.', {
      decision: 'forward',
      hint: 'Retry later.',
      retryAfterSeconds: 1,
    }),
    code,
  };
}

/** Forwards and reads the whole answer (kept as a replay case when recording). */
export async function bufferedForward(runtime: GatewayRuntime, call: CheckedCall): Promise<Answer> {
  const { transport, raw } = forwardRequest(runtime, call);
  const reply = await transport.send(raw);
  if (reply.kind === 'no_response') return noResponseAnswer(reply.reason);
  if (runtime.recordSession !== undefined) {
    await recordReplayCase(
      runtime.state,
      runtime.keyRing,
      runtime.recordSession,
      {
        upstream: call.upstream,
        method: call.method,
        resource: resourceKey(call.segments, call.pairs),
        response: reply,
      },
      runtime.now(),
    );
  }
  return { response: recordedResponse(reply, FORWARD_HEADERS, call.method), code: 'forwarded' };
}
