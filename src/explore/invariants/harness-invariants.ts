/**
 * Invariants about the schedule itself: liveness after the faults heal, crash isolation (nothing
 * of a crashed incarnation acts again), and the tape as the only source of time and chance.
 */
import type { Violation } from '../schedule-evidence.js';
import type { EvidenceIndex } from './evidence-index.js';

export function checkLiveness(index: EvidenceIndex): Violation[] {
  const { evidence } = index;
  if (!evidence.faultPhaseFinished) {
    return [
      {
        invariant: 'liveness',
        effect: '-',
        message: 'the fault phase did not finish within its step bound (a livelock)',
      },
    ];
  }
  return evidence.unsettled
    .slice(0, 1)
    .map(({ proposal, status }) =>
      index.about(
        'liveness',
        proposal,
        `${proposal} is still ${status} after the faults healed and the liveness phase ran`,
      ),
    );
}

export function checkCrashIsolation(index: EvidenceIndex): Violation[] {
  return index.evidence.zombies.slice(0, 1).map((zombie) => ({
    invariant: 'crash_isolation',
    effect: '-',
    message: `${zombie.actor.name} of a crashed ${zombie.actor.process} incarnation ran "${zombie.label}" after the crash`,
  }));
}

export function checkTapeOnly(index: EvidenceIndex): Violation[] {
  const [first] = index.evidence.escapes;
  return first === undefined
    ? []
    : [
        {
          invariant: 'tape_only',
          effect: '-',
          message: `simulated code called ${first} (${index.evidence.escapes.length} escape(s))`,
        },
      ];
}
