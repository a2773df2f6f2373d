/**
 * Authority evidence (I9): what an approver's decision binds to, how it is checked against a
 * proposal, and how single, any-of and M-of-N rules count it. Hosts build evidence with
 * `buildAuthorityEvidence` from what `guard.read` returns, never by hand.
 */
import { z } from 'zod';
import type { ApprovalRule, Authority } from './action.js';
import { canonicalize } from './canonical-json.js';
import { type Commitment, sha256Hex } from './commitment.js';
import type { AuthorityEvidenceRecord, ProposalRecord } from './store.js';
import { assuranceSatisfies, type ChannelAssurance } from './vocabulary.js';

/** One approver's decision on one exact proposal. Carries bindings only, no private data. */
export interface AuthorityEvidence {
  readonly v: 1;
  readonly tenant: string;
  readonly actionType: string;
  readonly proposal: string;
  readonly semanticEffectKey: string;
  readonly proposalCommitment: Commitment;
  /** Who the evidence is for: the guard's configured audience. */
  readonly audience: string;
  readonly channelAssurance: ChannelAssurance;
  readonly authority: string;
  readonly decision: 'approve' | 'reject';
  /** ISO-8601. */
  readonly issuedAt: string;
  /** ISO-8601; after it the evidence never counts. */
  readonly expiresAt: string;
}

const isoTime = z
  .string()
  .max(40)
  .refine((value) => Number.isFinite(Date.parse(value)), {
    message: 'must be an ISO-8601 time',
  });
const id = z.string().min(1).max(256);

/** Strict schema of `AuthorityEvidence`: unknown fields are rejected. */
export const authorityEvidenceSchema = z.strictObject({
  v: z.literal(1),
  tenant: id,
  actionType: id,
  proposal: id,
  semanticEffectKey: id,
  proposalCommitment: z.strictObject({
    algorithm: z.literal('hmac-sha256'),
    keyHandle: id,
    keyVersion: z.number().int().positive(),
    value: z.string().min(1).max(128),
  }),
  audience: id,
  channelAssurance: z.enum(['low', 'medium', 'high']),
  authority: id,
  decision: z.enum(['approve', 'reject']),
  issuedAt: isoTime,
  expiresAt: isoTime,
});

/** Why evidence was rejected. Each binding has its own code. */
export const EvidenceRejection = {
  evidence_malformed: 'evidence_malformed',
  evidence_tenant_mismatch: 'evidence_tenant_mismatch',
  evidence_action_mismatch: 'evidence_action_mismatch',
  evidence_effect_key_mismatch: 'evidence_effect_key_mismatch',
  evidence_commitment_mismatch: 'evidence_commitment_mismatch',
  evidence_audience_mismatch: 'evidence_audience_mismatch',
  evidence_not_yet_valid: 'evidence_not_yet_valid',
  evidence_expired: 'evidence_expired',
  evidence_window_invalid: 'evidence_window_invalid',
  authority_not_declared: 'authority_not_declared',
  authority_not_authenticated: 'authority_not_authenticated',
  channel_assurance_insufficient: 'channel_assurance_insufficient',
  approval_not_required: 'approval_not_required',
} as const;
export type EvidenceRejection = (typeof EvidenceRejection)[keyof typeof EvidenceRejection];

/** What `guard.read` exposes for building evidence: the proposal's bindings. */
export interface EvidenceBindings {
  readonly tenant: string;
  readonly actionType: string;
  readonly proposal: string;
  readonly semanticEffectKey: string;
  readonly proposalCommitment: Commitment;
  readonly audience: string;
  /** ISO-8601: evidence must not outlive the proposal. */
  readonly proposalExpiresAt: string;
}

/** Options for `buildAuthorityEvidence`. */
export interface BuildEvidenceOptions {
  readonly authority: string;
  readonly decision: 'approve' | 'reject';
  readonly channelAssurance: ChannelAssurance;
  /** When the approver decided (ISO-8601 or epoch ms). */
  readonly issuedAt: string | number;
  /** How long the evidence counts. Capped at the proposal's expiry. @default 600_000 */
  readonly validForMs?: number;
}

const toIso = (time: string | number): string =>
  typeof time === 'number' ? new Date(time).toISOString() : new Date(time).toISOString();

/** Builds evidence that binds exactly the proposal `read` returned. */
export function buildAuthorityEvidence(
  bindings: EvidenceBindings,
  options: BuildEvidenceOptions,
): AuthorityEvidence {
  const issuedAtMs = Date.parse(toIso(options.issuedAt));
  const expiresAtMs = Math.min(
    issuedAtMs + (options.validForMs ?? 600_000),
    Date.parse(bindings.proposalExpiresAt),
  );
  return {
    v: 1,
    tenant: bindings.tenant,
    actionType: bindings.actionType,
    proposal: bindings.proposal,
    semanticEffectKey: bindings.semanticEffectKey,
    proposalCommitment: { ...bindings.proposalCommitment },
    audience: bindings.audience,
    channelAssurance: options.channelAssurance,
    authority: options.authority,
    decision: options.decision,
    issuedAt: new Date(issuedAtMs).toISOString(),
    expiresAt: new Date(expiresAtMs).toISOString(),
  };
}

/** SHA-256 of the canonical evidence: identical evidence has the identical digest. */
export function evidenceDigest(evidence: AuthorityEvidence): string {
  return sha256Hex(canonicalize(evidence));
}

/** Everything `checkEvidence` compares against. */
export interface EvidenceCheck {
  readonly tenant: string;
  readonly record: ProposalRecord;
  readonly audience: string;
  readonly rule: ApprovalRule | undefined;
  readonly authenticatedAuthority: string;
  readonly nowMs: number;
}

/** Checks every binding of parsed evidence; returns the first failing code, or undefined. */
export function checkEvidence(
  evidence: AuthorityEvidence,
  check: EvidenceCheck,
): { code: EvidenceRejection; message: string } | undefined {
  const { record } = check;
  const reject = (code: EvidenceRejection, message: string) => ({ code, message });
  if (evidence.tenant !== check.tenant || evidence.tenant !== record.tenant) {
    return reject('evidence_tenant_mismatch', 'evidence tenant does not match the proposal');
  }
  if (evidence.actionType !== record.actionType) {
    return reject('evidence_action_mismatch', 'evidence action type does not match the proposal');
  }
  if (evidence.semanticEffectKey !== record.semanticEffectKey) {
    return reject(
      'evidence_effect_key_mismatch',
      'evidence effect key does not match the proposal',
    );
  }
  const commitment = evidence.proposalCommitment;
  if (
    commitment.value !== record.commitment.value ||
    commitment.keyHandle !== record.commitment.keyHandle ||
    commitment.keyVersion !== record.commitment.keyVersion
  ) {
    return reject(
      'evidence_commitment_mismatch',
      'evidence commitment does not match the proposal (it approves different content)',
    );
  }
  if (evidence.audience !== check.audience) {
    return reject('evidence_audience_mismatch', 'evidence audience does not match this guard');
  }
  if (evidence.authority !== check.authenticatedAuthority) {
    return reject(
      'authority_not_authenticated',
      'the authenticated authority is not the one named in the evidence',
    );
  }
  if (check.rule === undefined) {
    return reject('approval_not_required', 'this action declares no approval rule');
  }
  const declared = check.rule.authorities.find((a) => a.id === evidence.authority);
  if (declared === undefined) {
    return reject('authority_not_declared', 'the authority is not declared by the approval rule');
  }
  if (!assuranceSatisfies(evidence.channelAssurance, declared.requiredAssurance ?? 'medium')) {
    return reject(
      'channel_assurance_insufficient',
      `the authority requires ${declared.requiredAssurance ?? 'medium'} channel assurance`,
    );
  }
  return evidenceWindowProblem(evidence, check.nowMs);
}

/** Whether evidence is valid at `nowMs` (its window); returns the failing code, or undefined. */
export function evidenceWindowProblem(
  evidence: Pick<AuthorityEvidence, 'issuedAt' | 'expiresAt'>,
  nowMs: number,
): { code: EvidenceRejection; message: string } | undefined {
  const issuedAtMs = Date.parse(evidence.issuedAt);
  const expiresAtMs = Date.parse(evidence.expiresAt);
  if (expiresAtMs <= issuedAtMs) {
    return { code: 'evidence_window_invalid', message: 'evidence expires before it is issued' };
  }
  if (issuedAtMs > nowMs) {
    return { code: 'evidence_not_yet_valid', message: 'evidence is issued in the future' };
  }
  if (expiresAtMs <= nowMs) return { code: 'evidence_expired', message: 'evidence has expired' };
  return undefined;
}

/** The state of a proposal's authority at one instant. */
export type AuthorityTally =
  | { readonly kind: 'satisfied'; readonly approvers: readonly string[] }
  | { readonly kind: 'pending'; readonly approvers: readonly string[]; readonly required: number }
  | { readonly kind: 'vetoed'; readonly rejectedBy: string };

/**
 * Counts evidence under a rule at `nowMs`: distinct declared authorities with unexpired
 * approvals; any rejection from a declared authority vetoes. Expired approvals stay stored but
 * never count.
 */
export function tallyAuthority(
  rule: ApprovalRule,
  evidence: readonly AuthorityEvidenceRecord[],
  nowMs: number,
): AuthorityTally {
  const declared = new Map<string, Authority>(rule.authorities.map((a) => [a.id, a]));
  const rejection = evidence.find((e) => e.decision === 'reject' && declared.has(e.authority));
  if (rejection !== undefined) return { kind: 'vetoed', rejectedBy: rejection.authority };
  const approvers = new Set<string>();
  for (const record of evidence) {
    if (record.decision !== 'approve' || !declared.has(record.authority)) continue;
    if (record.issuedAtMs > nowMs || record.expiresAtMs <= nowMs) continue;
    approvers.add(record.authority);
  }
  const list = [...approvers].sort();
  return list.length >= rule.required
    ? { kind: 'satisfied', approvers: list }
    : { kind: 'pending', approvers: list, required: rule.required };
}
