/**
 * Recording what an executor, verifier or compensator found, against the lease it held: if
 * someone took the proposal over after the lease ran out, the finding is kept as a late
 * observation and nothing else changes.
 */
import type { ActionDefinition } from '../action.js';
import type { JsonValue } from '../canonical-json.js';
import type { LedgerEventDraft } from '../ledger.js';
import type { CommitDurability, ProposalRecord } from '../store.js';
import type { LedgerEventType, ProposalStatus } from '../vocabulary.js';
import {
  after,
  commit,
  draft,
  type GuardContext,
  reload,
  resultOf,
  successor,
  update,
} from './guard-context.js';
import type { GuardResult } from './guard-types.js';
import { errorTag } from './host-text.js';
import { outputPart } from './proposal-snapshot.js';

/**
 * Records a result against the lease we hold, or as a late observation if we lost it. The
 * result carries the record's private output when it has one. `durability` applies to the
 * result's own commit only (decision 124); a late observation is always synced.
 */
export async function recordLeased(
  context: GuardContext,
  action: ActionDefinition,
  held: ProposalRecord,
  next: ProposalRecord,
  events: LedgerEventDraft[],
  lateData: Record<string, JsonValue>,
  durability: CommitDurability = 'synced',
): Promise<GuardResult> {
  const written = await update(context, held, next, { events, durability });
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

/** What to record when the real finding cannot be: a status and an event, nothing the host gave. */
export interface FallbackRecord {
  readonly status: ProposalStatus;
  readonly event: LedgerEventType;
  readonly reasonCode: string;
  readonly dueAtMs: number | null;
  /** More event data, from the guard only. */
  readonly data?: Record<string, JsonValue>;
}

/**
 * Records a finding with `record`; if that throws (a value nobody foresaw, a bug), records
 * `fallback` against the lease instead — carrying only the guard's own codes — so an outcome
 * the host already caused is never left unrecorded in `executing`. If the fallback cannot be
 * recorded either (the store is down), the original error is thrown and the lease's end hands
 * the proposal to a reconciler.
 */
export async function recordOrFallBack(
  context: GuardContext,
  action: ActionDefinition,
  held: ProposalRecord,
  record: () => Promise<GuardResult>,
  fallback: FallbackRecord,
): Promise<GuardResult> {
  try {
    return await record();
  } catch (error) {
    const next = successor(context, held, {
      status: fallback.status,
      reasonCode: fallback.reasonCode,
      lease: null,
      dueAtMs: fallback.dueAtMs,
    });
    const data = {
      ...fallback.data,
      reasonCode: fallback.reasonCode,
      cause: `guard_error${errorTag(error)}`,
    };
    let written: Awaited<ReturnType<typeof update>>;
    try {
      written = await update(context, held, next, {
        events: [draft(context, fallback.event, held.proposal, action.typeName, data, after(next))],
      });
    } catch {
      throw error;
    }
    return written.kind === 'committed' ? resultOf(next) : resultOf(await reload(context, held));
  }
}
