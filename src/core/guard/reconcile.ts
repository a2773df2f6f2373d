/**
 * Reconciliation and the sweeper: an execution whose lease ran out becomes an unknown outcome
 * (its write may or may not have happened), due proposals expire, and due verifications run.
 */
import type { ActionDefinition } from '../action.js';
import type { ProposalRecord } from '../store.js';
import { expire, isExpiredAt } from './expiry.js';
import {
  after,
  checkAction,
  checkArgument,
  draft,
  type GuardContext,
  load,
  MAX_CAS_ATTEMPTS,
  reload,
  resultOf,
  successor,
  update,
} from './guard-context.js';
import type { GuardResult, ProposalAddress } from './guard-types.js';
import { leaseHeld } from './lease.js';
import { VERIFIABLE, verifyStep } from './verification.js';

/** Statuses the sweeper looks at when they are due. */
const SWEPT_STATUSES = [
  'awaiting_authority',
  'authorized',
  'executing',
  'failed_unknown',
  'verification_pending',
] as const;

/** Moves a record one step towards a settled status, as far as time and the provider allow. */
export async function reconcileRecord(
  context: GuardContext,
  action: ActionDefinition,
  start: ProposalRecord,
): Promise<GuardResult> {
  let record = start;
  for (let attempt = 0; attempt < MAX_CAS_ATTEMPTS; attempt++) {
    const now = context.clock.now();
    if (record.status === 'executing') {
      if (leaseHeld(context, record.lease, now)) return resultOf(record);
      // The executor died or hung past its lease: its write may or may not have happened.
      const next = successor(
        context,
        record,
        { status: 'failed_unknown', reasonCode: 'execution_lease_expired', lease: null },
        now,
      );
      const written = await update(context, record, next, {
        events: [
          draft(
            context,
            'lease_expired',
            record.proposal,
            action.typeName,
            { reasonCode: 'execution_lease_expired' },
            after(next),
          ),
        ],
      });
      record = written.kind === 'committed' ? next : await reload(context, record);
      continue;
    }
    if (isExpiredAt(record, now)) return expire(context, action, record);
    if (VERIFIABLE.has(record.status)) return verifyStep(context, action, record, false);
    return resultOf(record);
  }
  return resultOf(record, 'conflict', { reasonCode: 'too_much_contention' });
}

/** Reconciles one proposal. */
export async function reconcileProposal(
  context: GuardContext,
  action: ActionDefinition,
  address: ProposalAddress,
): Promise<GuardResult> {
  return reconcileRecord(context, action, await load(context, action, address));
}

/** Verifies now, ignoring the due time (and resuming an unresolved verification). */
export async function resumeVerification(
  context: GuardContext,
  action: ActionDefinition,
  address: ProposalAddress,
): Promise<GuardResult> {
  const record = await load(context, action, address);
  if (record.status === 'executing') return reconcileRecord(context, action, record);
  return verifyStep(context, action, record, true);
}

/** Expires and reconciles every due proposal of this action type in a tenant. */
export async function sweepDue(
  context: GuardContext,
  action: ActionDefinition,
  options: { readonly tenant: string; readonly limit?: number },
): Promise<readonly GuardResult[]> {
  checkAction(action);
  const tenant = checkArgument('tenant', options.tenant);
  const due = await context.store.listDue({
    tenant,
    statuses: SWEPT_STATUSES,
    dueAtOrBeforeMs: context.clock.now(),
    limit: options.limit ?? 100,
  });
  const results: GuardResult[] = [];
  for (const record of due) {
    if (record.actionType !== action.typeName) continue;
    results.push(await reconcileRecord(context, action, record));
  }
  return results;
}
