/**
 * Decides one `tools/call` with the gateway's one decision function. A served name becomes the
 * call subject (a declared action, or an upstream tool under its binding); an unknown name is a
 * tool nobody bound. The upstream is asked for the tool's current definition only when the pin is
 * the one check left, and a server that cannot be reached for it refuses the call (fail closed).
 */
import { type AgentIdentity, type CallSubject, type Decision, decideCall } from '../decide-call.js';
import { DecisionReason } from '../decision-vocabulary.js';
import type { McpGateway } from './mcp-gateway.js';
import type { McpToolTarget } from './mcp-tool-directory.js';

/** What the call addresses, for the decision function. */
function subjectOf(target: McpToolTarget): CallSubject {
  return target.kind === 'binding'
    ? { kind: 'tool', upstream: target.binding.upstream, tool: target.binding.tool }
    : { kind: 'action', actionType: target.kind === 'action' ? target.action.typeName : '' };
}

/** The decision for a call of `name` (its directory entry `target`, if any). */
export async function decideToolCall(
  gateway: McpGateway,
  identity: AgentIdentity,
  name: string,
  target: McpToolTarget | undefined,
): Promise<Decision> {
  if (target === undefined || target.kind === 'proposal') {
    // Identity first, as for every call; then an unknown name is a tool nobody bound.
    if (identity.kind !== 'agent') {
      return decideCall(gateway.table, identity, { kind: 'action', actionType: name });
    }
    return {
      kind: 'deny',
      reason: DecisionReason.tool_not_bound,
      hint: `No tool "${name}" is served here; call tools/list for the tools this agent may use.`,
      upstream: null,
      subject: name,
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
  if (current.kind === 'unavailable') {
    return {
      ...first,
      kind: 'deny',
      reason: DecisionReason.upstream_unavailable,
      hint: `Upstream MCP server "${binding.upstream}" cannot be reached right now, so tool "${binding.tool}" could not be checked against its reviewed definition; nothing was sent. Try again later.`,
    };
  }
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
