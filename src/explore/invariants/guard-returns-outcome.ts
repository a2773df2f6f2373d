/**
 * The guard returns outcomes: a guard call of a correct host never throws (operating conditions
 * are outcomes), above all not after the provider applied a write it can no longer record.
 */
import type { Violation } from '../schedule-evidence.js';
import type { EvidenceIndex } from './evidence-index.js';

const INVARIANT = 'guard_returns_outcome';

export function checkGuardReturnsOutcome(index: EvidenceIndex): Violation[] {
  const { evidence } = index;
  const violations: Violation[] = [];
  for (const failure of evidence.failures) {
    if (failure.code === 'explore_ambient_access') continue; // reported as tape_only
    const written = evidence.writes.find(
      (write) =>
        write.step <= failure.step &&
        write.proposal !== null &&
        write.proposal === failure.proposal,
    );
    const proposal =
      failure.proposal !== null && index.records.has(failure.proposal) ? failure.proposal : null;
    const base = index.about(INVARIANT, proposal, '');
    violations.push({
      ...base,
      effect: proposal === null ? (failure.proposal ?? '-') : base.effect,
      message: `${failure.call} by ${failure.actor} threw ${failure.code}${written === undefined ? '' : ` after the provider wrote ${written.objectId}`}: ${failure.message.slice(0, 200)}`,
    });
  }
  return violations;
}
