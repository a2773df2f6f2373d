/**
 * `tools/call` on the MCP door: decide with the one decision function, then forward a read, run
 * a guarded write once, or check a shadow write — and answer with a tool result. Every decision
 * becomes the gateway's decision event (allow-listed fields, a keyed digest of the arguments of
 * a write, never the arguments) and an OpenTelemetry span, exactly as on the HTTP door.
 */
import type { CallToolResult, InputRequiredResult } from '@modelcontextprotocol/server';
import type { AgentIdentity, Decision } from '../decide-call.js';
import { gatewayDecisionEvent } from '../decision-event.js';
import { endDecisionSpan, type GatewayDecisionEvent, startDecisionSpan } from '../decision-log.js';
import { decideToolCall } from './mcp-decide-tool.js';
import type { McpGateway } from './mcp-gateway.js';
import { proposalToolReply } from './mcp-proposal-tool.js';
import type { McpToolTarget } from './mcp-tool-directory.js';
import { forwardReply, refusalReply } from './mcp-tool-reply.js';
import {
  guardedWrite,
  type McpAnswered,
  type McpToolCall,
  shadowWrite,
  writeRequestOf,
} from './mcp-write-call.js';

export type { McpToolCall } from './mcp-write-call.js';

type Answer = CallToolResult | InputRequiredResult;

/** Carries out a decision. */
async function answerDecision(
  gateway: McpGateway,
  identity: AgentIdentity,
  target: McpToolTarget | undefined,
  call: McpToolCall,
  decision: Decision,
): Promise<McpAnswered> {
  switch (decision.kind) {
    case 'deny':
    case 'miss':
      return { answer: refusalReply(decision, call.name), code: decision.reason };
    case 'forward': {
      const connection = gateway.pool.connection(decision.upstream ?? '');
      const tool = target?.kind === 'binding' ? target.binding.tool : call.name;
      const reply =
        connection === undefined
          ? ({ kind: 'no_response', reason: 'not_sent' } as const)
          : await connection.callTool(tool, call.arguments);
      return { answer: forwardReply(reply, decision.upstream ?? call.name), code: 'forward' };
    }
    case 'guarded':
    case 'shadow_write': {
      if (identity.kind !== 'agent' || target === undefined || target.kind === 'proposal') {
        throw new TypeError('a write decision needs an agent and a served tool');
      }
      const request = writeRequestOf(gateway, identity.agent, target, call.arguments);
      if ('answer' in request) return request;
      const write = { agent: identity.agent, target, call, request };
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

/** The decision event of one call, as the HTTP door writes its own. */
export function mcpDecisionEvent(
  gateway: McpGateway,
  identity: AgentIdentity,
  decision: Decision,
  answered: Pick<McpAnswered, 'code' | 'proposal' | 'outcome'>,
  args: unknown,
): GatewayDecisionEvent {
  const writes = decision.kind === 'guarded' || decision.kind === 'shadow_write';
  return gatewayDecisionEvent({
    door: 'mcp',
    atMs: gateway.now(),
    defaultTenant: gateway.table.tenant,
    identity,
    decision,
    code: answered.code,
    proposal: answered.proposal,
    outcome: answered.outcome,
    ...(writes ? { requestDigest: gateway.digestArguments(args) } : {}),
  });
}

/**
 * Hands an event to the decision hook and waits for it (the decision log applies back-pressure
 * when full); a failing hook never fails the call.
 */
export async function recordDecision(
  gateway: McpGateway,
  event: GatewayDecisionEvent,
): Promise<void> {
  try {
    await gateway.hooks.onDecision?.(event);
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
  if (target?.kind === 'proposal' && identity.kind === 'agent') {
    // A read of the agent's own proposal: not a call through the gateway, so not a decision.
    return proposalToolReply(gateway, identity.agent, call.arguments);
  }
  const span = startDecisionSpan('mcp');
  try {
    const decision = await decideToolCall(gateway, identity, call.name, target);
    const answered = await answerDecision(gateway, identity, target, call, decision);
    const event = mcpDecisionEvent(gateway, identity, decision, answered, call.arguments);
    await recordDecision(gateway, event);
    endDecisionSpan(span, event);
    return answered.answer;
  } catch (error) {
    span.recordException(error as Error);
    span.end();
    throw error;
  }
}
