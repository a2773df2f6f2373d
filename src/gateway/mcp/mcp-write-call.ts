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
import type { JsonValue } from '../../core/canonical-json.js';
import type { CompiledAgent } from '../gateway-table.js';
import { type GuardedCallRequest, runGuardedCall, runShadowWrite } from '../guarded-call.js';
import type { McpGateway } from './mcp-gateway.js';
import { parseToolResultOutput } from './mcp-result-output.js';
import { stableDigest } from './mcp-tool-digest.js';
import type { McpToolTarget } from './mcp-tool-directory.js';
import { approvalUrlOf, doorErrorReply, guardedReply, shadowReply } from './mcp-tool-reply.js';

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

function executableOf(gateway: McpGateway, target: WriteTarget): ActionDefinition {
  if (target.kind === 'action') return target.action;
  const bound = gateway.boundActions.get(target.binding.name);
  if (bound === undefined) throw new TypeError(`binding ${target.binding.name} is not a write`);
  return bound;
}

/** The guarded call's request, or `undefined` when the binding's `toInput` threw. */
export function writeRequestOf(
  gateway: McpGateway,
  agent: CompiledAgent,
  target: WriteTarget,
  args: Readonly<Record<string, unknown>>,
): GuardedCallRequest | undefined {
  let input: unknown = args;
  if (target.kind === 'binding' && target.binding.config.toInput !== undefined) {
    try {
      input = target.binding.config.toInput(args);
    } catch {
      return undefined;
    }
  }
  return {
    action: executableOf(gateway, target),
    tenant: agent.tenant,
    principal: agent.principal,
    agent: agent.id,
    input,
  };
}

/** The refusal when a binding's `toInput` could not map the arguments. */
export function unmappedReply(target: WriteTarget): CallToolResult {
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
  /** Records the decision once its proposal is known. */
  readonly noted: (code: string, proposal: string) => void;
}

/** Runs a guarded write and answers with its result (or the approval hook's answer). */
export async function guardedWrite(gateway: McpGateway, write: McpWrite): Promise<Answer> {
  const { agent, target, call, request, noted } = write;
  const result = await runGuardedCall(gateway.guardedCall, request);
  noted(result.code, result.proposal);
  const pending = result.verdict === 'pending_approval';
  const approvalUrl = pending
    ? approvalUrlOf(gateway.table.consoleUrl, result.proposal)
    : undefined;
  if (pending && gateway.hooks.pendingApproval !== undefined) {
    const answer = await gateway.hooks.pendingApproval({
      era: call.era,
      agent,
      action: request.action,
      tool: call.name,
      arguments: call.arguments,
      result,
      context: call.context,
    });
    if (answer !== undefined) return answer;
  }
  const upstreamResult =
    target.kind === 'binding' ? parseToolResultOutput(result.output) : undefined;
  return guardedReply(result, {
    tool: call.name,
    actionType: request.action.typeName,
    ...(approvalUrl === undefined ? {} : { approvalUrl }),
    ...(upstreamResult === undefined ? {} : { upstreamResult }),
    ...(target.kind === 'action' && result.output !== undefined
      ? { output: result.output as JsonValue }
      : {}),
  });
}

/** Checks a shadow-mode write by a dry run, hands it to the shadow hook, and answers. */
export async function shadowWrite(gateway: McpGateway, write: McpWrite): Promise<Answer> {
  const { agent, target, call, request, noted } = write;
  const result = await runShadowWrite(gateway.guard, request);
  noted(result.code, result.proposal);
  if (result.verdict === 'recorded' && target.kind === 'binding') {
    await gateway.hooks.onShadowWrite?.({
      tenant: agent.tenant,
      upstream: target.binding.upstream,
      tool: target.binding.tool,
      binding: target.binding.name,
      agent: agent.id,
      proposal: result.proposal,
      semanticEffectKey: result.semanticEffectKey,
      argumentsDigest: stableDigest(call.arguments),
    });
  }
  return shadowReply(result, call.name);
}
