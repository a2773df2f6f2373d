/**
 * I9 bound authority: an execution that needed approval had, before its `commit_started`, an
 * `authority_satisfied` whose approvers are distinct, recorded approvals, as many as required,
 * each within its validity window when the commit started; every recorded approval was valid when
 * it was recorded; and the evidence behind each binds exactly this proposal (tenant, action,
 * effect, commitment, audience); and whatever executed is the input that was proposed (the
 * commitment recorded at `commit_started` is the proposal's).
 */
import type { EvidenceModel } from '../evidence-model.js';
import type { InvariantVerdict } from '../report-types.js';
import { authorityAtCommits, describeLapse, windowCovers, windowOf } from './authority-in-force.js';
import {
  bindingProblems,
  executedInputProblems,
  storeRecordDisagreement,
} from './evidence-bindings.js';
import { verdictFrom, verdictOf } from './invariant-kit.js';

export function judgeBoundAuthority(model: EvidenceModel): InvariantVerdict {
  const recorded = model.events.filter((e) => e.type === 'authority_recorded');
  const rejected = model.events.filter((e) => e.type === 'authority_rejected');
  const commits = authorityAtCommits(model).filter((commit) => commit.needsApproval);
  const needing = [...model.replays.values()].filter((replay) =>
    replay.events.some(
      (e) => e.type === 'policy_decided' && e.data.decision === 'require_approval',
    ),
  );
  const problems: string[] = [...model.replays.values()].flatMap((replay) => [
    ...executedInputProblems(model, replay),
    ...storeRecordDisagreement(model, replay, 'commitment'),
  ]);
  if (
    needing.length === 0 &&
    rejected.length === 0 &&
    recorded.length === 0 &&
    problems.length === 0
  ) {
    return verdictOf('I9', 'not_applicable', 'no approval was required or presented');
  }
  for (const commit of commits) {
    const { replay, commitStarted, counted, required } = commit;
    const recordedApprovers = new Set(
      replay.events
        .slice(0, replay.events.indexOf(commitStarted))
        .filter((e) => e.type === 'authority_recorded' && e.data.decision === 'approve')
        .map((e) => String(e.data.authority)),
    );
    const satisfied = replay.events
      .slice(0, replay.events.indexOf(commitStarted))
      .some((e) => e.type === 'authority_satisfied');
    if (!satisfied) {
      problems.push(`${replay.proposal} executed without authority_satisfied`);
    } else if (new Set(counted).size < required || counted.some((a) => !recordedApprovers.has(a))) {
      problems.push(
        `${replay.proposal} executed with ${new Set(counted).size} of ${required} distinct recorded approvals`,
      );
    }
    for (const window of commit.lapsed) {
      problems.push(
        `${replay.proposal}'s commit_started at ${commitStarted.at} counted an approval out of its window: ${describeLapse(window, commitStarted.at)}`,
      );
    }
  }
  for (const event of recorded) {
    const replay = event.proposal === null ? undefined : model.replays.get(event.proposal);
    if (replay === undefined) continue;
    const window = windowOf(model, event);
    if (!windowCovers(window, event.at)) {
      problems.push(
        `${window.authority}'s ${String(event.data.decision)} of ${replay.proposal} was recorded at ${event.at} out of its window: ${describeLapse(window, event.at)}`,
      );
    }
    problems.push(...bindingProblems(model, replay, event));
  }
  const codes = [...new Set(rejected.map((e) => String(e.data.reasonCode)))];
  return verdictFrom(
    'I9',
    problems,
    true,
    `${commits.length} approval-bound commit(s) each counted the required distinct approvals, all in force; ${recorded.length} recorded approval(s) bind their proposal${rejected.length > 0 ? `; ${rejected.length} mismatched evidence rejected (${codes.join(', ')})` : ''}`,
    Number.POSITIVE_INFINITY,
  );
}
