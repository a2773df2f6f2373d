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
  readonly status?: number;
  /** A keyed digest of what a write sent (body or arguments). */
  readonly requestDigest?: string;
}

/** The event of one decision. */
export function gatewayDecisionEvent(input: DecisionEventInput): GatewayDecisionEvent {
  const { decision } = input;
  const agent = input.identity.kind === 'agent' ? input.identity.agent : undefined;
  return {
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
    ...(input.proposal === undefined ? {} : { proposal: input.proposal }),
    ...(input.outcome === undefined ? {} : { outcome: input.outcome }),
    code: input.code,
    ...(input.status === undefined ? {} : { status: input.status }),
    ...(input.requestDigest === undefined ? {} : { requestDigest: input.requestDigest }),
  };
}
