/**
 * Verification: after an unknown outcome the guard asks the provider instead of resending (I5).
 * One attempt runs under a lease; a final absence allows a resend only once the settling window
 * has passed and the action declared resends safe.
 */
import type { ActionDefinition, ActionInput } from '../action.js';
import type { SealedEnvelope } from '../envelope.js';
import type { LedgerEventDraft } from '../ledger.js';
import type { ProposalRecord } from '../store.js';
import type { ProposalStatus } from '../vocabulary.js';
import {
  after,
  draft,
  type GuardContext,
  MAX_CAS_ATTEMPTS,
  reload,
  resultOf,
  stampLast,
  successor,
  update,
} from './guard-context.js';
import type { GuardResult } from './guard-types.js';
import {
  addReceipt,
  type CheckedOutput,
  type NormalisedVerifyResult,
  normaliseVerifyResult,
  verificationData,
} from './host-results.js';
import { errorTag } from './host-text.js';
import { attemptRunningHere, grantLease, heldLease, leaseHeld, underLease } from './lease.js';
import { recordLeased, recordOrFallBack } from './leased-write.js';
import { contextOf, openSnapshot, sealOutput } from './proposal-snapshot.js';

/** Statuses whose outcome is unknown and which verification may settle. */
export const VERIFIABLE: ReadonlySet<ProposalStatus> = new Set([
  'failed_unknown',
  'verification_pending',
  'verification_unresolved',
]);

/**
 * Calls the host's verifier under the lease `record` holds; a throw is an unknown answer, never
 * a failure of the guard.
 */
export async function callVerify<A extends ActionDefinition>(
  context: GuardContext,
  action: A,
  input: ActionInput<A>,
  record: ProposalRecord,
  attempt: number,
): Promise<NormalisedVerifyResult> {
  const lease = heldLease(record);
  try {
    return normaliseVerifyResult(
      context.keyRing,
      await underLease(
        context,
        lease,
        { ...contextOf(record), receipts: record.receipts, attempt },
        (hostContext) => action.config.verify(input as never, hostContext),
      ),
    );
  } catch (error) {
    return { kind: 'unknown', reason: `verifier_threw${errorTag(error)}` };
  }
}

/**
 * The record's sealed output after a write was confirmed: the one it already has, else the
 * confirmed output, sealed.
 */
export function keptOutput(
  context: GuardContext,
  record: ProposalRecord,
  output: CheckedOutput,
): SealedEnvelope | null {
  if (record.output !== undefined && record.output !== null) return record.output;
  return output.kind === 'kept' ? sealOutput(context, record, output.output) : null;
}

/**
 * From when the provider's final "absent" may be trusted (epoch ms): once the settling window
 * after the latest `commit_started` has passed AND that attempt's lease has ended, so no earlier
 * attempt can still be running (window 2). Never while an executor call for the proposal still
 * runs in this process, whatever its lease says.
 */
export async function absenceTrustedFromMs(
  context: GuardContext,
  action: ActionDefinition,
  record: ProposalRecord,
): Promise<number> {
  if (attemptRunningHere(context, record)) return Number.POSITIVE_INFINITY;
  const events = await context.store.readLedger({
    tenant: record.tenant,
    proposal: record.proposal,
  });
  const started = events.filter((event) => event.type === 'commit_started').at(-1);
  if (started === undefined) return Number.POSITIVE_INFINITY;
  const startedAtMs = Date.parse(started.at);
  const leaseEnd = started.data.leaseExpiresAt;
  const leaseEndsAtMs = typeof leaseEnd === 'string' ? Date.parse(leaseEnd) : Number.NaN;
  const trusted = Math.max(startedAtMs + action.verificationDelayMs, leaseEndsAtMs);
  return Number.isNaN(trusted) ? Number.POSITIVE_INFINITY : trusted;
}

/**
 * Whether the provider's answer is a final absence. With the `unknown_treated_as_absent`
 * breakage, "unknown" and "not yet" count as final too.
 */
function finalAbsence(context: GuardContext, verified: NormalisedVerifyResult): boolean {
  if (verified.kind === 'absent' && verified.final) return true;
  return verified.kind !== 'present' && context.broken('unknown_treated_as_absent');
}

/** One verification attempt under a lease. `force` ignores the due time (and resumes unresolved). */
export async function verifyStep(
  context: GuardContext,
  action: ActionDefinition,
  start: ProposalRecord,
  force: boolean,
): Promise<GuardResult> {
  let record = start;
  for (let attempt = 0; attempt < MAX_CAS_ATTEMPTS; attempt++) {
    if (!VERIFIABLE.has(record.status)) return resultOf(record);
    if (record.status === 'verification_unresolved' && !force) return resultOf(record);
    const now = context.clock.now();
    if (leaseHeld(context, record.lease, now)) {
      return resultOf(record, 'in_progress', { reasonCode: 'verification_in_progress' });
    }
    if (!force && record.dueAtMs !== null && record.dueAtMs > now) return resultOf(record);
    const lease = grantLease(context, action, now);
    const leased = successor(context, record, { lease, dueAtMs: lease.expiresAtMs });
    const number =
      record.status === 'verification_unresolved'
        ? action.maxVerificationAttempts
        : record.verificationAttempts;
    const taken = await update(context, record, leased, {
      events: [
        draft(
          context,
          'verification_started',
          record.proposal,
          action.typeName,
          { attempt: number + 1 },
          after(leased),
        ),
      ],
    });
    if (taken.kind !== 'committed') {
      record = await reload(context, record);
      continue;
    }
    // Outside the fallback: a snapshot that fails its commitment must fail loudly.
    const { input } = openSnapshot(context, action, leased);
    const verified = context.broken('resend_without_verification')
      ? undefined
      : await callVerify(context, action, input, leased, number + 1);
    return recordOrFallBack(
      context,
      action,
      leased,
      () => recordVerification(context, action, leased, number + 1, verified),
      {
        status: leased.status,
        event: 'verification_observed',
        reasonCode: 'verification_not_recordable',
        dueAtMs: now + Math.max(action.verificationDelayMs, 1),
        data: { result: 'unknown', attempt: number + 1 },
      },
    );
  }
  return resultOf(record, 'conflict', { reasonCode: 'too_much_contention' });
}

/**
 * Records what the provider said for a leased record. With the `resend_without_verification`
 * breakage the provider was not asked (`verified` is undefined) and a resend is allowed at once.
 */
async function recordVerification(
  context: GuardContext,
  action: ActionDefinition,
  leased: ProposalRecord,
  attemptNumber: number,
  verified: NormalisedVerifyResult | undefined,
): Promise<GuardResult> {
  if (verified === undefined) return allowResend(context, action, leased, []);
  const events: LedgerEventDraft[] = [
    draft(
      context,
      'verification_observed',
      leased.proposal,
      action.typeName,
      verificationData(verified, attemptNumber),
    ),
  ];
  if (verified.kind === 'present') {
    const next = successor(context, leased, {
      status: 'verified',
      reasonCode: 'provider_confirmed',
      lease: null,
      verificationAttempts: attemptNumber,
      receipts: addReceipt(leased.receipts, verified.receipt),
      output: keptOutput(context, leased, verified.output),
    });
    stampLast(events, next);
    return recordLeased(context, action, leased, next, events, {});
  }
  return recordNotPresent(context, action, leased, events, verified, attemptNumber);
}

/** The provider did not confirm the effect: resend, wait for the next attempt, or give up. */
async function recordNotPresent(
  context: GuardContext,
  action: ActionDefinition,
  leased: ProposalRecord,
  events: LedgerEventDraft[],
  verified: NormalisedVerifyResult,
  attemptNumber: number,
): Promise<GuardResult> {
  const now = context.clock.now();
  const absent = finalAbsence(context, verified);
  const trustedFromMs = absent ? await absenceTrustedFromMs(context, action, leased) : now;
  const settled = absent && trustedFromMs <= now;
  if (settled && action.allowResendAfterFinalAbsence) {
    return allowResend(context, action, leased, events);
  }
  const frozen = context.broken('verification_counter_frozen');
  const exhausted = !frozen && attemptNumber >= action.maxVerificationAttempts;
  const verificationAttempts = frozen ? leased.verificationAttempts : attemptNumber;
  let next: ProposalRecord;
  // An unresolved verification never goes back to pending: only a person or the provider ends it.
  if (settled || exhausted || leased.status === 'verification_unresolved') {
    const reasonCode = settled
      ? 'absent_but_resend_not_declared'
      : 'verification_attempts_exhausted';
    next = successor(context, leased, {
      status: 'verification_unresolved',
      reasonCode,
      lease: null,
      verificationAttempts,
    });
    events.push(
      draft(context, 'verification_unresolved', leased.proposal, action.typeName, {
        reasonCode,
        attempts: attemptNumber,
      }),
    );
  } else {
    // A final absence reported too early is asked again once it can be trusted.
    const nextAttemptAtMs = absent
      ? Number.isFinite(trustedFromMs)
        ? trustedFromMs
        : now + action.executionLeaseMs
      : now + Math.max(action.verificationDelayMs, 1);
    next = successor(
      context,
      leased,
      {
        status: 'verification_pending',
        reasonCode: absent ? 'absence_not_yet_trusted' : 'awaiting_provider_confirmation',
        lease: null,
        verificationAttempts,
      },
      nextAttemptAtMs,
    );
  }
  stampLast(events, next);
  return recordLeased(context, action, leased, next, events, {});
}

/** The provider says the effect is finally absent and the action declared resends safe (I5). */
async function allowResend(
  context: GuardContext,
  action: ActionDefinition,
  leased: ProposalRecord,
  events: LedgerEventDraft[],
): Promise<GuardResult> {
  const next = successor(context, leased, {
    status: 'authorized',
    reasonCode: 'provider_reports_absent',
    lease: null,
    verificationAttempts: 0,
    resendGeneration: leased.resendGeneration + 1,
    output: null,
  });
  events.push(
    draft(context, 'resend_allowed', leased.proposal, action.typeName, {
      reasonCode: 'provider_reports_absent',
      resendGeneration: leased.resendGeneration + 1,
    }),
  );
  stampLast(events, next);
  const recorded = await recordLeased(context, action, leased, next, events, {});
  return recorded.status === 'authorized' ? { ...recorded, outcome: 'resend_allowed' } : recorded;
}
