/**
 * I9 bound authority: an execution that needed approval had, before its `commit_started`, an
 * `authority_satisfied` whose approvers are distinct, recorded approvals, as many as required.
 */
import type { EvidenceModel } from '../evidence-model.js';
import type { InvariantVerdict } from '../report-types.js';
import { verdictFrom, verdictOf } from './invariant-kit.js';

export function judgeBoundAuthority(model: EvidenceModel): InvariantVerdict {
  const needing = [...model.replays.values()].filter((replay) =>
    replay.events.some(
      (e) => e.type === 'policy_decided' && e.data.decision === 'require_approval',
    ),
  );
  const rejected = model.events.filter((e) => e.type === 'authority_rejected');
  if (needing.length === 0 && rejected.length === 0) {
    return verdictOf('I9', 'not_applicable', 'no approval was required or presented');
  }
  const problems: string[] = [];
  let executedWithApproval = 0;
  for (const replay of needing) {
    const started = replay.events.findIndex((e) => e.type === 'commit_started');
    if (started < 0) continue;
    executedWithApproval += 1;
    const before = replay.events.slice(0, started);
    const satisfied = before.filter((e) => e.type === 'authority_satisfied').at(-1);
    const approvers = Array.isArray(satisfied?.data.approvers)
      ? (satisfied.data.approvers as string[])
      : [];
    const required =
      before
        .filter((e) => e.type === 'authority_recorded')
        .map((e) => Number(e.data.required))
        .at(-1) ?? 0;
    const recorded = new Set(
      before
        .filter((e) => e.type === 'authority_recorded' && e.data.decision === 'approve')
        .map((e) => String(e.data.authority)),
    );
    if (satisfied === undefined) {
      problems.push(`${replay.proposal} executed without authority_satisfied`);
    } else if (new Set(approvers).size < required || approvers.some((a) => !recorded.has(a))) {
      problems.push(
        `${replay.proposal} executed with ${new Set(approvers).size} of ${required} distinct recorded approvals`,
      );
    }
  }
  const codes = [...new Set(rejected.map((e) => String(e.data.reasonCode)))];
  return verdictFrom(
    'I9',
    problems,
    true,
    `${executedWithApproval} approval-bound execution(s) each had the required distinct recorded approvals${rejected.length > 0 ? `; ${rejected.length} mismatched evidence rejected (${codes.join(', ')})` : ''}`,
    Number.POSITIVE_INFINITY,
  );
}
