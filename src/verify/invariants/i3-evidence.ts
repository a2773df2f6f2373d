/**
 * I3 evidence: every attributable provider write is claimed by a ledger receipt, every receipt
 * the ledger claims was really issued by the provider, and `committed` never precedes
 * `commit_started`.
 */
import type { EvidenceModel } from '../evidence-model.js';
import type { InvariantVerdict } from '../report-types.js';
import { verdictFrom } from './invariant-kit.js';

export function judgeEvidence(model: EvidenceModel): InvariantVerdict {
  const unclaimed = model.writes.filter(
    (write) =>
      write.effectKey !== null && !model.claimed.has(`${write.provider}:${write.objectId}`),
  );
  const real = new Set(model.writes.map((write) => `${write.provider}:${write.objectId}`));
  const phantom = [...model.claimed].filter((id) => !real.has(id));
  const orphanCommitted = [...model.replays.values()].filter(
    (replay) =>
      replay.decisionPath.includes('committed') &&
      replay.decisionPath.indexOf('commit_started') > replay.decisionPath.indexOf('committed'),
  );
  return verdictFrom(
    'I3',
    [
      ...unclaimed.map((write) => `write ${write.objectId} is not in the ledger`),
      ...phantom.map((id) => `the ledger claims ${id}, which the provider never issued`),
      ...orphanCommitted.map((r) => `${r.proposal} recorded committed without commit_started`),
    ],
    model.claimed.size > 0 || model.writes.length > 0,
    `${model.claimed.size} receipt(s) claimed by the ledger, all issued by the provider; every attributable write is claimed`,
  );
}
