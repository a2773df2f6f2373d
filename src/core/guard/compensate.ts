/**
 * `compensate`: undo a committed write after a later step failed (I6), under a lease, with a
 * compensation idempotency key that stays stable across retries.
 */
import type { ActionDefinition, CompensateResult } from '../action.js';
import { ConfigurationError } from '../errors.js';
import type { ProposalRecord } from '../store.js';
import {
  after,
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
import { addReceipt, normaliseCompensateResult, receiptData } from './host-results.js';
import { errorTag } from './host-text.js';
import { grantLease, heldLease, leaseHeld, underLease } from './lease.js';
import { recordLeased, recordOrFallBack } from './leased-write.js';
import { contextOf, openSnapshot, providerKeyOf } from './proposal-snapshot.js';

type CompensationFinding = CompensateResult;

/** Compensates a proposal in `compensation_required` or `partially_succeeded`. */
export async function compensateProposal(
  context: GuardContext,
  action: ActionDefinition,
  address: ProposalAddress,
): Promise<GuardResult> {
  let record = await load(context, action, address);
  if (action.config.compensate === undefined) {
    throw new ConfigurationError(
      'compensation_not_declared',
      `Failed to compensate: ${action.typeName} declares no compensate function`,
    );
  }
  for (let attempt = 0; attempt < MAX_CAS_ATTEMPTS; attempt++) {
    if (record.status === 'compensated') {
      return resultOf(record, 'replayed', { reasonCode: 'already_compensated' });
    }
    if (record.status !== 'compensation_required' && record.status !== 'partially_succeeded') {
      return resultOf(record);
    }
    const now = context.clock.now();
    if (leaseHeld(context, record.lease, now)) {
      return resultOf(record, 'in_progress', { reasonCode: 'compensation_in_progress' });
    }
    const lease = grantLease(context, action, now);
    const leased = successor(context, record, { lease });
    const compensationIdempotencyKey = providerKeyOf(record, 'compensate');
    const taken = await update(context, record, leased, {
      events: [
        draft(
          context,
          'compensation_started',
          record.proposal,
          action.typeName,
          { compensationIdempotencyKey },
          after(leased),
        ),
      ],
    });
    if (taken.kind !== 'committed') {
      record = await reload(context, record);
      continue;
    }
    const finding = await runCompensator(context, action, leased, compensationIdempotencyKey);
    return recordOrFallBack(
      context,
      action,
      leased,
      () => recordCompensation(context, action, leased, finding),
      {
        status: leased.status,
        event: 'compensation_failed',
        reasonCode: 'compensation_not_recordable',
        dueAtMs: null,
      },
    );
  }
  return resultOf(record, 'conflict', { reasonCode: 'too_much_contention' });
}

async function runCompensator(
  context: GuardContext,
  action: ActionDefinition,
  leased: ProposalRecord,
  compensationIdempotencyKey: string,
): Promise<CompensationFinding> {
  const { input } = openSnapshot(context, action, leased);
  const compensate = action.config.compensate;
  if (compensate === undefined) return { kind: 'failed', reason: 'compensation_not_declared' };
  try {
    const raw = await underLease(
      context,
      heldLease(leased),
      { ...contextOf(leased), receipts: leased.receipts, compensationIdempotencyKey },
      (hostContext) => compensate(input as never, hostContext),
    );
    return normaliseCompensateResult(context.keyRing, raw);
  } catch (error) {
    return { kind: 'failed', reason: `compensator_threw${errorTag(error)}` };
  }
}

function recordCompensation(
  context: GuardContext,
  action: ActionDefinition,
  leased: ProposalRecord,
  finding: CompensationFinding,
): Promise<GuardResult> {
  if (finding.kind === 'compensated') {
    const next = successor(context, leased, {
      status: 'compensated',
      reasonCode: 'compensated',
      lease: null,
      compensationReceipts: addReceipt(leased.compensationReceipts, finding.receipt),
    });
    const data = { receipt: receiptData(finding.receipt) };
    const events = [
      draft(context, 'compensated', leased.proposal, action.typeName, data, after(next)),
    ];
    return recordLeased(context, action, leased, next, events, data);
  }
  const next = successor(context, leased, { reasonCode: finding.reason, lease: null });
  const data = { reasonCode: finding.reason };
  const events = [
    draft(context, 'compensation_failed', leased.proposal, action.typeName, data, after(next)),
  ];
  return recordLeased(context, action, leased, next, events, data);
}
