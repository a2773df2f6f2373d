/**
 * What the guard concludes when the store was altered outside Sideguard (decision 045): the
 * codes it refuses with, the message that says what to do, and the two rules that need more
 * than one record to decide — a rollback read from the ledger, and who holds an effect claim.
 */
import { StoreInvariantError } from '../errors.js';
import type { LedgerEvent } from '../ledger.js';
import type { ProposalRecord } from '../store.js';
import { CLAIM_RELEASING_STATUSES, type ProposalStatus } from '../vocabulary.js';

/** Why the guard refused a store's content; the `code` of the `StoreInvariantError`. */
export const StoreTampering = {
  /** The record has no MAC: written by Sideguard 0.1, or the MAC was removed. */
  record_unsealed: 'record_unsealed',
  /** The record does not match its MAC: a covered field was changed. */
  record_mac_invalid: 'record_mac_invalid',
  /** The record is older than what the ledger already recorded for it: an old copy was put back. */
  record_rolled_back: 'record_rolled_back',
  /** The evidence rows differ from the evidence the record counted (inserted, changed, deleted). */
  evidence_altered: 'evidence_altered',
  /** Another proposal holds the effect claim by its record, but the claim row says otherwise. */
  effect_claim_altered: 'effect_claim_altered',
} as const;
/** Why the guard refused a store's content; see {@link StoreTampering}. */
export type StoreTampering = (typeof StoreTampering)[keyof typeof StoreTampering];

const WHAT_TO_DO =
  'Nothing was executed. Stop the processes that write to this store, compare it with the ' +
  'ledger checked against a head anchored outside the store (`sideguard ledger head`, ' +
  '`sideguard ledger verify --expect-head`), and restore the store from a backup ' +
  '(docs/decisions/045-record-macs.md).';

/** The error the guard throws when it refuses to act on an altered store. */
export function tamperingError(
  code: StoreTampering,
  proposal: string,
  detail: string,
  data: Record<string, unknown> = {},
): StoreInvariantError {
  return new StoreInvariantError(
    code,
    `Refused to act on proposal ${JSON.stringify(proposal)}: ${detail}. The store was altered outside Sideguard. ${WHAT_TO_DO}`,
    { data: { proposal, ...data } },
  );
}

/** Statuses a proposal reaches only after it took its effect claim. */
const CLAIMED_STATUSES: ReadonlySet<ProposalStatus> = new Set([
  'executing',
  'failed_unknown',
  'verification_pending',
  'verification_unresolved',
  'partially_succeeded',
  'verified',
  'compensation_required',
  'compensated',
]);

/**
 * Whether an (authenticated) record still holds its effect's claim: it took the claim — its
 * status comes after the claim, or it was resent (`resendGeneration > 0`, the claim stays
 * through a resend), or it has receipts (erased after a write) — and it is not in a status that
 * hands the claim over.
 */
export function holdsEffectClaim(record: ProposalRecord): boolean {
  if (CLAIM_RELEASING_STATUSES.has(record.status)) return false;
  return (
    CLAIMED_STATUSES.has(record.status) ||
    record.resendGeneration > 0 ||
    record.receipts.length > 0 ||
    record.compensationReceipts.length > 0
  );
}

/** What a proposal's ledger events say about the revisions its record went through. */
export interface LedgerRevisions {
  /** The highest revision an event recorded, or undefined when none did (or was kept). */
  readonly highest: number | undefined;
  /**
   * True when a later commit recorded a revision no newer than an earlier one: the record was
   * put back to an older copy and the guard wrote on top of it before this check ran.
   */
  readonly rewound: boolean;
}

/**
 * Reads the revisions a proposal's events recorded, in sequence order. Every commit that writes
 * a proposal stamps its events with one new revision; events of one commit are adjacent.
 */
export function ledgerRevisions(events: readonly LedgerEvent[]): LedgerRevisions {
  let highest: number | undefined;
  let lastSequence = 0;
  let rewound = false;
  for (const event of [...events].sort((a, b) => a.sequence - b.sequence)) {
    if (event.revision === null) continue;
    if (highest !== undefined) {
      const sameCommit = event.revision === highest && event.sequence === lastSequence + 1;
      if (event.revision < highest || (event.revision === highest && !sameCommit)) rewound = true;
    }
    highest = Math.max(highest ?? event.revision, event.revision);
    lastSequence = event.sequence;
  }
  return { highest, rewound };
}
