/**
 * I2 authority first: every attributable provider write traces to a `commit_started` that a
 * durable policy `allow` or an `authority_satisfied` preceded — and that authority was still in
 * force when the commit started: the proposal had not outlived its time to live, and the
 * approvals counted were within their validity windows.
 */
import { baseEffect, type EvidenceModel } from '../evidence-model.js';
import type { InvariantVerdict } from '../report-types.js';
import { authorityAtCommits, describeLapse } from './authority-in-force.js';
import { storeRecordDisagreement } from './evidence-bindings.js';
import { verdictFrom } from './invariant-kit.js';

export function judgeAuthorityFirst(model: EvidenceModel): InvariantVerdict {
  const problems: string[] = [];
  const replays = [...model.replays.values()];
  const unauthorized: string[] = [];
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
    if (!authorized) unauthorized.push(`${write.objectId} (${write.provider}.${write.operation})`);
  }
  if (unauthorized.length > 0) {
    problems.push(
      `write(s) without a recorded authority decision before commit_started: ${unauthorized.join(', ')}`,
    );
  }
  const written = new Set(
    model.writes.flatMap((write) =>
      write.effectKey === null ? [] : [baseEffect(write.effectKey)],
    ),
  );
  for (const replay of replays)
    problems.push(...storeRecordDisagreement(model, replay, 'expiresAt'));
  for (const commit of authorityAtCommits(model)) {
    if (!written.has(model.effectOf(commit.replay) ?? '')) continue;
    const at = commit.commitStarted.at;
    const proposal = commit.replay.proposal;
    if (
      commit.proposalExpiresAt !== null &&
      Date.parse(at) >= Date.parse(commit.proposalExpiresAt)
    ) {
      problems.push(
        `${proposal} started the commit that wrote at ${at}, after the proposal expired at ${commit.proposalExpiresAt}`,
      );
    }
    if (commit.needsApproval && commit.inForce.length < commit.required) {
      problems.push(
        `${proposal} started the commit that wrote at ${at} with ${commit.inForce.length} of ${commit.required} required approvals in force (${commit.lapsed.map((window) => describeLapse(window, at)).join('; ')})`,
      );
    }
  }
  return verdictFrom(
    'I2',
    problems,
    model.writes.some((write) => write.effectKey !== null),
    'every attributable write follows a durable policy allow or authority_satisfied and a commit_started, with the proposal and its approvals in force',
  );
}
