/**
 * Recording what the executor reported, against the lease it ran under: an accepted write is
 * confirmed with the provider at once, a known failure releases the effect, an unknown outcome
 * goes to verification (I5), and a partial result ends in `partially_succeeded` or
 * `compensation_required` with its receipts (I6).
 */
import type { ActionDefinition, ActionInput } from '../action.js';
import type { LedgerEventDraft } from '../ledger.js';
import { copyRecord } from '../record-copy.js';
import type { ProposalRecord, Receipt } from '../store.js';
import type { ProposalStatus } from '../vocabulary.js';
import { after, draft, type GuardContext, reload, stampLast, successor } from './guard-context.js';
import type { GuardResult } from './guard-types.js';
import {
  addReceipt,
  type CheckedOutput,
  type NormalisedExecuteResult,
  receiptData,
  STEP_RECEIPT_INVALID,
  verificationData,
} from './host-results.js';
import { recordLeased, recordOrFallBack } from './leased-write.js';
import { callVerify, keptOutput, verifyStep } from './verification.js';

type Partial = Extract<NormalisedExecuteResult, { kind: 'partial' }>;

/**
 * The outcome of a single write (accepted, failed, unknown) is committed `deferred` (decision
 * 124): if an OS crash or power loss drops it, the proposal is left `executing` with its
 * `commit_started`, the lease runs out and verification asks the provider (I5) — the same state
 * as a process crash between the provider call and this commit. A partial result is synced:
 * its step receipts (I6) come from the executor alone and verification could not rebuild them.
 */
const OUTCOME_DURABILITY = 'deferred';

/**
 * Records one executor result for a proposal claimed as `claimed`. Whatever goes wrong while
 * recording it, the proposal leaves `executing` as an unknown outcome (then verified): the
 * executor has run, so its effect may exist.
 */
export function recordExecution<A extends ActionDefinition>(
  context: GuardContext,
  action: A,
  claimed: ProposalRecord,
  input: ActionInput<A>,
  outcome: NormalisedExecuteResult,
): Promise<GuardResult> {
  return recordOrFallBack(
    context,
    action,
    claimed,
    () => recordOutcome(context, action, claimed, input, outcome),
    {
      status: 'failed_unknown',
      event: 'commit_outcome_unknown',
      reasonCode: 'outcome_not_recordable',
      dueAtMs: context.clock.now() + action.verificationDelayMs,
    },
  );
}

async function recordOutcome<A extends ActionDefinition>(
  context: GuardContext,
  action: A,
  claimed: ProposalRecord,
  input: ActionInput<A>,
  outcome: NormalisedExecuteResult,
): Promise<GuardResult> {
  switch (outcome.kind) {
    case 'accepted':
      return recordAccepted(context, action, claimed, input, outcome);
    case 'failed_known':
      return recordFailure(context, action, claimed, 'failed_known', outcome.reason, null);
    case 'failed_unknown': {
      const dueAtMs = context.clock.now() + action.verificationDelayMs;
      const recorded = await recordFailure(
        context,
        action,
        claimed,
        'failed_unknown',
        outcome.reason,
        dueAtMs,
      );
      return verifyUnknownIfDue(context, action, claimed, recorded);
    }
    case 'partial':
      return recordPartial(context, action, claimed, outcome);
  }
}

/**
 * A write that failed (`failed_known`: the effect is released) or whose outcome is unknown
 * (`failed_unknown`: verification is due at `verifyAtMs`), recorded under the lease.
 */
function recordFailure<A extends ActionDefinition>(
  context: GuardContext,
  action: A,
  claimed: ProposalRecord,
  status: 'failed_known' | 'failed_unknown',
  reasonCode: string,
  verifyAtMs: number | null,
): Promise<GuardResult> {
  const next = successor(context, claimed, { status, reasonCode, lease: null }, verifyAtMs);
  const event = status === 'failed_known' ? 'commit_failed' : 'commit_outcome_unknown';
  const events = [
    draft(context, event, claimed.proposal, action.typeName, { reasonCode }, after(next)),
  ];
  return recordLeased(context, action, claimed, next, events, { reasonCode }, OUTCOME_DURABILITY);
}

/** The provider accepted the write: confirm a presence at once (the settling window only delays trusting an absence). */
async function recordAccepted<A extends ActionDefinition>(
  context: GuardContext,
  action: A,
  claimed: ProposalRecord,
  input: ActionInput<A>,
  outcome: { readonly receipt: Receipt; readonly output: CheckedOutput },
): Promise<GuardResult> {
  const id = claimed.proposal;
  const type = action.typeName;
  const receipts = addReceipt(claimed.receipts, outcome.receipt);
  const events: LedgerEventDraft[] = [
    draft(context, 'committed', id, type, {
      receipt: receiptData(outcome.receipt),
      ...(outcome.output.kind === 'refused' ? { outputNotKept: outcome.output.problem } : {}),
    }),
  ];
  const withOutput = copyRecord(claimed, { output: keptOutput(context, claimed, outcome.output) });
  const verified = await callVerify(
    context,
    action,
    input,
    copyRecord(withOutput, { receipts }),
    1,
  );
  events.push(draft(context, 'verification_observed', id, type, verificationData(verified, 1)));
  const next =
    verified.kind === 'present'
      ? successor(context, withOutput, {
          status: 'verified',
          reasonCode: 'provider_confirmed',
          lease: null,
          verificationAttempts: 1,
          receipts: addReceipt(receipts, verified.receipt),
          output: keptOutput(context, withOutput, verified.output),
        })
      : successor(
          context,
          withOutput,
          {
            status: 'verification_pending',
            reasonCode: 'provider_not_yet_confirmed',
            lease: null,
            verificationAttempts: 1,
            receipts,
          },
          context.clock.now() + action.verificationDelayMs,
        );
  stampLast(events, next);
  return recordLeased(
    context,
    action,
    claimed,
    next,
    events,
    { receipt: receiptData(outcome.receipt) },
    OUTCOME_DURABILITY,
  );
}

function partialStatus(
  context: GuardContext,
  action: ActionDefinition,
  outcome: Partial,
): { readonly status: ProposalStatus; readonly reasonCode: string } {
  const committed = outcome.items.filter((item) => item.outcome === 'committed').length;
  const unknown = outcome.items.some((item) => item.outcome === 'unknown');
  const onlyUnrecordable = outcome.items.every(
    (item) =>
      item.outcome === 'committed' ||
      (item.outcome === 'unknown' && item.reason === STEP_RECEIPT_INVALID),
  );
  if (committed === outcome.items.length) {
    return { status: 'verification_pending', reasonCode: 'all_steps_committed' };
  }
  // Every step the host reported committed, but some receipt cannot be recorded: those writes
  // landed, so the effect is verified (and waits for an operator if the verifier cannot name a
  // usable receipt either) — never compensated and closed without a receipt.
  if (onlyUnrecordable && !context.broken('unknown_step_counted_as_failed')) {
    return { status: 'failed_unknown', reasonCode: STEP_RECEIPT_INVALID };
  }
  if (committed === 0) {
    return unknown
      ? { status: 'failed_unknown', reasonCode: 'steps_outcome_unknown' }
      : { status: 'failed_known', reasonCode: 'all_steps_failed' };
  }
  return action.effectKind === 'itemized'
    ? { status: 'partially_succeeded', reasonCode: 'some_steps_failed' }
    : { status: 'compensation_required', reasonCode: 'later_step_failed' };
}

/** Several steps, some committed: record every receipt; never a silent partial failure (I6). */
async function recordPartial(
  context: GuardContext,
  action: ActionDefinition,
  claimed: ProposalRecord,
  outcome: Partial,
): Promise<GuardResult> {
  const id = claimed.proposal;
  const type = action.typeName;
  let receipts = [...claimed.receipts];
  for (const item of outcome.items) {
    if (item.outcome === 'committed' && item.receipt) receipts = addReceipt(receipts, item.receipt);
  }
  const itemsData = outcome.items.map((item) => ({
    step: item.step,
    outcome: item.outcome,
    ...(item.receipt ? { receipt: receiptData(item.receipt) } : {}),
    ...(item.reason ? { reason: item.reason } : {}),
  }));
  const { status, reasonCode } = partialStatus(context, action, outcome);
  const next = successor(
    context,
    claimed,
    { status, reasonCode, lease: null, receipts },
    context.clock.now() + action.verificationDelayMs,
  );
  const events: LedgerEventDraft[] = [
    draft(context, 'partial_commit', id, type, { reasonCode, items: itemsData }),
  ];
  if (status === 'compensation_required') {
    events.push(
      draft(context, 'compensation_required', id, type, {
        reasonCode,
        receipts: receipts.map(receiptData),
      }),
    );
  }
  stampLast(events, next);
  const recorded = await recordLeased(context, action, claimed, next, events, { items: itemsData });
  // All steps committed: confirm at once, as for an accepted write.
  if (recorded.status === 'verification_pending') {
    return verifyStep(context, action, await reload(context, claimed), true);
  }
  return verifyUnknownIfDue(context, action, claimed, recorded);
}

/**
 * An unknown outcome with no settling window is verified at once. With the
 * `resend_without_verification` breakage it goes straight back to `authorized` instead.
 */
async function verifyUnknownIfDue(
  context: GuardContext,
  action: ActionDefinition,
  claimed: ProposalRecord,
  recorded: GuardResult,
): Promise<GuardResult> {
  if (recorded.status !== 'failed_unknown') return recorded;
  const blind = context.broken('resend_without_verification');
  if (action.verificationDelayMs !== 0 && !blind) return recorded;
  return verifyStep(context, action, await reload(context, claimed), blind);
}
