/**
 * I5 no blind resend: the provider write attempts per effect never exceed the ledger's
 * `commit_started`; a proposal's extra starts need `resend_allowed`, and each of those needs a
 * final absence observed by verification before it.
 */
import { type EvidenceModel, WRITE_METHODS } from '../evidence-model.js';
import type { InvariantVerdict } from '../report-types.js';
import { short, verdictFrom } from './invariant-kit.js';

export function judgeNoBlindResend(model: EvidenceModel): InvariantVerdict {
  const problems: string[] = [];
  const attempts = new Map<string, { effect: string; operation: string; count: number }>();
  for (const request of model.requests) {
    if (
      request.effectKey === null ||
      !WRITE_METHODS.has(request.method) ||
      request.operation === null ||
      request.effectKey.endsWith(':compensation')
    ) {
      continue;
    }
    const operation = `${request.provider}.${request.operation}`;
    const key = `${request.effectKey}|${operation}`;
    const entry = attempts.get(key) ?? { effect: request.effectKey, operation, count: 0 };
    entry.count += 1;
    attempts.set(key, entry);
  }
  for (const { effect, operation, count } of attempts.values()) {
    const started = model.startedByEffect.get(effect)?.length ?? 0;
    if (count > started) {
      problems.push(
        `the provider saw ${count} ${operation} attempt(s) for effect ${short(effect)} but the ledger started ${started}`,
      );
    }
  }
  for (const replay of model.replays.values()) {
    const starts = replay.decisionPath.filter((t) => t === 'commit_started').length;
    const resends = replay.decisionPath.filter((t) => t === 'resend_allowed').length;
    if (starts > 1 + resends) {
      problems.push(
        `${replay.proposal} started ${starts} commits with ${resends} allowed resend(s)`,
      );
    }
    for (const [index, event] of replay.events.entries()) {
      if (event.type !== 'resend_allowed') continue;
      const observed = replay.events
        .slice(0, index)
        .reverse()
        .find((e) => e.type === 'verification_observed');
      if (observed?.data.result !== 'absent' || observed.data.final !== true) {
        problems.push(`${replay.proposal} resent without a final absence from the provider`);
      }
    }
  }
  const unknowns = model.events.filter(
    (e) => e.type === 'commit_outcome_unknown' || e.type === 'lease_expired',
  ).length;
  const total = [...attempts.values()].reduce((sum, entry) => sum + entry.count, 0);
  return verdictFrom(
    'I5',
    problems,
    true,
    `${total} provider write attempt(s), none beyond the ledger's commit_started; ${unknowns} unknown outcome(s) went to verification`,
  );
}
