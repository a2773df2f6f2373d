/**
 * `tools/call` on the MCP door: names the call, lets the one decision function decide (asking
 * the upstream for the tool's current definition only when everything else already allows the
 * call), then forwards a read, runs a guarded write once, or checks a shadow write — and answers
 * with a tool result. The agent's mistakes and the upstream's failures are results, not errors.
 */
import type { CallToolResult, InputRequiredResult } from '@modelcontextprotocol/server';
import { type AgentIdentity, type CallSubject, type Decision, decideCall } from '../decide-call.js';
import { DecisionReason } from '../decision-vocabulary.js';
import type { McpDecisionNote } from './mcp-door-hooks.js';
import type { McpGateway } from './mcp-gateway.js';
import { proposalToolReply } from './mcp-proposal-tool.js';
import { stableDigest } from './mcp-tool-digest.js';
import type { McpToolTarget } from './mcp-tool-directory.js';
import { doorErrorReply, forwardReply, McpDoorCode, refusalReply } from './mcp-tool-reply.js';
import {
  guardedWrite,
  type McpToolCall,
  shadowWrite,
  unmappedReply,
  writeRequestOf,
} from './mcp-write-call.js';

export type { McpToolCall } from './mcp-write-call.js';

type Answer = CallToolResult | InputRequiredResult;
type Refusal = Extract<Decision, { kind: 'deny' | 'miss' }>;

/** What the call addresses, for the decision function. */
function subjectOf(target: McpToolTarget): CallSubject {
  return target.kind === 'binding'
    ? { kind: 'tool', upstream: target.binding.upstream, tool: target.binding.tool }
    : { kind: 'action', actionType: target.kind === 'action' ? target.action.typeName : '' };
}

/** Decides, reading the upstream tool's current definition only when the pin is what is left. */
async function decide(
  gateway: McpGateway,
  identity: AgentIdentity,
  call: Pick<McpToolCall, 'name'>,
  target: McpToolTarget | undefined,
): Promise<Decision | 'upstream_unavailable'> {
  if (target === undefined || target.kind === 'proposal') {
    // Identity first, as for every call; then an unknown name is a tool nobody bound.
    if (identity.kind !== 'agent') {
      return decideCall(gateway.table, identity, { kind: 'action', actionType: call.name });
    }
    return {
      kind: 'deny',
      reason: DecisionReason.tool_not_bound,
      hint: `No tool "${call.name}" is served here; call tools/list for the tools this agent may use.`,
      upstream: null,
      subject: call.name,
      binding: undefined,
    };
  }
  const subject = subjectOf(target);
  const first = decideCall(gateway.table, identity, subject);
  if (target.kind !== 'binding' || first.reason !== DecisionReason.upstream_tool_changed) {
    return first;
  }
  const { binding } = target;
  const current = await gateway.pool.currentTool(binding.upstream, binding.tool);
  if (current.kind === 'unavailable') return 'upstream_unavailable';
  const toolDigest = current.kind === 'found' ? current.digest : undefined;
  const decided = decideCall(gateway.table, identity, subject, {
    ...(toolDigest === undefined ? {} : { toolDigest }),
  });
  if (decided.reason === DecisionReason.upstream_tool_changed) {
    gateway.hooks.onProblem?.(
      `tool "${binding.tool}" of upstream "${binding.upstream}" no longer matches binding "${binding.name}" (now ${toolDigest ?? 'missing'}); calls are refused until toolDigest is updated`,
    );
  }
  return decided;
}

/** Tells the decision hook, never letting it fail the call. */
function note(gateway: McpGateway, value: McpDecisionNote): void {
  const hook = gateway.hooks.onDecision;
  if (hook === undefined) return;
  try {
    void Promise.resolve(hook(value)).catch((error: unknown) =>
      gateway.hooks.onProblem?.(`decision hook failed: ${String(error)}`),
    );
  } catch (error) {
    gateway.hooks.onProblem?.(`decision hook failed: ${String(error)}`);
  }
}

/** Serves one `tools/call`. Throws only when the gateway itself is broken. */
export async function callMcpTool(
  gateway: McpGateway,
  identity: AgentIdentity,
  call: McpToolCall,
): Promise<Answer> {
  const target = gateway.directory.targets.get(call.name);
  const agent = identity.kind === 'agent' ? identity.agent : undefined;
  const digest = stableDigest(call.arguments);
  const base = {
    door: 'mcp',
    tenant: agent?.tenant ?? null,
    agent: agent?.id ?? null,
    principal: agent?.principal ?? null,
    tool: call.name,
    argumentsDigest: digest,
  } as const;
  if (target?.kind === 'proposal' && agent !== undefined) {
    return proposalToolReply(gateway, agent, call.arguments);
  }
  const decision = await decide(gateway, identity, call, target);
  if (decision === 'upstream_unavailable') {
    const upstream = target?.kind === 'binding' ? target.binding.upstream : null;
    note(gateway, {
      ...base,
      kind: 'deny',
      reason: McpDoorCode.upstream_unavailable,
      upstream,
      binding: target?.kind === 'binding' ? target.binding.name : null,
      code: McpDoorCode.upstream_unavailable,
    });
    return doorErrorReply(
      null,
      McpDoorCode.upstream_unavailable,
      `Upstream MCP server "${upstream}" cannot be reached right now, so its tool could not be checked against the reviewed definition; nothing was sent. Try again later.`,
    );
  }
  const noted = {
    ...base,
    kind: decision.kind,
    reason: decision.reason,
    upstream: decision.upstream,
    binding: decision.binding?.name ?? null,
  };
  switch (decision.kind) {
    case 'deny':
    case 'miss':
      note(gateway, { ...noted, code: decision.reason });
      return refusalReply(decision as Refusal, call.name);
    case 'forward': {
      note(gateway, { ...noted, code: 'forward' });
      const connection = gateway.pool.connection(decision.upstream ?? '');
      const reply =
        connection === undefined
          ? ({ kind: 'no_response', reason: 'not_sent' } as const)
          : await connection.callTool(
              target?.kind === 'binding' ? target.binding.tool : call.name,
              call.arguments,
            );
      return forwardReply(reply, decision.upstream ?? call.name);
    }
    case 'guarded':
    case 'shadow_write': {
      if (agent === undefined || target === undefined || target.kind === 'proposal') {
        throw new TypeError('a write decision needs an agent and a served tool');
      }
      const request = writeRequestOf(gateway, agent, target, call.arguments);
      if (request === undefined) return unmappedReply(target);
      const write = {
        agent,
        target,
        call,
        request,
        noted: (code: string, proposal: string) => note(gateway, { ...noted, code, proposal }),
      };
      return decision.kind === 'guarded'
        ? guardedWrite(gateway, write)
        : shadowWrite(gateway, write);
    }
    case 'replay':
    case 'shadow_read':
      // The decision function answers tools only with forward, guarded, shadow_write or refusals.
      throw new TypeError(`decision ${decision.kind} is not one a tool call can get`);
  }
}
