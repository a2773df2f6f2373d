/** I4 dry run is dry: a dry run has no other ledger event and no provider write for its effect. */
import type { EvidenceModel } from '../evidence-model.js';
import type { InvariantVerdict } from '../report-types.js';
import { short, verdictFrom } from './invariant-kit.js';

export function judgeDryRun(model: EvidenceModel): InvariantVerdict {
  const dryRuns = model.events.filter((e) => e.type === 'dry_run_predicted');
  const problems: string[] = [];
  for (const dry of dryRuns) {
    const effect =
      typeof dry.data.semanticEffectKey === 'string' ? dry.data.semanticEffectKey : null;
    if (model.events.some((e) => e.proposal === dry.proposal && e.type !== 'dry_run_predicted')) {
      problems.push(`dry run ${dry.proposal} has other ledger events`);
    }
    const committedElsewhere =
      effect !== null && (model.startedByEffect.get(effect)?.length ?? 0) > 0;
    if (!committedElsewhere && model.writes.some((write) => write.effectKey === effect)) {
      problems.push(`the provider holds a write for dry-run effect ${short(effect ?? '')}`);
    }
  }
  return verdictFrom(
    'I4',
    problems,
    dryRuns.length > 0,
    dryRuns.length > 0
      ? `${dryRuns.length} dry run(s): no claim, no other event, no provider write`
      : 'no dry run in this scenario',
    Number.POSITIVE_INFINITY,
  );
}
