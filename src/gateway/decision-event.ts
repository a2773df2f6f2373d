/**
 * Builds the decision event both doors log and trace: the allow-listed fields of one decision
 * and its answer, never a body, an argument, a raw path or a credential (I8).
 */
import type { AgentIdentity, Decision } from './decide-call.js';
import type { GatewayDecisionEvent } from './decision-log.js';

/** What one door knows about a decision it answered. */
export interface DecisionEventInput {
  readonly door: 'http' | 'mcp';
  /** Milliseconds since the epoch. */
  readonly atMs: number;
  /** The tenant of calls without an agent (the config's). */
  readonly defaultTenant: string;
  readonly identity: AgentIdentity;
  readonly decision: Decision;
  /** The wire code of the answer. */
  readonly code: string;
  readonly proposal?: string | undefined;
  readonly outcome?: string | undefined;
  /** The HTTP status of the answer (the HTTP door). */
  readonly status?: number | undefined;
  /** A keyed digest of what a write sent (body or arguments). */
  readonly requestDigest?: string | undefined;
}

/** The event of one decision. */
export function gatewayDecisionEvent(input: DecisionEventInput): GatewayDecisionEvent {
  const { decision } = input;
  const agent = input.identity.kind === 'agent' ? input.identity.agent : undefined;
  // Optional fields are assigned only when present (no spreads: this runs once per call).
  const event: {
    -readonly [Key in keyof GatewayDecisionEvent]: GatewayDecisionEvent[Key];
  } = {
    v: 1,
    at: new Date(input.atMs).toISOString(),
    door: input.door,
    tenant: agent?.tenant ?? input.defaultTenant,
    decision: decision.kind,
    reason: decision.reason,
    upstream: decision.upstream,
    subject: decision.subject,
    binding: decision.binding?.name ?? null,
    agent: agent?.id ?? null,
    principal: agent?.principal ?? null,
  };
  if (input.proposal !== undefined) event.proposal = input.proposal;
  if (input.outcome !== undefined) event.outcome = input.outcome;
  event.code = input.code;
  if (input.status !== undefined) event.status = input.status;
  if (input.requestDigest !== undefined) event.requestDigest = input.requestDigest;
  return event;
}
