/**
 * `recordAuthority`: checks one piece of approval evidence against the proposal's bindings
 * (I9), stores it with its ledger event, and moves the proposal when the M-of-N tally is
 * satisfied or vetoed.
 */

import type { ActionDefinition, ApprovalRule } from '../action.js';
import { checkArgument, checkTenant } from '../argument-checks.js';
import { keyedDigest } from '../commitment.js';
import { AuthorityEvidenceError, ContractViolationError } from '../errors.js';
import {
  type AuthorityEvidence,
  authorityEvidenceSchema,
  checkEvidence,
  evidenceDigest,
  evidenceWindowProblem,
} from '../evidence.js';
import type { LedgerEventDraft } from '../ledger.js';
import { evidenceRowDigest } from '../record-mac.js';
import type { AuthorityEvidenceRecord, ProposalRecord } from '../store.js';
import type { ProposalStatus } from '../vocabulary.js';
import { expire, isExpiredAt } from './expiry.js';
import {
  after,
  checkAction,
  commit,
  draft,
  type GuardContext,
  load,
  MAX_CAS_ATTEMPTS,
  outcomeOfStatus,
  reload,
  resultOf,
  successor,
} from './guard-context.js';
import type { GuardResult, RecordAuthorityOptions } from './guard-types.js';
import { shortText } from './host-results.js';
import { wellFormed } from './host-text.js';
import { tallyInForce } from './tally.js';

/** Who presented the evidence, for the rejection event. */
interface Presenter {
  readonly tenant: string;
  readonly authenticated: string;
  readonly action: ActionDefinition;
}

async function rejectEvidence(
  context: GuardContext,
  who: Presenter,
  record: ProposalRecord,
  code: string,
  detail: string,
): Promise<GuardResult> {
  await commit(context, {
    tenant: who.tenant,
    events: [
      draft(context, 'authority_rejected', record.proposal, who.action.typeName, {
        reasonCode: code,
        authority: shortText(who.authenticated, 120),
      }),
    ],
  });
  return resultOf(record, 'rejected', {
    reasonCode: code,
    issues: [{ path: '(evidence)', code, message: detail }],
  });
}

/**
 * The evidence as checked. With the `approval_not_bound_to_input` breakage it is taken to bind
 * whatever effect key and commitment the proposal has.
 */
const boundOrNot = (
  context: GuardContext,
  evidence: AuthorityEvidence,
  record: ProposalRecord,
): AuthorityEvidence =>
  context.broken('approval_not_bound_to_input')
    ? {
        ...evidence,
        semanticEffectKey: record.semanticEffectKey,
        proposalCommitment: record.commitment,
      }
    : evidence;

/** The longest approver note accepted (UTF-16 units); it is stored only as a digest. */
export const MAX_AUTHORITY_NOTE_LENGTH = 1_000;

/** A keyed digest of the approver's note: it proves what was written without storing it. */
function authorityNoteDigest(context: GuardContext, note: unknown): string | undefined {
  if (note === undefined) return undefined;
  if (
    typeof note !== 'string' ||
    note.length > MAX_AUTHORITY_NOTE_LENGTH ||
    wellFormed(note) !== note
  ) {
    throw new ContractViolationError(
      'invalid_argument',
      `Failed to record authority: note must be well-formed text of at most ${MAX_AUTHORITY_NOTE_LENGTH} characters`,
    );
  }
  return keyedDigest(
    context.keyRing,
    'ledger',
    context.keyRing.effectKey,
    'sideguard/authority-note/v1',
    note,
  );
}

/** Records approval or rejection evidence for a proposal. */
export async function recordAuthority(
  context: GuardContext,
  action: ActionDefinition,
  options: RecordAuthorityOptions,
): Promise<GuardResult> {
  checkAction(action);
  const who: Presenter = {
    tenant: checkTenant(options.tenant),
    authenticated: checkArgument('authenticatedAuthority', options.authenticatedAuthority),
    action,
  };
  const raw = options.evidence as { proposal?: unknown } | null | undefined;
  const proposalId = typeof raw === 'object' && raw !== null ? raw.proposal : undefined;
  if (typeof proposalId !== 'string') {
    throw new AuthorityEvidenceError(
      'evidence_malformed',
      'Failed to record authority: evidence must be an object naming its proposal',
    );
  }
  let record = await load(context, action, { tenant: who.tenant, proposal: proposalId });
  const parsed = authorityEvidenceSchema.safeParse(options.evidence);
  if (!parsed.success) {
    return rejectEvidence(
      context,
      who,
      record,
      'evidence_malformed',
      `evidence is malformed: ${shortText(parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '))}`,
    );
  }
  const evidence = parsed.data as AuthorityEvidence;
  const digest = evidenceDigest(evidence);
  const noteDigest = authorityNoteDigest(context, options.note);
  for (let attempt = 0; attempt < MAX_CAS_ATTEMPTS; attempt++) {
    const before = context.clock.now();
    // Authority arriving after the time to live ends the proposal, whatever the evidence says.
    if (isExpiredAt(record, before)) return expire(context, action, record);
    const problem = checkEvidence(boundOrNot(context, evidence, record), {
      tenant: who.tenant,
      record,
      audience: context.audience,
      rule: action.approval,
      authenticatedAuthority: who.authenticated,
      nowMs: before,
    });
    if (problem !== undefined) {
      return rejectEvidence(context, who, record, problem.code, problem.message);
    }
    const stored = await context.store.countedEvidence(record);
    // The time of record is read after the store read, and the time-bound checks run again at
    // it: time passes while the store answers, and evidence that lapsed meanwhile must not be
    // recorded (nor counted) as valid (I9). Nothing is awaited between here and the commit.
    const now = context.broken('record_time_before_store_read') ? before : context.clock.now();
    if (now !== before) {
      if (isExpiredAt(record, now)) return expire(context, action, record);
      const lapsed = evidenceWindowProblem(evidence, now);
      if (lapsed !== undefined) {
        return rejectEvidence(context, who, record, lapsed.code, lapsed.message);
      }
    }
    if (stored.some((e) => e.evidenceDigest === digest)) {
      return resultOf(record, 'replayed', { reasonCode: 'evidence_already_recorded' });
    }
    if (record.status !== 'awaiting_authority' && record.status !== 'authorized') {
      return resultOf(record);
    }
    const rule = action.approval;
    if (rule === undefined) {
      return rejectEvidence(context, who, record, 'approval_not_required', 'no approval rule');
    }
    const evidenceRecord: AuthorityEvidenceRecord = {
      tenant: who.tenant,
      proposal: record.proposal,
      evidenceDigest: digest,
      authority: evidence.authority,
      decision: evidence.decision,
      channelAssurance: evidence.channelAssurance,
      issuedAtMs: Date.parse(evidence.issuedAt),
      expiresAtMs: Date.parse(evidence.expiresAt),
      recordedAtMs: now,
      evidence: evidence as unknown as AuthorityEvidenceRecord['evidence'],
    };
    const written = await storeEvidence(context, action, rule, record, stored, {
      record: evidenceRecord,
      expiresAt: evidence.expiresAt,
      noteDigest,
    });
    if (written !== undefined) return written;
    record = await reload(context, record);
  }
  return resultOf(record, 'conflict', { reasonCode: 'too_much_contention' });
}

/** Stores the evidence with the status it leads to; undefined when the compare-and-set lost. */
async function storeEvidence(
  context: GuardContext,
  action: ActionDefinition,
  rule: ApprovalRule,
  record: ProposalRecord,
  stored: readonly AuthorityEvidenceRecord[],
  presented: {
    readonly record: AuthorityEvidenceRecord;
    readonly expiresAt: string;
    readonly noteDigest: string | undefined;
  },
): Promise<GuardResult | undefined> {
  const evidenceRecord = presented.record;
  const tally = tallyInForce(
    context,
    rule,
    [...stored, evidenceRecord],
    evidenceRecord.recordedAtMs,
  );
  let status: ProposalStatus = record.status;
  let reasonCode: string | null = record.reasonCode;
  if (tally.kind === 'vetoed') {
    status = 'denied';
    reasonCode = 'rejected_by_authority';
  } else if (tally.kind === 'satisfied' && record.policy.decision === 'require_approval') {
    status = 'authorized';
    reasonCode = 'authority_satisfied';
  }
  const next = successor(context, record, {
    status,
    reasonCode,
    countedEvidence: [...(record.countedEvidence ?? []), evidenceRowDigest(evidenceRecord)],
  });
  const events: LedgerEventDraft[] = [
    draft(
      context,
      'authority_recorded',
      record.proposal,
      action.typeName,
      {
        authority: evidenceRecord.authority,
        decision: evidenceRecord.decision,
        channelAssurance: evidenceRecord.channelAssurance,
        evidenceDigest: evidenceRecord.evidenceDigest,
        expiresAt: presented.expiresAt,
        approvals: tally.kind === 'vetoed' ? 0 : tally.approvers.length,
        required: rule.required,
        ...(presented.noteDigest === undefined ? {} : { noteDigest: presented.noteDigest }),
      },
      status === record.status ? after(next) : undefined,
    ),
  ];
  if (status === 'denied') {
    events.push(
      draft(
        context,
        'denied',
        record.proposal,
        action.typeName,
        { reasonCode: 'rejected_by_authority', authority: evidenceRecord.authority },
        after(next),
      ),
    );
  } else if (status !== record.status) {
    events.push(
      draft(
        context,
        'authority_satisfied',
        record.proposal,
        action.typeName,
        {
          reasonCode: 'authority_satisfied',
          approvers: tally.kind === 'satisfied' ? [...tally.approvers] : [],
        },
        after(next),
      ),
    );
  }
  const written = await commit(context, {
    tenant: record.tenant,
    proposal: {
      kind: 'update',
      expectedRevision: record.revision,
      expectedStatus: record.status,
      record: next,
    },
    evidence: [evidenceRecord],
    events,
  });
  if (written.kind !== 'committed') return undefined;
  return resultOf(
    next,
    status === record.status && status === 'awaiting_authority'
      ? 'authority_pending'
      : outcomeOfStatus(status),
  );
}
