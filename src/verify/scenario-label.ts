/**
 * The label of a scenario's outcome (`committed`, `retry_resolved`, `blocked`, …), derived from
 * the primary proposal's ledger replay alone.
 */
import type { LedgerEvent, ProposalReplay } from '../core/ledger.js';
import { effectOfReplay } from './evidence-model.js';

/** Labels the primary proposal's outcome; `related` are proposals of the same effect. */
export function labelOf(
  primary: ProposalReplay | undefined,
  related: readonly ProposalReplay[],
  events: readonly LedgerEvent[],
): string {
  if (primary === undefined) return 'no_evidence';
  const path = primary.decisionPath;
  const status = primary.status;
  if (path.includes('contract_rejected')) return 'rejected_before_execution';
  if (path.includes('dry_run_predicted')) return 'dry_run_predicted';
  if (status === 'awaiting_authority' && path.includes('authority_lapsed'))
    return 'authority_lapsed';
  if (status === 'awaiting_authority' && path.includes('authority_rejected'))
    return 'authority_rejected';
  if (status === 'awaiting_authority') return 'authority_pending';
  if (status !== 'verified' && status !== null) return status;
  if (status === 'verified') {
    const effect = effectOfReplay(primary);
    const retried =
      related.length > 1 ||
      events.some((e) => e.type === 'retry_resolved' && e.data.semanticEffectKey === effect);
    if (retried) return 'retry_resolved';
    if (path.includes('resend_allowed')) return 'verified_after_resend';
    if (path.includes('commit_outcome_unknown') || path.includes('lease_expired'))
      return 'verified_after_unknown';
    return 'committed';
  }
  return 'no_status';
}
