/**
 * The write half of `tools/call`: a guarded write (the guard decides, the executor runs once,
 * a duplicate gets the original answer; a pending approval goes to the approval hook) and a
 * shadow-mode write (a dry run, recorded, never sent).
 */
import type {
  CallToolResult,
  InputRequiredResult,
  ServerContext,
} from '@modelcontextprotocol/server';
import type { ActionDefinition } from '../../core/action.js';
import type { CompiledAgent } from '../gateway-table.js';
import { type GuardedCallRequest, runGuardedCall, runShadowWrite } from '../guarded-call.js';
import {
  answerPendingApproval,
  replyParts,
  requestStateOf,
  resumeWithState,
} from './mcp-approval-round.js';
import type { McpGateway } from './mcp-gateway.js';
import type { McpToolTarget } from './mcp-tool-directory.js';
import { doorErrorReply, guardedReply, McpDoorCode, shadowReply } from './mcp-tool-reply.js';

/** A `tools/call` as the SDK delivered it. */
export interface McpToolCall {
  readonly name: string;
  readonly arguments: Readonly<Record<string, unknown>>;
  /** The protocol era of the instance serving the call. */
  readonly era: 'legacy' | 'modern';
  /** The SDK's request context (for the approval hook). */
  readonly context: ServerContext;
}

/** A served tool that writes: a declared action or a tool binding. */
export type WriteTarget = Exclude<McpToolTarget, { kind: 'proposal' }>;
type Answer = CallToolResult | InputRequiredResult;

/** What runs the write, or why nothing can run it in this process. */
function executableOf(
  gateway: McpGateway,
  target: WriteTarget,
): ActionDefinition | { readonly unavailable: string } {
  if (target.kind === 'binding') {
    const bound = gateway.boundActions.get(target.binding.name);
    if (bound === undefined) throw new TypeError(`binding ${target.binding.name} is not a write`);
    return bound;
  }
  const executable = gateway.actionExecutables.get(target.action.typeName);
  if (executable === undefined) return target.action;
  return executable.kind === 'ready' ? executable.action : { unavailable: executable.upstream };
}

/**
 * The guarded call's request, or the answer when none can be made: the binding's `toInput`
 * threw (a contract violation), or the upstream that executes it is not open in this process.
 */
export function writeRequestOf(
  gateway: McpGateway,
  agent: CompiledAgent,
  target: WriteTarget,
  args: Readonly<Record<string, unknown>>,
): GuardedCallRequest | McpAnswered {
  const action = executableOf(gateway, target);
  if ('unavailable' in action) {
    return {
      answer: doorErrorReply(
        'guarded',
        McpDoorCode.upstream_unavailable,
        `Upstream "${action.unavailable}", which executes ${target.name}, is not reachable from this gateway process (a sandbox-mode upstream needs the sandbox \`sideguard serve\` starts: pass its data URL with --sandbox-url); nothing was sent.`,
      ),
      code: McpDoorCode.upstream_unavailable,
    };
  }
  let input: unknown = args;
  if (target.kind === 'binding' && target.binding.config.toInput !== undefined) {
    try {
      input = target.binding.config.toInput(args);
    } catch {
      return { answer: unmappedReply(target), code: 'contract_violation' };
    }
  }
  return { action, tenant: agent.tenant, principal: agent.principal, agent: agent.id, input };
}

/** The refusal when a binding's `toInput` could not map the arguments. */
function unmappedReply(target: WriteTarget): CallToolResult {
  return doorErrorReply(
    'guarded',
    'contract_violation',
    `The arguments do not fit binding "${target.name}" (its toInput failed); check them against the tool's input schema.`,
    { issues: [{ path: '', code: 'binding_to_input_failed', message: 'toInput threw' }] },
  );
}

/** One write call, its request already mapped from the arguments. */
export interface McpWrite {
  readonly agent: CompiledAgent;
  readonly target: WriteTarget;
  readonly call: McpToolCall;
  readonly request: GuardedCallRequest;
}

/** An answer and what the decision event records about it. */
export interface McpAnswered {
  readonly answer: Answer;
  /** The wire code of the answer. */
  readonly code: string;
  readonly proposal?: string;
  readonly outcome?: string;
}

/**
 * Runs a guarded write and answers with its result. A call carrying a `requestState` resumes the
 * proposal it names; a call that now waits for approval goes to the approval hook, else answers
 * with a signed `requestState` (see `mcp-approval-round.ts`).
 */
export async function guardedWrite(gateway: McpGateway, write: McpWrite): Promise<McpAnswered> {
  const { agent, call, request } = write;
  const state = requestStateOf(call.context);
  if (state !== undefined) return resumeWithState(gateway, write, state);
  const result = await runGuardedCall(gateway.guardedCall, request);
  const event = { code: result.code, proposal: result.proposal, outcome: result.outcome };
  if (result.verdict !== 'pending_approval') {
    return { answer: guardedReply(result, replyParts(gateway, write, result)), ...event };
  }
  if (gateway.hooks.pendingApproval !== undefined) {
    const answer = await gateway.hooks.pendingApproval({
      era: call.era,
      agent,
      action: request.action,
      tool: call.name,
      arguments: call.arguments,
      result,
      context: call.context,
    });
    if (answer !== undefined) return { answer, ...event };
  }
  return { answer: await answerPendingApproval(gateway, write, result), ...event };
}

/** Checks a shadow-mode write by a dry run, hands it to the shadow hook, and answers. */
export async function shadowWrite(gateway: McpGateway, write: McpWrite): Promise<McpAnswered> {
  const { agent, target, call, request } = write;
  const result = await runShadowWrite(gateway.guard, request);
  if (result.verdict === 'recorded' && target.kind === 'binding') {
    await gateway.hooks.onShadowWrite?.({
      tenant: agent.tenant,
      upstream: target.binding.upstream,
      tool: target.binding.tool,
      binding: target.binding.name,
      agent: agent.id,
      proposal: result.proposal,
      semanticEffectKey: result.semanticEffectKey,
      argumentsDigest: gateway.digestArguments(call.arguments),
      arguments: call.arguments,
    });
  }
  return { answer: shadowReply(result, call.name), code: result.code, proposal: result.proposal };
}
