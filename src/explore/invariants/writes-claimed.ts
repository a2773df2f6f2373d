/**
 * I3 evidence: every provider write that belongs to a proposal is claimed by a receipt in the
 * ledger, and every receipt the ledger claims names something the provider really holds.
 *
 * One exception, by design (decision 041): a provider id the guard cannot record (a lone
 * surrogate, say) is not a receipt. The write is then an unknown outcome, verified, and ends
 * `verification_unresolved` for a person, with the ledger naming the invalid receipt. That write
 * is accounted for without a receipt; any other unclaimed write is a violation.
 */
import type { Violation } from '../schedule-evidence.js';
import type { EvidenceIndex } from './evidence-index.js';

const INVARIANT = 'writes_claimed';
const PROVIDER_OF: Readonly<Record<string, string>> = { refunds: 'payments', tickets: 'crm' };

/** The write's proposal waits for a person because its provider id is not a usable receipt. */
function handedOverForAnInvalidReceipt(index: EvidenceIndex, proposal: string): boolean {
  if (index.records.get(proposal)?.status !== 'verification_unresolved') return false;
  return (index.eventsByProposal.get(proposal) ?? []).some((event) => {
    const code = event.data.reasonCode;
    return typeof code === 'string' && code.endsWith('_receipt_invalid');
  });
}

export function checkWritesClaimed(index: EvidenceIndex): Violation[] {
  const { evidence } = index;
  const violations: Violation[] = [];
  const real = new Set<string>();
  for (const object of evidence.objects)
    real.add(`${PROVIDER_OF[object.collection] ?? object.collection}:${object.id}`);
  const collectionOf = new Map(evidence.objects.map((object) => [object.id, object.collection]));
  for (const write of evidence.writes) {
    if (write.proposal === null || write.kind !== 'create') continue;
    const provider = PROVIDER_OF[collectionOf.get(write.objectId) ?? ''] ?? '';
    if (
      !index.claimedReceipts.has(`${provider}:${write.objectId}`) &&
      !handedOverForAnInvalidReceipt(index, write.proposal)
    ) {
      violations.push(
        index.about(
          INVARIANT,
          write.proposal,
          `write ${write.objectId} (${write.operation}) is in no ledger receipt`,
        ),
      );
    }
  }
  for (const claimed of index.claimedReceipts) {
    if (!real.has(claimed)) {
      violations.push({
        invariant: INVARIANT,
        effect: '-',
        message: `the ledger claims ${claimed}, which the provider does not hold`,
      });
    }
  }
  return violations;
}
