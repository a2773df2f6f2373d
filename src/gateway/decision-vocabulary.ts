/**
 * The gateway's closed vocabulary: the decision kinds both doors share and the stable reason
 * codes an agent can branch on. A refusal carries a hint that says what to change.
 */

/** What the gateway does with a call (DESIGN.md, "Gateway"). */
export const DecisionKind = {
  /** A declared (or passed) read: sent to the upstream, answered with its response. */
  forward: 'forward',
  /** A bound write: the guard decides and, when it may, the gateway executes it once. */
  guarded: 'guarded',
  /** `replay` mode: answered from a recorded response case. */
  replay: 'replay',
  /** A read of a resource written in shadow: answered with the latest shadowed body. */
  shadow_read: 'shadow_read',
  /** A bound write in `shadow`/`replay` mode: checked by a dry run, recorded, never sent. */
  shadow_write: 'shadow_write',
  /** Refused: identity, a deny rule, a role, or a write with no binding (fail closed). */
  deny: 'deny',
  /** Nothing answers it: an undeclared read, or no recorded case. */
  miss: 'miss',
} as const;
export type DecisionKind = (typeof DecisionKind)[keyof typeof DecisionKind];

/** Why a decision was taken. Stable: agents and dashboards branch on these. */
export const DecisionReason = {
  agent_key_missing: 'agent_key_missing',
  agent_key_invalid: 'agent_key_invalid',
  deny_rule: 'deny_rule',
  binding_not_permitted: 'binding_not_permitted',
  write_not_bound: 'write_not_bound',
  tool_not_bound: 'tool_not_bound',
  upstream_tool_changed: 'upstream_tool_changed',
  /** An upstream MCP server cannot be reached to check a pinned tool: refused, nothing sent. */
  upstream_unavailable: 'upstream_unavailable',
  route_not_declared: 'route_not_declared',
  replay_case_missing: 'replay_case_missing',
  declared_read: 'declared_read',
  passed_read: 'passed_read',
  bound_write: 'bound_write',
  shadow_state: 'shadow_state',
  replay_case: 'replay_case',
  shadow_mode_write: 'shadow_mode_write',
} as const;
export type DecisionReason = (typeof DecisionReason)[keyof typeof DecisionReason];

/** The reasons that refuse a call. */
export type RefusalReason = Extract<
  DecisionReason,
  | 'agent_key_missing'
  | 'agent_key_invalid'
  | 'deny_rule'
  | 'binding_not_permitted'
  | 'write_not_bound'
  | 'tool_not_bound'
  | 'upstream_tool_changed'
  | 'upstream_unavailable'
  | 'route_not_declared'
  | 'replay_case_missing'
>;

/**
 * What became of a guarded call, door-neutral. Each has one wire code (below) so HTTP and MCP
 * refuse the same call with the same code.
 */
export const GuardedVerdict = {
  /** Executed (now or earlier) and accepted by the upstream; the original response is returned. */
  completed: 'completed',
  /** Waiting for approval; nothing was sent. */
  pending_approval: 'pending_approval',
  /** The action's policy blocks it. */
  blocked: 'blocked',
  /** An approver rejected it. */
  denied: 'denied',
  /** The input broke the action's contract. */
  rejected: 'rejected',
  /** Another call for the same effect is still executing. */
  in_progress: 'in_progress',
  /** The upstream certainly did not apply it (a 4xx); its answer is returned. */
  upstream_refused: 'upstream_refused',
  /** Nobody knows yet whether it happened; the guard verifies and never resends blindly. */
  outcome_unknown: 'outcome_unknown',
  /** Part of it happened; compensation or an operator is needed. */
  needs_attention: 'needs_attention',
  /** The proposal can no longer run (expired, stale, erased, contended): send it again. */
  not_executable: 'not_executable',
} as const;
export type GuardedVerdict = (typeof GuardedVerdict)[keyof typeof GuardedVerdict];

/** Wire codes of guarded verdicts (a refusal's `code`). */
export const GUARDED_VERDICT_CODE: Readonly<Record<GuardedVerdict, string>> = {
  completed: 'completed',
  pending_approval: 'approval_required',
  blocked: 'policy_blocked',
  denied: 'approval_denied',
  rejected: 'contract_violation',
  in_progress: 'in_progress',
  upstream_refused: 'upstream_refused',
  outcome_unknown: 'outcome_unknown',
  needs_attention: 'needs_attention',
  not_executable: 'not_executable',
};
