/**
 * I6 no silent partial failure: a proposal whose effect the provider wrote ends in a status that
 * owns the write; when a step failed after a write committed, it ends `compensation_required`
 * (or compensated, or partially succeeded), and `compensation_required` names every write the
 * provider committed for the effect.
 */
import type { EvidenceModel } from '../evidence-model.js';
import type { InvariantVerdict } from '../report-types.js';
import { verdictFrom } from './invariant-kit.js';

/** Statuses that own a committed write. */
const SETTLED_WITH_WRITE: ReadonlySet<string> = new Set([
  'verified',
  'compensation_required',
  'compensated',
  'partially_succeeded',
  'erased',
]);

/** Statuses a failed step may end in. */
const AFTER_FAILED_STEP: ReadonlySet<string> = new Set([
  'compensation_required',
  'compensated',
  'partially_succeeded',
]);

export function judgeNoSilentPartial(model: EvidenceModel): InvariantVerdict {
  const problems: string[] = [];
  let checked = 0;
  for (const replay of model.replays.values()) {
    const effect = model.effectOf(replay);
    if (effect === null || !replay.decisionPath.includes('commit_started')) continue;
    const written = model.writes.filter((write) => write.effectKey === effect);
    if (written.length === 0) continue;
    checked += 1;
    const status = replay.status ?? '';
    if (!SETTLED_WITH_WRITE.has(status)) {
      problems.push(
        `${replay.proposal} ends ${replay.status ?? 'without status'} although the provider committed ${written.map((w) => w.objectId).join(', ')}`,
      );
    }
    const partial = replay.events.find((e) => e.type === 'partial_commit');
    const failedStep =
      Array.isArray(partial?.data.items) &&
      (partial.data.items as { outcome?: string }[]).some((item) => item.outcome !== 'committed');
    if (failedStep && !AFTER_FAILED_STEP.has(status)) {
      problems.push(`${replay.proposal} had a failed step but ends ${replay.status}`);
    }
    if (failedStep && status === 'compensation_required') {
      const event = replay.events.find((e) => e.type === 'compensation_required');
      const listed = JSON.stringify(event?.data.receipts ?? []);
      for (const write of written) {
        if (!listed.includes(write.objectId)) {
          problems.push(
            `compensation_required for ${replay.proposal} does not name receipt ${write.objectId}`,
          );
        }
      }
    }
  }
  const settled = [...model.replays.values()]
    .filter((replay) => replay.decisionPath.includes('commit_started'))
    .map((replay) => replay.status)
    .join(', ');
  return verdictFrom(
    'I6',
    problems,
    checked > 0,
    checked > 0
      ? `${checked} proposal(s) with committed writes all end in a status that owns them (${settled})`
      : 'no committed write in this scenario',
  );
}
