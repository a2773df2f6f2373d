/**
 * I2 authority first: every attributable provider write traces to a `commit_started` that a
 * durable policy `allow` or an `authority_satisfied` preceded.
 */
import { baseEffect, type EvidenceModel } from '../evidence-model.js';
import type { InvariantVerdict } from '../report-types.js';
import { verdictFrom } from './invariant-kit.js';

export function judgeAuthorityFirst(model: EvidenceModel): InvariantVerdict {
  const problems: string[] = [];
  const replays = [...model.replays.values()];
  for (const write of model.writes) {
    if (write.effectKey === null) continue;
    const effect = baseEffect(write.effectKey);
    const authorized = replays
      .filter((replay) => model.effectOf(replay) === effect)
      .some((replay) => {
        const started = replay.events.findIndex((e) => e.type === 'commit_started');
        if (started < 0) return false;
        return replay.events
          .slice(0, started)
          .some(
            (e) =>
              e.type === 'authority_satisfied' ||
              (e.type === 'policy_decided' && e.data.decision === 'allow'),
          );
      });
    if (!authorized) problems.push(`${write.objectId} (${write.provider}.${write.operation})`);
  }
  return verdictFrom(
    'I2',
    problems.length > 0
      ? [
          `write(s) without a recorded authority decision before commit_started: ${problems.join(', ')}`,
        ]
      : [],
    model.writes.some((write) => write.effectKey !== null),
    'every attributable write follows a durable policy allow or authority_satisfied and a commit_started',
  );
}
