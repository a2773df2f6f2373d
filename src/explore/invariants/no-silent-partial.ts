/**
 * I6 no silent partial failure: a proposal that owns a provider write ends in a status that owns
 * it, and one whose later step failed ends needing (or having had) compensation (a step reported
 * committed whose receipt could not be recorded is verified instead).
 */
import type { Violation } from '../schedule-evidence.js';
import type { EvidenceIndex } from './evidence-index.js';

const INVARIANT = 'no_silent_partial';
/** Statuses that own a committed write (or wait for a person who will). */
const OWNS_A_WRITE = new Set([
  'verified',
  'compensation_required',
  'compensated',
  'partially_succeeded',
  'erased',
  'verification_unresolved',
]);

export function checkNoSilentPartial(index: EvidenceIndex): Violation[] {
  const violations: Violation[] = [];
  const owners = new Set<string>();
  for (const write of index.evidence.writes) {
    if (write.proposal !== null && write.kind === 'create') owners.add(write.proposal);
  }
  for (const proposal of owners) {
    const status = index.records.get(proposal)?.status;
    if (status !== undefined && !OWNS_A_WRITE.has(status)) {
      violations.push(
        index.about(
          INVARIANT,
          proposal,
          `${proposal} ends ${status} although the provider holds its write`,
        ),
      );
    }
  }
  for (const [proposal, events] of index.eventsByProposal) {
    const partial = events.find((event) => event.type === 'partial_commit');
    const items = (partial?.data.items ?? []) as { outcome?: string; reason?: string }[];
    // A step reported committed whose receipt could not be recorded is not a failure: the effect
    // is verified (and may end unresolved, waiting for an operator). Any other step that did not
    // commit asks for compensation.
    const failedStep = items.some(
      (item) => item.outcome !== 'committed' && item.reason !== 'step_receipt_invalid',
    );
    const committedStep = items.some((item) => item.outcome === 'committed');
    const status = index.records.get(proposal)?.status;
    if (
      failedStep &&
      committedStep &&
      !['compensation_required', 'compensated', 'partially_succeeded'].includes(status ?? '')
    ) {
      violations.push(
        index.about(
          INVARIANT,
          proposal,
          `${proposal} had a failed step after a committed one but ends ${status}`,
        ),
      );
    }
  }
  return violations;
}
