/** I4 dry run is dry: a dry-run proposal id has no other ledger event and no provider write. */
import type { Violation } from '../schedule-evidence.js';
import type { EvidenceIndex } from './evidence-index.js';

export function checkDryRunIsDry(index: EvidenceIndex): Violation[] {
  const violations: Violation[] = [];
  for (const [proposal, events] of index.eventsByProposal) {
    if (!events.some((event) => event.type === 'dry_run_predicted')) continue;
    const other = events.find((event) => event.type !== 'dry_run_predicted');
    const wrote = index.evidence.writes.some((write) => write.proposal === proposal);
    if (other !== undefined || wrote) {
      violations.push({
        invariant: 'dry_run_is_dry',
        effect: proposal,
        message: wrote
          ? `dry run ${proposal} reached the provider`
          : `dry run ${proposal} has a ${other?.type} event`,
      });
    }
  }
  return violations;
}
