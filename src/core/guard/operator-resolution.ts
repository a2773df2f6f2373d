/**
 * `resolveOutcome`: an operator settles what the guard cannot — an unknown outcome whose
 * verification gave no answer, or an absence the action does not trust enough to resend — by
 * attesting what they checked at the provider. The attestation is ledger evidence
 * (`operator_resolved`: who, when, what), and the store accepts the move only with it.
 */
import type { ActionDefinition } from '../action.js';
import { checkArgument } from '../argument-checks.js';
import { keyedDigest } from '../commitment.js';
import { ContractViolationError, ProposalNotFoundError } from '../errors.js';
import type { ProposalRecord, Receipt } from '../store.js';
import { OPERATOR_RESOLVABLE_STATUSES } from '../vocabulary.js';
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
import type { GuardResult, ResolveOutcomeOptions } from './guard-types.js';
import { addReceipt, cleanReceipt, receiptData } from './host-results.js';
import { wellFormed } from './host-text.js';
import { leaseHeld } from './lease.js';
import { absenceTrustedFromMs } from './verification.js';

/** The longest operator note accepted (UTF-16 units); it is stored only as a digest. */
export const MAX_OPERATOR_NOTE_LENGTH = 4_096;

/** What the operator attests, checked. */
type Finding =
  | { readonly kind: 'absent' }
  | { readonly kind: 'present'; readonly receipt: Receipt };

const invalid = (message: string): never => {
  throw new ContractViolationError('invalid_argument', `Failed to resolve the outcome: ${message}`);
};

function checkFinding(finding: unknown): Finding {
  const kind = (finding as { kind?: unknown } | null | undefined)?.kind;
  if (kind === 'absent') return { kind };
  if (kind !== 'present') {
    return invalid(`finding must be { kind: 'absent' } or { kind: 'present', receipt }`);
  }
  const receipt = cleanReceipt((finding as { receipt?: unknown }).receipt);
  return receipt === undefined
    ? invalid('a present finding needs the provider receipt: { id, provider } as short text')
    : { kind, receipt };
}

function checkNote(note: unknown): string | undefined {
  if (note === undefined) return undefined;
  if (
    typeof note !== 'string' ||
    note.length > MAX_OPERATOR_NOTE_LENGTH ||
    wellFormed(note) !== note
  ) {
    return invalid(
      `note must be well-formed text of at most ${MAX_OPERATOR_NOTE_LENGTH} characters`,
    );
  }
  return note;
}

/**
 * Records an operator's attested finding for an unknown outcome: `absent` ends the proposal
 * `failed_known` (the effect is released, so a new proposal may take it), `present` ends it
 * `verified` with the receipt. Only principals the action declares in `operators` may do it;
 * anyone else gets not-found. Answers `conflict` when the proposal is not awaiting an operator
 * or (for `absent`) an attempt may still land, `in_progress` while a verification runs.
 */
export async function resolveOutcome(
  context: GuardContext,
  action: ActionDefinition,
  options: ResolveOutcomeOptions,
): Promise<GuardResult> {
  const operator = checkArgument('operator', options.operator);
  const finding = checkFinding(options.finding);
  const note = checkNote(options.note);
  let record = await load(context, action, options);
  if (!(action.config.operators ?? []).includes(operator)) {
    throw new ProposalNotFoundError(options.proposal);
  }
  for (let attempt = 0; attempt < MAX_CAS_ATTEMPTS; attempt++) {
    const refused = await refusal(context, action, record, finding);
    if (refused !== undefined) return refused;
    const next =
      finding.kind === 'absent'
        ? successor(context, record, {
            status: 'failed_known',
            reasonCode: 'operator_attested_absent',
            lease: null,
            dueAtMs: null,
          })
        : successor(context, record, {
            status: 'verified',
            reasonCode: 'operator_attested_present',
            lease: null,
            dueAtMs: null,
            receipts: addReceipt(record.receipts, finding.receipt),
          });
    const written = await update(context, record, next, {
      events: [
        draft(
          context,
          'operator_resolved',
          record.proposal,
          action.typeName,
          {
            reasonCode: next.reasonCode ?? '',
            operator,
            finding: finding.kind,
            previousStatus: record.status,
            ...(finding.kind === 'present' ? { receipt: receiptData(finding.receipt) } : {}),
            ...(note === undefined ? {} : { noteDigest: noteDigest(context, note) }),
          },
          after(next),
        ),
      ],
    });
    if (written.kind === 'committed') return resultOf(next);
    record = await reload(context, record);
  }
  return resultOf(record, 'conflict', { reasonCode: 'too_much_contention' });
}

/** Why this record cannot be resolved now, or undefined when it can. */
async function refusal(
  context: GuardContext,
  action: ActionDefinition,
  record: ProposalRecord,
  finding: Finding,
): Promise<GuardResult | undefined> {
  if (!OPERATOR_RESOLVABLE_STATUSES.has(record.status)) {
    return resultOf(record, 'conflict', { reasonCode: 'not_awaiting_operator' });
  }
  const now = context.clock.now();
  if (leaseHeld(context, record.lease, now)) {
    return resultOf(record, 'in_progress', { reasonCode: 'verification_in_progress' });
  }
  // "Absent" releases the effect for a new write: not while the last attempt may still land.
  if (finding.kind === 'absent' && (await absenceTrustedFromMs(context, action, record)) > now) {
    return resultOf(record, 'conflict', { reasonCode: 'attempt_may_still_land' });
  }
  return undefined;
}

/** A keyed digest of the operator's note: it proves what was written without storing it. */
const noteDigest = (context: GuardContext, note: string): string =>
  keyedDigest(
    context.keyRing,
    'ledger',
    context.keyRing.effectKey,
    'sideguard/operator-note/v1',
    note,
  );
