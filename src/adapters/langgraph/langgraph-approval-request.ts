/**
 * What a Sideguard tool's `interrupt()` carries in a LangGraph graph (the proposal to decide) and
 * what the graph is resumed with (`new Command({ resume })`: the decision on that proposal).
 * Both are plain JSON, so they survive the checkpointer.
 */
import type { AuthorityEvidence } from '../../core/evidence.js';

/** The interrupt's value: one proposal awaiting a person's decision. */
export interface SideguardApprovalRequest {
  readonly kind: 'sideguard.approval';
  readonly toolName: string;
  readonly actionType: string;
  readonly proposal: string;
  /** The tool call's arguments: exactly what would be executed. */
  readonly arguments: unknown;
  /** The action's preview for people, or null. */
  readonly preview: unknown;
}

/** The resume value: a decision on one proposal. */
export interface SideguardApprovalDecision {
  readonly kind: 'sideguard.decision';
  readonly proposal: string;
  readonly decision: 'approve' | 'reject';
  /**
   * For a rejection: the rejection evidence, bound to the proposal, recorded by the tool when the
   * graph resumes (a rejection can only ever stop an effect). Approvals are recorded before
   * resuming and carry none.
   */
  readonly rejection?: { readonly evidence: AuthorityEvidence; readonly authority: string };
}

/** True for the value a Sideguard tool interrupts with. */
export function isSideguardApprovalRequest(value: unknown): value is SideguardApprovalRequest {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as { kind?: unknown }).kind === 'sideguard.approval' &&
    typeof (value as { proposal?: unknown }).proposal === 'string'
  );
}

/** True for a resume value made by `decideApproval`. */
export function isSideguardApprovalDecision(value: unknown): value is SideguardApprovalDecision {
  const decision = value as Partial<SideguardApprovalDecision> | null;
  return (
    typeof decision === 'object' &&
    decision !== null &&
    decision.kind === 'sideguard.decision' &&
    typeof decision.proposal === 'string' &&
    (decision.decision === 'approve' || decision.decision === 'reject')
  );
}
