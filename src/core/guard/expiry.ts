/** Ending proposals whose time to live has passed before they executed. */
import type { ActionDefinition } from '../action.js';
import type { ProposalRecord } from '../store.js';
import {
  after,
  draft,
  type GuardContext,
  load,
  reload,
  resultOf,
  successor,
  update,
} from './guard-context.js';
import type { GuardResult, ProposalAddress } from './guard-types.js';

/** True when the proposal waits for authority or execution and its time to live has passed. */
export const isExpiredAt = (record: ProposalRecord, nowMs: number): boolean =>
  (record.status === 'awaiting_authority' || record.status === 'authorized') &&
  nowMs >= record.expiresAtMs;

/** Moves a proposal to `expired` (or reports what it became if someone else moved it first). */
export async function expire(
  context: GuardContext,
  action: ActionDefinition,
  record: ProposalRecord,
): Promise<GuardResult> {
  const next = successor(context, record, {
    status: 'expired',
    reasonCode: 'proposal_expired',
    lease: null,
  });
  const written = await update(context, record, next, {
    events: [
      draft(
        context,
        'expired',
        record.proposal,
        action.typeName,
        { reasonCode: 'proposal_expired' },
        after(next),
      ),
    ],
  });
  if (written.kind === 'committed') return resultOf(next);
  return resultOf(await reload(context, record));
}

/** Expires one proposal if it is due. */
export async function expireDue(
  context: GuardContext,
  action: ActionDefinition,
  address: ProposalAddress,
): Promise<GuardResult> {
  const record = await load(context, action, address);
  if (isExpiredAt(record, context.clock.now())) return expire(context, action, record);
  return resultOf(record);
}
