/** Replaying the ledger reproduces every stored status (the status and its event commit together). */
import type { Violation } from '../schedule-evidence.js';
import type { EvidenceIndex } from './evidence-index.js';

export function checkStatusReplays(index: EvidenceIndex): Violation[] {
  const violations: Violation[] = [];
  for (const record of index.evidence.records) {
    let replayed: string | null = null;
    for (const event of index.eventsByProposal.get(record.proposal) ?? []) {
      if (event.status !== null) replayed = event.status;
    }
    if (replayed !== record.status) {
      violations.push(
        index.about(
          'status_replays',
          record.proposal,
          `the store says ${record.status} but the ledger replays to ${replayed ?? 'nothing'}`,
        ),
      );
    }
  }
  return violations;
}
