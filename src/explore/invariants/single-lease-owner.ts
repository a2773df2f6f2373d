/**
 * At most one live lease owner: a lease passes to a new owner only once the previous one has
 * expired (or was released), read from the store probe's log of acknowledged commits; and the
 * ledger never records an execution lease as ending before it began.
 */
import type { Violation } from '../schedule-evidence.js';
import type { EvidenceIndex } from './evidence-index.js';

const INVARIANT = 'single_lease_owner';

export function checkSingleLeaseOwner(index: EvidenceIndex): Violation[] {
  const violations: Violation[] = [];
  for (const commit of index.evidence.commits) {
    const before = commit.previous?.lease ?? null;
    const after = commit.next?.lease ?? null;
    if (after === null || before === null || commit.proposal === null) continue;
    if (after.owner !== before.owner && before.expiresAtMs > commit.atMs) {
      violations.push(
        index.about(
          INVARIANT,
          commit.proposal,
          `${after.owner} took the lease while ${before.owner} still held it until ${new Date(before.expiresAtMs).toISOString()}`,
        ),
      );
    }
  }
  for (const event of index.evidence.events) {
    if (event.type !== 'commit_started' || typeof event.data.leaseExpiresAt !== 'string') continue;
    if (Date.parse(event.data.leaseExpiresAt) <= Date.parse(event.at)) {
      violations.push(
        index.about(
          INVARIANT,
          event.proposal,
          `commit_started at ${event.at} records a lease that ended at ${event.data.leaseExpiresAt}, before it began`,
        ),
      );
    }
  }
  return violations;
}
