/**
 * The closed vocabularies of DESIGN.md: proposal statuses, call outcomes, ledger event types,
 * and the transition table every store enforces.
 */

/** Durable status of a proposal. */
export const ProposalStatus = {
  awaiting_authority: 'awaiting_authority',
  authorized: 'authorized',
  denied: 'denied',
  expired: 'expired',
  blocked: 'blocked',
  stale: 'stale',
  superseded: 'superseded',
  executing: 'executing',
  failed_known: 'failed_known',
  failed_unknown: 'failed_unknown',
  verification_pending: 'verification_pending',
  verification_unresolved: 'verification_unresolved',
  partially_succeeded: 'partially_succeeded',
  verified: 'verified',
  compensation_required: 'compensation_required',
  compensated: 'compensated',
  /** Erasure tombstone: private data and its key material are gone; the ledger remains. */
  erased: 'erased',
} as const;
export type ProposalStatus = (typeof ProposalStatus)[keyof typeof ProposalStatus];

/** What one call returned. Operating conditions are outcomes, not exceptions. */
export const Outcome = {
  prepared: 'prepared',
  authority_pending: 'authority_pending',
  authorized: 'authorized',
  denied: 'denied',
  blocked: 'blocked',
  stale: 'stale',
  in_progress: 'in_progress',
  expired: 'expired',
  replayed: 'replayed',
  conflict: 'conflict',
  verification_pending: 'verification_pending',
  verified: 'verified',
  partially_succeeded: 'partially_succeeded',
  failed_known: 'failed_known',
  failed_unknown: 'failed_unknown',
  verification_unresolved: 'verification_unresolved',
  resend_allowed: 'resend_allowed',
  compensation_required: 'compensation_required',
  compensated: 'compensated',
  erased: 'erased',
  dry_run_predicted: 'dry_run_predicted',
  rejected: 'rejected',
} as const;
export type Outcome = (typeof Outcome)[keyof typeof Outcome];

/** Every decision the guard takes is one of these ledger events. */
export const LedgerEventType = {
  contract_validated: 'contract_validated',
  contract_rejected: 'contract_rejected',
  policy_decided: 'policy_decided',
  idempotency_decided: 'idempotency_decided',
  authority_recorded: 'authority_recorded',
  authority_rejected: 'authority_rejected',
  authority_satisfied: 'authority_satisfied',
  authority_lapsed: 'authority_lapsed',
  denied: 'denied',
  expired: 'expired',
  drift_detected: 'drift_detected',
  superseded: 'superseded',
  commit_started: 'commit_started',
  committed: 'committed',
  commit_failed: 'commit_failed',
  commit_outcome_unknown: 'commit_outcome_unknown',
  partial_commit: 'partial_commit',
  late_result_observed: 'late_result_observed',
  retry_resolved: 'retry_resolved',
  dry_run_predicted: 'dry_run_predicted',
  lease_expired: 'lease_expired',
  verification_started: 'verification_started',
  verification_observed: 'verification_observed',
  verification_unresolved: 'verification_unresolved',
  resend_allowed: 'resend_allowed',
  compensation_required: 'compensation_required',
  compensation_started: 'compensation_started',
  compensation_failed: 'compensation_failed',
  compensated: 'compensated',
  /** An operator attested what they found at the provider for an unknown outcome. */
  operator_resolved: 'operator_resolved',
  erased: 'erased',
  /** The guard found the store altered outside Sideguard and refused to act (decision 045). */
  store_tampering_detected: 'store_tampering_detected',
  /**
   * The gateway decided an agent's call (a tenant-level event: `proposal` is null; a guarded
   * call names its proposal in `data.proposal`). Data holds only the keys of
   * `GATEWAY_DECIDED_DATA_KEYS` (decision 070).
   */
  gateway_decided: 'gateway_decided',
} as const;
export type LedgerEventType = (typeof LedgerEventType)[keyof typeof LedgerEventType];

/**
 * The only data keys a `gateway_decided` event may carry, in the order the gateway writes them:
 * names, codes, statuses and keyed digests — never a body, an argument, a raw path or a
 * credential (I8).
 */
export const GATEWAY_DECIDED_DATA_FIELDS = [
  'door',
  'decision',
  'reason',
  'upstream',
  'subject',
  'binding',
  'agent',
  'principal',
  'proposal',
  'outcome',
  'code',
  'status',
  'requestDigest',
] as const;

/** {@link GATEWAY_DECIDED_DATA_FIELDS} as a set, for checking an event's keys. */
export const GATEWAY_DECIDED_DATA_KEYS: ReadonlySet<string> = new Set(GATEWAY_DECIDED_DATA_FIELDS);

/** Statuses from which no provider write can still happen for this proposal. */
export const TERMINAL_STATUSES: ReadonlySet<ProposalStatus> = new Set([
  'denied',
  'expired',
  'blocked',
  'stale',
  'superseded',
  'failed_known',
  'verified',
  'compensated',
  'erased',
]);

/**
 * Owners from which the semantic-effect claim may pass to another proposal: they certainly had
 * no effect at the provider (DESIGN.md, "Proposal lifecycle").
 */
export const CLAIM_RELEASING_STATUSES: ReadonlySet<ProposalStatus> = new Set([
  'failed_known',
  'stale',
]);

/**
 * Statuses whose proposal no longer represents its semantic effect, so a new proposal for the
 * same effect is admitted instead of replaying this one.
 */
export const EFFECT_RELEASED_STATUSES: ReadonlySet<ProposalStatus> = new Set([
  'denied',
  'expired',
  'blocked',
  'stale',
  'superseded',
  'failed_known',
  'erased',
]);

const ERASABLE: readonly ProposalStatus[] = [
  'awaiting_authority',
  'authorized',
  'denied',
  'expired',
  'blocked',
  'stale',
  'superseded',
  'failed_known',
  'verified',
  'compensated',
];

/**
 * The transition table: exactly the moves the guard makes. A self-transition (same status,
 * revision + 1) records a lease, an attempt or evidence without changing status, and is listed
 * explicitly where it is allowed. Some moves need more than the table (see `store-rules.ts`):
 * `→ executing` takes the effect claim in the same commit, and `OPERATOR_ONLY_TRANSITIONS`
 * carry an `operator_resolved` event.
 */
export const TRANSITIONS: Readonly<Record<ProposalStatus, readonly ProposalStatus[]>> = {
  awaiting_authority: [
    'awaiting_authority',
    'authorized',
    'denied',
    'expired',
    'superseded',
    'erased',
  ],
  authorized: [
    'authorized',
    'awaiting_authority',
    'executing',
    'denied',
    'expired',
    'stale',
    'superseded',
    'erased',
  ],
  executing: [
    'verified',
    'verification_pending',
    'failed_known',
    'failed_unknown',
    'partially_succeeded',
    'compensation_required',
  ],
  failed_unknown: [
    'failed_unknown',
    'verification_pending',
    'verified',
    'failed_known',
    'authorized',
    'verification_unresolved',
  ],
  verification_pending: [
    'verification_pending',
    'verified',
    'authorized',
    'verification_unresolved',
  ],
  verification_unresolved: ['verification_unresolved', 'verified', 'failed_known', 'authorized'],
  partially_succeeded: ['partially_succeeded', 'compensated'],
  compensation_required: ['compensation_required', 'compensated'],
  verified: ['erased'],
  compensated: ['erased'],
  denied: ['erased'],
  expired: ['erased'],
  blocked: ['erased'],
  stale: ['erased'],
  superseded: ['erased'],
  failed_known: ['erased'],
  erased: [],
};
for (const status of ERASABLE) {
  if (!TRANSITIONS[status].includes('erased')) {
    throw new Error(`transition table: ${status} must be erasable`);
  }
}

/**
 * Moves only an operator's attested resolution makes: an unknown outcome declared certainly
 * absent. The store refuses them unless the commit carries an `operator_resolved` event.
 */
export const OPERATOR_ONLY_TRANSITIONS: readonly (readonly [ProposalStatus, ProposalStatus])[] = [
  ['failed_unknown', 'failed_known'],
  ['verification_unresolved', 'failed_known'],
];

/** Statuses an operator may resolve: the outcome is unknown and the guard cannot settle it. */
export const OPERATOR_RESOLVABLE_STATUSES: ReadonlySet<ProposalStatus> = new Set([
  'failed_unknown',
  'verification_unresolved',
]);

/** Statuses a proposal may be created in. */
export const INITIAL_STATUSES: ReadonlySet<ProposalStatus> = new Set([
  'awaiting_authority',
  'authorized',
  'blocked',
]);

/** True when the store may move a proposal from `from` to `to`. */
export function isAllowedTransition(from: ProposalStatus, to: ProposalStatus): boolean {
  return TRANSITIONS[from].includes(to);
}

/** The policy's verdict on a proposal. */
export const PolicyDecision = {
  allow: 'allow',
  require_approval: 'require_approval',
  block: 'block',
} as const;
export type PolicyDecision = (typeof PolicyDecision)[keyof typeof PolicyDecision];

/** How strongly the channel an approval came through authenticated the approver. */
export const ChannelAssurance = { low: 'low', medium: 'medium', high: 'high' } as const;
export type ChannelAssurance = (typeof ChannelAssurance)[keyof typeof ChannelAssurance];

const ASSURANCE_RANK: Readonly<Record<ChannelAssurance, number>> = { low: 1, medium: 2, high: 3 };

/** True when `actual` is at least as strong as `required`. */
export function assuranceSatisfies(actual: ChannelAssurance, required: ChannelAssurance): boolean {
  return ASSURANCE_RANK[actual] >= ASSURANCE_RANK[required];
}
