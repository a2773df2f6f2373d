/** I8 private stays private: no private value of the case in the ledger or the guard's events. */
import type { Violation } from '../schedule-evidence.js';
import type { EvidenceIndex } from './evidence-index.js';

export function checkPrivateStaysPrivate(index: EvidenceIndex): Violation[] {
  const { evidence } = index;
  if (evidence.privateValues.length === 0) return [];
  const ledger = JSON.stringify(evidence.events);
  const events = JSON.stringify(evidence.sinkEvents);
  for (const secret of evidence.privateValues) {
    if (ledger.includes(secret) || events.includes(secret)) {
      return [
        {
          invariant: 'private_stays_private',
          effect: '-',
          message: `a private value of the case appears in the ${ledger.includes(secret) ? 'ledger' : 'events'}`,
        },
      ];
    }
  }
  return [];
}
