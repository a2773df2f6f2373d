/**
 * Recording what an executor, verifier or compensator found, against the lease it held: if
 * someone took the proposal over after the lease ran out, the finding is kept as a late
 * observation and nothing else changes.
 */
import type { ActionDefinition } from '../action.js';
import type { JsonValue } from '../canonical-json.js';
import type { LedgerEventDraft } from '../ledger.js';
import type { ProposalRecord } from '../store.js';
import { commit, draft, type GuardContext, reload, resultOf, update } from './guard-context.js';
import type { GuardResult } from './guard-types.js';
import { outputPart } from './proposal-snapshot.js';

/**
 * Records a result against the lease we hold, or as a late observation if we lost it. The
 * result carries the record's private output when it has one.
 */
export async function recordLeased(
  context: GuardContext,
  action: ActionDefinition,
  held: ProposalRecord,
  next: ProposalRecord,
  events: LedgerEventDraft[],
  lateData: Record<string, JsonValue>,
): Promise<GuardResult> {
  const written = await update(context, held, next, { events });
  if (written.kind === 'committed') return resultOf(next, undefined, outputPart(context, next));
  // Someone took over after our lease expired: keep the evidence, change nothing else.
  await commit(context, {
    tenant: held.tenant,
    events: [
      draft(context, 'late_result_observed', held.proposal, action.typeName, {
        reasonCode: 'lease_lost',
        ...lateData,
      }),
    ],
  });
  return resultOf(await reload(context, held));
}
