/**
 * The HTTP door's bound writes: the request's body parsed and turned into the action's input by
 * the binding, then run through the guard (`guarded`) or recorded instead of sent (`shadow_write`).
 */
import type { HttpWriteBindingConfig } from './config-types.js';
import type { WriteDecision } from './decide-call.js';
import type { GatewayRuntime } from './gateway-runtime.js';
import { runGuardedCall, runShadowWrite } from './guarded-call.js';
import type { Answer, CheckedCall } from './http-door-call.js';
import { guardedAnswer } from './http-guarded-answer.js';
import { problemResponse } from './http-problems.js';
import { boundRequestOf, parseBody } from './http-request-reader.js';
import { recordShadowWrite, resourceKey } from './rehearsal-state.js';

/** Carries out a `guarded` or `shadow_write` decision. */
export async function boundWrite(
  runtime: GatewayRuntime,
  call: CheckedCall,
  decision: WriteDecision,
): Promise<Answer> {
  const binding = decision.binding;
  if (call.identity.kind !== 'agent' || binding?.kind !== 'http')
    throw new Error('bound write without binding');
  const agent = call.identity.agent;
  const parsed = parseBody(call.headers['content-type'] ?? '', call.body);
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
    headers: call.headers,
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
    contentType: call.headers['content-type'] ?? 'application/octet-stream',
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
