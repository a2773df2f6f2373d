/**
 * The one decision function both front doors call. Pure: the door authenticates the agent,
 * matches the call, loads whatever shadow/replay state `stateNeeded` asks for, and this function
 * decides, in the fixed order deny rules → shadow state → replay cases → declared reads →
 * guarded writes → miss. Undeclared writes are denied (fail closed).
 */
import type { ActionDefinition } from '../core/action.js';
import { DecisionKind, DecisionReason, type RefusalReason } from './decision-vocabulary.js';
import type {
  CompiledAgent,
  CompiledBinding,
  CompiledHttpBinding,
  CompiledToolBinding,
  CompiledUpstream,
  GatewayTable,
} from './gateway-table.js';
import { isReadMethod, isUnderPrefix, matchSegments } from './route-pattern.js';

/** Who is calling, as the door established it. */
export type AgentIdentity =
  | { readonly kind: 'agent'; readonly agent: CompiledAgent }
  | { readonly kind: 'missing' }
  | { readonly kind: 'invalid' };

/** What is being called. */
export type CallSubject =
  /** An HTTP request to an upstream; `segments` from `splitPath` (relative to the mount). */
  | {
      readonly kind: 'http';
      readonly upstream: string;
      readonly method: string;
      readonly segments: readonly string[];
    }
  /** A wrapped upstream MCP tool. */
  | { readonly kind: 'tool'; readonly upstream: string; readonly tool: string }
  /** A declared action called directly as a tool (MCP door). */
  | { readonly kind: 'action'; readonly actionType: string };

/** The binding a call matched, if any. */
export interface CallMatch {
  readonly binding: CompiledBinding | undefined;
  readonly params: Readonly<Record<string, string>>;
  /** Whether the call only reads. Unbound tools and actions count as writes (fail closed). */
  readonly read: boolean;
}

/** State the door looked up because `stateNeeded` asked for it. */
export interface DecisionState {
  /** A shadowed body exists for this resource (same path and normalised query). */
  readonly shadowHit?: boolean;
  /** A recorded replay case matches exactly. */
  readonly replayHit?: boolean;
  /** The digest of the upstream tool's current definition (tool calls). */
  readonly toolDigest?: string;
}

interface DecisionBase {
  readonly reason: DecisionReason;
  /** The upstream, or null for a declared action called directly. */
  readonly upstream: string | null;
  /** Route template (`POST /v1/refunds`), tool name, or `METHOD <unmatched>`: never a raw path. */
  readonly subject: string;
  readonly binding: CompiledBinding | undefined;
}

/** The decision. Refusals carry a hint that names what is missing. */
export type Decision =
  | (DecisionBase & { readonly kind: 'forward' | 'replay' | 'shadow_read' })
  | (DecisionBase & {
      readonly kind: 'guarded' | 'shadow_write';
      readonly action: ActionDefinition;
      readonly params: Readonly<Record<string, string>>;
    })
  | (DecisionBase & {
      readonly kind: 'deny' | 'miss';
      readonly reason: RefusalReason;
      readonly hint: string;
    });

/** A decision that leads to a write: `guarded` or `shadow_write`. */
export type WriteDecision = Extract<Decision, { readonly action: ActionDefinition }>;

/** Finds the binding a call addresses. */
export function matchCall(table: GatewayTable, call: CallSubject): CallMatch {
  switch (call.kind) {
    case 'http': {
      for (const binding of table.httpBindings.get(call.upstream) ?? []) {
        if (binding.pattern.method !== call.method) continue;
        const params = matchSegments(binding.pattern, call.segments);
        if (params !== undefined) return { binding, params, read: binding.access === 'read' };
      }
      return { binding: undefined, params: {}, read: isReadMethod(call.method) };
    }
    case 'tool': {
      const binding = table.toolBindings.get(call.upstream)?.get(call.tool);
      return { binding, params: {}, read: binding?.access === 'read' };
    }
    case 'action':
      return { binding: undefined, params: {}, read: false };
  }
}

/** Which state the door must look up before deciding (only reads in rehearsal modes need any). */
export function stateNeeded(
  table: GatewayTable,
  call: CallSubject,
  match: CallMatch,
): { readonly shadow: boolean; readonly replay: boolean } {
  if (call.kind === 'action' || !match.read) return { shadow: false, replay: false };
  const mode = table.upstreams.get(call.upstream)?.mode;
  return {
    shadow: mode === 'shadow' || mode === 'replay',
    replay: mode === 'replay',
  };
}

const granted = (table: GatewayTable, agent: CompiledAgent, name: string): boolean =>
  agent.roles.some((role) => table.roles.get(role)?.includes(name) === true);

/** Whether the agent's roles grant a binding (by name, `UPSTREAM:*`, or `*`). */
export function mayUse(
  table: GatewayTable,
  agent: CompiledAgent,
  binding: CompiledBinding,
): boolean {
  return (
    granted(table, agent, binding.name) ||
    granted(table, agent, `${binding.upstream}:*`) ||
    granted(table, agent, '*')
  );
}

const subjectOf = (call: CallSubject, match: CallMatch): string => {
  if (call.kind === 'action') return call.actionType;
  if (call.kind === 'tool') return call.tool;
  const binding = match.binding;
  return binding?.kind === 'http'
    ? `${binding.pattern.method} ${binding.pattern.template}`
    : `${call.method} <unmatched>`;
};

function matchesDenyRule(table: GatewayTable, call: CallSubject) {
  if (call.kind === 'action') return undefined;
  return table.deny.find((rule) => {
    if (rule.upstream !== call.upstream) return false;
    if (call.kind === 'tool') return rule.tool === call.tool;
    if (rule.tool !== undefined) return false;
    if (rule.method !== undefined && rule.method !== call.method) return false;
    return rule.prefix === undefined || isUnderPrefix(call.segments, rule.prefix);
  });
}

/**
 * Decides a call. `state` must hold what `stateNeeded` asked for (and the tool digest for
 * tool calls); missing state counts as "no hit".
 */
export function decideCall(
  table: GatewayTable,
  identity: AgentIdentity,
  call: CallSubject,
  state: DecisionState = {},
): Decision {
  const match = matchCall(table, call);
  const base = {
    upstream: call.kind === 'action' ? null : call.upstream,
    subject: subjectOf(call, match),
    binding: match.binding,
  };
  const refuse = (kind: 'deny' | 'miss', reason: RefusalReason, hint: string): Decision => ({
    ...base,
    kind,
    reason,
    hint,
  });

  if (identity.kind === 'missing') {
    return refuse(
      DecisionKind.deny,
      DecisionReason.agent_key_missing,
      'Send your gateway API key as "Authorization: Bearer <key>".',
    );
  }
  if (identity.kind === 'invalid') {
    return refuse(
      DecisionKind.deny,
      DecisionReason.agent_key_invalid,
      'The API key is not one the gateway knows; use the key configured for your agent.',
    );
  }
  const { agent } = identity;
  const rule = matchesDenyRule(table, call);
  if (rule !== undefined) {
    return refuse(
      DecisionKind.deny,
      DecisionReason.deny_rule,
      `Refused by a deny rule of upstream "${rule.upstream}": ${rule.reason}.`,
    );
  }
  if (call.kind === 'action') return decideAction(table, agent, call.actionType, base, refuse);
  const upstream = table.upstreams.get(call.upstream);
  if (upstream === undefined) {
    return refuse(
      DecisionKind.miss,
      DecisionReason.route_not_declared,
      `No upstream "${call.upstream}" is configured.`,
    );
  }
  const binding = match.binding;
  if (binding !== undefined && !mayUse(table, agent, binding)) {
    return refuse(
      DecisionKind.deny,
      DecisionReason.binding_not_permitted,
      `Agent "${agent.id}" (roles: ${agent.roles.join(', ') || 'none'}) may not use binding "${binding.name}"; an operator can grant it in roles.<role>.bindings.`,
    );
  }
  if (call.kind === 'tool') return decideTool(upstream, binding, state, base, refuse);
  if (match.read) return decideRead(table, agent, upstream, call, binding, state, base, refuse);
  if (binding?.kind !== 'http' || binding.action === undefined) {
    return refuse(
      DecisionKind.deny,
      DecisionReason.write_not_bound,
      `No binding declares ${call.method} on this path of upstream "${upstream.name}", so the gateway refuses it (writes fail closed); an operator can bind the route to an action.`,
    );
  }
  return writeDecision(upstream, binding.action, match.params, base);
}

type Refuse = (kind: 'deny' | 'miss', reason: RefusalReason, hint: string) => Decision;
type Base = Pick<DecisionBase, 'upstream' | 'subject' | 'binding'>;

function writeDecision(
  upstream: CompiledUpstream,
  action: ActionDefinition,
  params: Readonly<Record<string, string>>,
  base: Base,
): Decision {
  const rehearsal = upstream.mode === 'shadow' || upstream.mode === 'replay';
  return rehearsal
    ? { ...base, kind: 'shadow_write', reason: DecisionReason.shadow_mode_write, action, params }
    : { ...base, kind: 'guarded', reason: DecisionReason.bound_write, action, params };
}

function decideRead(
  table: GatewayTable,
  agent: CompiledAgent,
  upstream: CompiledUpstream,
  call: Extract<CallSubject, { kind: 'http' }>,
  binding: CompiledBinding | undefined,
  state: DecisionState,
  base: Base,
  refuse: Refuse,
): Decision {
  const declared = binding !== undefined;
  const passed =
    !declared &&
    upstream.passReads &&
    (granted(table, agent, `${upstream.name}:*`) || granted(table, agent, '*'));
  if (!declared && !passed) {
    return refuse(
      DecisionKind.miss,
      DecisionReason.route_not_declared,
      `No binding declares ${call.method} on this path of upstream "${upstream.name}"; an operator can declare it as a read.`,
    );
  }
  if (state.shadowHit === true) {
    return { ...base, kind: 'shadow_read', reason: DecisionReason.shadow_state };
  }
  if (upstream.mode === 'replay') {
    return state.replayHit === true
      ? { ...base, kind: 'replay', reason: DecisionReason.replay_case }
      : refuse(
          DecisionKind.miss,
          DecisionReason.replay_case_missing,
          `No recorded case answers this request on upstream "${upstream.name}"; record one with \`sideguard record\`.`,
        );
  }
  // Written out rather than spread: this is every forwarded read's decision.
  return {
    kind: 'forward',
    reason: declared ? DecisionReason.declared_read : DecisionReason.passed_read,
    upstream: base.upstream,
    subject: base.subject,
    binding: base.binding,
  };
}

function decideTool(
  upstream: CompiledUpstream,
  binding: CompiledBinding | undefined,
  state: DecisionState,
  base: Base,
  refuse: Refuse,
): Decision {
  if (binding?.kind !== 'tool') {
    return refuse(
      DecisionKind.deny,
      DecisionReason.tool_not_bound,
      `Tool "${base.subject}" of upstream "${upstream.name}" has no binding, so the gateway refuses it; an operator can bind it as a read or to an action.`,
    );
  }
  if (state.toolDigest !== binding.toolDigest) {
    return refuse(
      DecisionKind.deny,
      DecisionReason.upstream_tool_changed,
      `Tool "${binding.tool}" of upstream "${upstream.name}" changed since it was bound (now ${state.toolDigest ?? 'unavailable'}); an operator must review it and update toolDigest in binding "${binding.name}".`,
    );
  }
  if (binding.access === 'read') {
    return { ...base, kind: 'forward', reason: DecisionReason.declared_read };
  }
  return writeDecision(upstream, bindingAction(binding), {}, base);
}

const bindingAction = (binding: CompiledToolBinding | CompiledHttpBinding): ActionDefinition => {
  if (binding.action === undefined) {
    throw new TypeError(`binding ${binding.name} is a write without an action`);
  }
  return binding.action;
};

function decideAction(
  table: GatewayTable,
  agent: CompiledAgent,
  actionType: string,
  base: Base,
  refuse: Refuse,
): Decision {
  const action = table.actions.get(actionType);
  if (action === undefined) {
    return refuse(
      DecisionKind.deny,
      DecisionReason.tool_not_bound,
      `No action "${actionType}" is declared.`,
    );
  }
  if (!granted(table, agent, `action:${actionType}`) && !granted(table, agent, '*')) {
    return refuse(
      DecisionKind.deny,
      DecisionReason.binding_not_permitted,
      `Agent "${agent.id}" may not call action "${actionType}"; an operator can grant "action:${actionType}" in roles.<role>.bindings.`,
    );
  }
  return { ...base, kind: 'guarded', reason: DecisionReason.bound_write, action, params: {} };
}
