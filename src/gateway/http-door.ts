/**
 * The HTTP front door: an agent's request to an upstream's address on the gateway is checked
 * (reserved headers, size, path), its agent identified, the one decision function consulted, and
 * the decision carried out — forwarded, guarded, replayed, shadowed, or refused with a code and
 * a hint. Thin: decisions live in `decide-call.ts`, guarded writes in `guarded-call.ts`.
 */
import { keyedDigest } from '../core/commitment.js';
import { KeyPurpose } from '../core/key-ring.js';
import { authenticateAgent, presentedKey } from './agent-identity.js';
import { type Decision, decideCall, matchCall, stateNeeded } from './decide-call.js';
import { gatewayDecisionEvent } from './decision-event.js';
import { endDecisionSpan, type GatewayDecisionEvent, startDecisionSpan } from './decision-log.js';
import type { GatewayRuntime } from './gateway-runtime.js';
import type { Answer, CheckedCall, DoorReply, DoorRequest } from './http-door-call.js';
import { boundWrite } from './http-door-writes.js';
import { bufferedForward } from './http-forward.js';
import { recordedResponse } from './http-guarded-answer.js';
import { problemResponse, REFUSAL_STATUS } from './http-problems.js';
import {
  headersOfWeb,
  type RequestRefusal,
  readBodyWithin,
  reservedHeader,
} from './http-request-reader.js';
import { latestShadowedWrite, resourceKey } from './rehearsal-state.js';
import { isReadMethod, queryPairs, splitPath } from './route-pattern.js';

/** One agent request addressed to an upstream, as a web `Request`. */
export interface HttpCall {
  readonly upstream: string;
  readonly request: Request;
  /** The raw target relative to the upstream's mount: `/v1/refunds?limit=3`, still encoded. */
  readonly target: string;
  /**
   * Reads the body, never more than `limitBytes + 1` bytes. @default reading `request.body`
   * (the server passes a reader over the Node request, which avoids building a web stream)
   */
  readonly readBody?: (limitBytes: number) => Promise<Uint8Array | RequestRefusal>;
}

/**
 * How a server carries out a `forward` decision: buffered into a `Response`
 * ({@link bufferedForward}), or streamed by the Node door. Every other decision is answered the
 * same way for every server.
 */
export type Forwarder<R extends DoorReply> = (
  runtime: GatewayRuntime,
  call: CheckedCall,
) => Promise<Answer<R | Response>>;

/** Handles one web request. Never throws: a gateway fault is a 500 problem with no details. */
export function handleHttpCall(runtime: GatewayRuntime, call: HttpCall): Promise<Response> {
  const { request } = call;
  const door: DoorRequest = {
    upstream: call.upstream,
    method: request.method,
    target: call.target,
    headers: headersOfWeb(request.headers),
    readBody: call.readBody ?? ((limit) => readBodyWithin(request, limit)),
  };
  return runHttpDoor(runtime, door, bufferedForward);
}

/**
 * Runs one request through the door: check, identify, decide, answer, and record the decision
 * event before the answer is returned. Never throws: a gateway fault is a 500 problem.
 */
export async function runHttpDoor<R extends DoorReply>(
  runtime: GatewayRuntime,
  request: DoorRequest,
  forward: Forwarder<R>,
): Promise<R | Response> {
  const span = startDecisionSpan('http');
  try {
    const checked = await checkCall(runtime, request);
    if (checked instanceof Response) {
      span.setAttribute('http.response.status_code', checked.status);
      span.end();
      return checked;
    }
    const decision = await decide(runtime, checked);
    const answer =
      decision.kind === 'forward'
        ? await forward(runtime, checked)
        : await answerDecision(runtime, checked, decision);
    const event = decisionEvent(runtime, checked, decision, answer);
    // Waits only when the decision log is full (back-pressure, decision 070).
    await runtime.decisions.record(event);
    endDecisionSpan(span, event);
    return answer.response;
  } catch (error) {
    span.recordException(error as Error);
    span.end();
    process.stderr.write(`sideguard gateway: ${(error as Error).stack ?? String(error)}\n`);
    return problemResponse(500, 'gateway_error', 'The gateway failed while handling the request.', {
      hint: 'Retry later; if it persists, tell the operator (the gateway logged the error).',
    });
  }
}

async function checkCall(
  runtime: GatewayRuntime,
  call: DoorRequest,
): Promise<CheckedCall | Response> {
  const reserved = reservedHeader(call.headers);
  if (reserved !== undefined) {
    return problemResponse(
      400,
      'reserved_header',
      `The header ${reserved} is reserved for the gateway.`,
      {
        hint: 'Remove every x-sideguard-* header from the request; nothing was forwarded.',
      },
    );
  }
  const question = call.target.indexOf('?');
  const rawPath = question === -1 ? call.target : call.target.slice(0, question);
  const search = question === -1 ? '' : call.target.slice(question + 1);
  const split = splitPath(rawPath === '' ? '/' : rawPath);
  const pairs = queryPairs(search);
  if (split.kind === 'invalid' || pairs === undefined) {
    return problemResponse(
      400,
      'path_invalid',
      `The request target is refused: ${split.kind === 'invalid' ? split.message : 'the query has invalid percent-encoding'}.`,
      {
        hint: 'Send a plain path without dot segments, empty segments or encoded slashes.',
      },
    );
  }
  const method = call.method.toUpperCase();
  const limit = runtime.table.server.bodyLimitBytes;
  // Reads carry no body the gateway would use or forward: it is never read.
  const body = isReadMethod(method) ? new Uint8Array() : await call.readBody(limit);
  if (!(body instanceof Uint8Array)) {
    return problemResponse(body.status, body.code, body.detail, { hint: body.hint });
  }
  return {
    upstream: call.upstream,
    headers: call.headers,
    method,
    rawPath: rawPath === '' ? '/' : rawPath,
    search,
    segments: split.segments,
    pairs,
    body,
    identity: authenticateAgent(runtime.table.agents, presentedKey(call.headers.authorization)),
  };
}

async function decide(runtime: GatewayRuntime, call: CheckedCall): Promise<Decision> {
  const subject = {
    kind: 'http',
    upstream: call.upstream,
    method: call.method,
    segments: call.segments,
  } as const;
  if (call.identity.kind !== 'agent') return decideCall(runtime.table, call.identity, subject);
  const needed = stateNeeded(runtime.table, subject, matchCall(runtime.table, subject));
  if (!needed.shadow && !needed.replay) return decideCall(runtime.table, call.identity, subject);
  const resource = resourceKey(call.segments, call.pairs);
  const shadowHit =
    needed.shadow &&
    (await runtime.state.latestShadowWrite(call.identity.agent.tenant, call.upstream, resource)) !==
      undefined;
  const replayHit =
    needed.replay && runtime.replay.find(call.upstream, call.method, resource) !== undefined;
  return decideCall(runtime.table, call.identity, subject, { shadowHit, replayHit });
}

async function answerDecision(
  runtime: GatewayRuntime,
  call: CheckedCall,
  decision: Decision,
): Promise<Answer> {
  const headers = { 'x-sideguard-decision': decision.kind };
  switch (decision.kind) {
    case 'deny':
    case 'miss': {
      const status = REFUSAL_STATUS[decision.reason];
      const response = problemResponse(
        status,
        decision.reason,
        `The gateway refused this call (${decision.kind}).`,
        {
          decision: decision.kind,
          hint: decision.hint,
          headers,
        },
      );
      return { response, code: decision.reason };
    }
    case 'forward':
      throw new Error("a forward decision is carried out by the server's forwarder");
    case 'replay': {
      const recorded = runtime.replay.find(
        call.upstream,
        call.method,
        resourceKey(call.segments, call.pairs),
      );
      if (recorded === undefined) throw new Error('replay case vanished');
      return { response: recordedResponse(recorded, headers, call.method), code: 'replayed' };
    }
    case 'shadow_read':
      return shadowRead(runtime, call, headers);
    case 'guarded':
    case 'shadow_write':
      return boundWrite(runtime, call, decision);
  }
}

async function shadowRead(
  runtime: GatewayRuntime,
  call: CheckedCall,
  headers: Record<string, string>,
): Promise<Answer> {
  if (call.identity.kind !== 'agent') throw new Error('shadow read without an agent');
  const write = await latestShadowedWrite(
    runtime.state,
    runtime.keyRing,
    call.identity.agent.tenant,
    call.upstream,
    resourceKey(call.segments, call.pairs),
  );
  if (write === undefined) throw new Error('shadow state vanished');
  const response = recordedResponse(
    { status: 200, headers: [['content-type', write.contentType]], body: write.body },
    headers,
    call.method,
  );
  return { response, code: 'shadow_read' };
}

function decisionEvent(
  runtime: GatewayRuntime,
  call: CheckedCall,
  decision: Decision,
  answer: Answer<DoorReply>,
): GatewayDecisionEvent {
  const writes = decision.kind === 'guarded' || decision.kind === 'shadow_write';
  return gatewayDecisionEvent({
    door: 'http',
    atMs: runtime.now(),
    defaultTenant: runtime.table.tenant,
    identity: call.identity,
    decision,
    code: answer.code,
    proposal: answer.proposal,
    outcome: answer.outcome,
    status: answer.response.status,
    requestDigest:
      writes && call.body.byteLength > 0
        ? keyedDigest(
            runtime.keyRing,
            KeyPurpose.commitment,
            runtime.keyRing.current,
            'sideguard/gateway/request-body/v1',
            Buffer.from(call.body).toString('base64'),
          )
        : undefined,
  });
}
