/**
 * The HTTP front door: an agent's request to an upstream's address on the gateway is checked
 * (reserved headers, size, path), its agent identified, the one decision function consulted, and
 * the decision carried out — forwarded, guarded, replayed, shadowed, or refused with a code and
 * a hint. Thin: decisions live in `decide-call.ts`, guarded writes in `guarded-call.ts`.
 */
import { keyedDigest } from '../core/commitment.js';
import { KeyPurpose } from '../core/key-ring.js';
import { authenticateAgent, presentedKey } from './agent-identity.js';
import type { HttpWriteBindingConfig } from './config-types.js';
import {
  type AgentIdentity,
  type Decision,
  decideCall,
  matchCall,
  stateNeeded,
  type WriteDecision,
} from './decide-call.js';
import { gatewayDecisionEvent } from './decision-event.js';
import { endDecisionSpan, type GatewayDecisionEvent, startDecisionSpan } from './decision-log.js';
import type { GatewayRuntime } from './gateway-runtime.js';
import { runGuardedCall, runShadowWrite } from './guarded-call.js';
import { guardedAnswer, recordedResponse } from './http-guarded-answer.js';
import { problemResponse, REFUSAL_STATUS } from './http-problems.js';
import {
  boundRequestOf,
  forwardableHeaders,
  parseBody,
  type RequestRefusal,
  readBodyWithin,
  reservedHeader,
} from './http-request-reader.js';
import {
  latestShadowedWrite,
  recordReplayCase,
  recordShadowWrite,
  resourceKey,
} from './rehearsal-state.js';
import { isReadMethod, queryPairs, splitPath } from './route-pattern.js';

/** One agent request addressed to an upstream. */
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

/** A checked request, ready for the decision. */
interface CheckedCall {
  readonly upstream: string;
  readonly request: Request;
  readonly method: string;
  readonly rawPath: string;
  readonly search: string;
  readonly segments: readonly string[];
  readonly pairs: readonly (readonly [string, string])[];
  readonly body: Uint8Array;
  readonly identity: AgentIdentity;
}

/** What answering a decision produced, for the decision event. */
interface Answer {
  readonly response: Response;
  readonly code: string;
  readonly proposal?: string;
  readonly outcome?: string;
}

/** Handles one request. Never throws: a gateway fault is a 500 problem with no details. */
export async function handleHttpCall(runtime: GatewayRuntime, call: HttpCall): Promise<Response> {
  const span = startDecisionSpan('http');
  try {
    const checked = await checkCall(runtime, call);
    if (checked instanceof Response) {
      span.setAttribute('http.response.status_code', checked.status);
      span.end();
      return checked;
    }
    const decision = await decide(runtime, checked);
    const answer = await answerDecision(runtime, checked, decision);
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

async function checkCall(runtime: GatewayRuntime, call: HttpCall): Promise<CheckedCall | Response> {
  const { request } = call;
  const reserved = reservedHeader(request.headers);
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
  const method = request.method.toUpperCase();
  const limit = runtime.table.server.bodyLimitBytes;
  // Reads carry no body the gateway would use or forward: it is never read.
  const body = isReadMethod(method)
    ? new Uint8Array()
    : await (call.readBody?.(limit) ?? readBodyWithin(request, limit));
  if (!(body instanceof Uint8Array)) {
    return problemResponse(body.status, body.code, body.detail, { hint: body.hint });
  }
  return {
    upstream: call.upstream,
    request,
    method,
    rawPath: rawPath === '' ? '/' : rawPath,
    search,
    segments: split.segments,
    pairs,
    body,
    identity: authenticateAgent(
      runtime.table.agents,
      presentedKey(request.headers.get('authorization') ?? undefined),
    ),
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
      return forward(runtime, call);
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

async function forward(runtime: GatewayRuntime, call: CheckedCall): Promise<Answer> {
  const upstream = runtime.http.get(call.upstream);
  if (upstream === undefined) throw new Error(`no transport for ${call.upstream}`);
  const reply = await upstream.transport.send({
    method: call.method,
    path: call.rawPath,
    search: call.search,
    headers: forwardableHeaders(call.request.headers),
  });
  if (reply.kind === 'no_response') {
    const timeout = reply.reason === 'timeout';
    return {
      response: problemResponse(
        timeout ? 504 : 502,
        timeout ? 'upstream_timeout' : 'upstream_unavailable',
        'The upstream did not answer.',
        {
          decision: 'forward',
          hint: 'Retry later.',
          retryAfterSeconds: 1,
        },
      ),
      code: timeout ? 'upstream_timeout' : 'upstream_unavailable',
    };
  }
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
  return {
    response: recordedResponse(reply, { 'x-sideguard-decision': 'forward' }, call.method),
    code: 'forwarded',
  };
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

async function boundWrite(
  runtime: GatewayRuntime,
  call: CheckedCall,
  decision: WriteDecision,
): Promise<Answer> {
  const binding = decision.binding;
  if (call.identity.kind !== 'agent' || binding?.kind !== 'http')
    throw new Error('bound write without binding');
  const agent = call.identity.agent;
  const parsed = parseBody(call.request.headers.get('content-type') ?? '', call.body);
  if (parsed.kind === 'refused') {
    return {
      response: problemResponse(parsed.status, parsed.code, parsed.detail, { hint: parsed.hint }),
      code: parsed.code,
    };
  }
  const bound = boundRequestOf({
    method: call.method,
    path: call.rawPath,
    params: decision.params,
    pairs: call.pairs,
    body: parsed.value,
    headers: call.request.headers,
  });
  let input: unknown;
  try {
    input = (binding.config as HttpWriteBindingConfig).toInput(bound);
  } catch {
    return {
      response: problemResponse(
        422,
        'binding_input_failed',
        `The request could not be turned into the input of ${decision.action.typeName}.`,
        {
          decision: decision.kind,
          hint: `Send the fields binding "${binding.name}" expects for ${decision.subject}.`,
        },
      ),
      code: 'binding_input_failed',
    };
  }
  const request = { tenant: agent.tenant, principal: agent.principal, agent: agent.id, input };
  if (decision.kind === 'shadow_write') return shadowWrite(runtime, call, decision, request);
  const action = runtime.http.get(call.upstream)?.actions.get(binding.name);
  if (action === undefined) throw new Error(`binding ${binding.name} has no executable action`);
  const result = await runGuardedCall(runtime.guardedCall, { ...request, action });
  const response = guardedAnswer(result, {
    consoleUrl: runtime.table.consoleUrl,
    method: call.method,
  });
  return { response, code: result.code, proposal: result.proposal, outcome: result.outcome };
}

async function shadowWrite(
  runtime: GatewayRuntime,
  call: CheckedCall,
  decision: WriteDecision,
  request: { tenant: string; principal: string; agent: string; input: unknown },
): Promise<Answer> {
  const result = await runShadowWrite(runtime.guard, { ...request, action: decision.action });
  if (result.verdict === 'rejected') {
    return {
      response: problemResponse(
        422,
        result.code,
        "The request does not satisfy the action's contract.",
        {
          decision: 'shadow_write',
          issues: (result.issues ?? []).map((issue) => ({ ...issue })),
          hint: 'Fix the fields named in issues and send it again.',
        },
      ),
      code: result.code,
    };
  }
  if (result.verdict === 'blocked') {
    return {
      response: problemResponse(
        403,
        result.code,
        `The action's policy blocks this write (${result.reasonCode}).`,
        {
          decision: 'shadow_write',
          ...(result.reasonCode === undefined ? {} : { reasonCode: result.reasonCode }),
          hint: 'Change the request so that the policy allows it.',
        },
      ),
      code: result.code,
    };
  }
  const resource = resourceKey(call.segments, call.pairs);
  await recordShadowWrite(runtime.state, runtime.keyRing, {
    tenant: request.tenant,
    upstream: call.upstream,
    resource,
    method: call.method,
    recordedAtMs: runtime.now(),
    contentType: call.request.headers.get('content-type') ?? 'application/octet-stream',
    body: call.body,
  });
  const body = {
    mode: 'shadow_write',
    upstream: call.upstream,
    method: call.method,
    route: decision.subject,
    action: decision.action.typeName,
    wouldBe: result.wouldBe ?? null,
    reasonCode: result.reasonCode ?? null,
  };
  const response = new Response(JSON.stringify(body), {
    status: 202,
    headers: { 'content-type': 'application/json', 'x-sideguard-decision': 'shadow_write' },
  });
  return { response, code: result.code };
}

function decisionEvent(
  runtime: GatewayRuntime,
  call: CheckedCall,
  decision: Decision,
  answer: Answer,
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
    ...(writes && call.body.byteLength > 0
      ? {
          requestDigest: keyedDigest(
            runtime.keyRing,
            KeyPurpose.commitment,
            runtime.keyRing.current,
            'sideguard/gateway/request-body/v1',
            Buffer.from(call.body).toString('base64'),
          ),
        }
      : {}),
  });
}
