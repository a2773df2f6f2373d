/**
 * Rules every store adapter applies inside its transaction, so the memory, SQLite and
 * PostgreSQL stores decide compare-and-set, transitions and claim hand-over identically.
 */
import { StoreInvariantError } from './errors.js';
import type { EffectClaim, ProposalRecord, StoreCommit, StoreCommitResult } from './store.js';
import {
  CLAIM_RELEASING_STATUSES,
  INITIAL_STATUSES,
  isAllowedTransition,
  OPERATOR_ONLY_TRANSITIONS,
  type ProposalStatus,
} from './vocabulary.js';

/** Throws `StoreInvariantError` when a commit is malformed, before anything is read. */
export function assertCommitShape(write: StoreCommit): void {
  const fail = (message: string): never => {
    throw new StoreInvariantError('store_commit_malformed', `Refused store commit: ${message}`);
  };
  if (typeof write.tenant !== 'string' || write.tenant === '') fail('tenant is empty');
  if (
    write.durability !== undefined &&
    write.durability !== 'synced' &&
    write.durability !== 'deferred'
  ) {
    fail(`durability must be 'synced' or 'deferred', got ${String(write.durability)}`);
  }
  if (write.onlyIfEffectUnlisted === true && write.proposal?.kind !== 'insert') {
    fail('onlyIfEffectUnlisted applies only to an insert');
  }
  if (write.proposal !== undefined) {
    const { record } = write.proposal;
    if (record.tenant !== write.tenant) fail('proposal tenant differs from the commit tenant');
    if (write.proposal.kind === 'insert' && record.status === 'executing') {
      assertClaimedInsert(write, record);
    } else if (write.proposal.kind === 'insert') {
      if (record.revision !== 1)
        fail(`a new proposal must have revision 1, got ${record.revision}`);
      if (!INITIAL_STATUSES.has(record.status)) {
        throw new StoreInvariantError(
          'illegal_transition',
          `Refused store commit: a proposal cannot start in status ${record.status}`,
        );
      }
    } else {
      if (record.revision !== write.proposal.expectedRevision + 1) {
        fail(
          `revision must advance by one (expected ${write.proposal.expectedRevision + 1}, got ${record.revision})`,
        );
      }
      if (!isAllowedTransition(write.proposal.expectedStatus, record.status)) {
        throw new StoreInvariantError(
          'illegal_transition',
          `Refused store commit: ${write.proposal.expectedStatus} -> ${record.status} is not an allowed transition`,
          { data: { from: write.proposal.expectedStatus, to: record.status } },
        );
      }
    }
    if (write.events.length === 0) fail('a proposal write must carry at least one ledger event');
  }
  if (write.claim !== undefined && write.proposal?.record.proposal !== write.claim.proposal) {
    fail('an effect claim must be taken in the same commit that writes its proposal');
  }
  if (write.proposal?.kind === 'update') assertTransitionEvidence(write, write.proposal);
  for (const evidence of write.evidence ?? []) {
    if (evidence.tenant !== write.tenant) fail('evidence tenant differs from the commit tenant');
  }
  for (const event of write.events) {
    if (event.proposal !== null && typeof event.proposal !== 'string') fail('event proposal');
  }
}

/**
 * An insert already `executing` is `run`'s insert and claim in one commit (decision 124): it is
 * revision 2 (the insert's revision 1 and the claim's move, as two commits would leave it) and
 * must take its own effect's claim in the same commit (I1).
 */
function assertClaimedInsert(write: StoreCommit, record: ProposalRecord): void {
  if (write.claim?.proposal !== record.proposal) {
    throw new StoreInvariantError(
      'illegal_transition',
      'Refused store commit: a proposal cannot start in status executing unless it takes the semantic-effect claim in the same commit',
      { data: { from: 'authorized', to: 'executing' } },
    );
  }
  if (record.revision !== 2) {
    throw new StoreInvariantError(
      'store_commit_malformed',
      `Refused store commit: a proposal inserted as executing must have revision 2, got ${record.revision}`,
    );
  }
}

type ProposalUpdate = Extract<NonNullable<StoreCommit['proposal']>, { kind: 'update' }>;

/**
 * Refuses a move that needs more than the transition table: `→ executing` without the effect
 * claim in the same commit (I1), an operator-only move without the operator's attestation, and
 * `→ verified` with no receipt unless an operator attested it.
 */
function assertTransitionEvidence(write: StoreCommit, update: ProposalUpdate): void {
  const { record, expectedStatus: from } = update;
  const to = record.status;
  const refuse = (why: string): never => {
    throw new StoreInvariantError(
      'illegal_transition',
      `Refused store commit: ${from} -> ${to} ${why}`,
      { data: { from, to } },
    );
  };
  if (to === 'executing' && write.claim?.proposal !== record.proposal) {
    refuse('must take the semantic-effect claim in the same commit');
  }
  const attested = write.events.some(
    (event) => event.type === 'operator_resolved' && event.proposal === record.proposal,
  );
  if (attested) return;
  if (OPERATOR_ONLY_TRANSITIONS.some(([a, b]) => a === from && b === to)) {
    refuse('is made only by an attested operator resolution (an operator_resolved event)');
  }
  if (to === 'verified' && from !== 'verified' && record.receipts.length === 0) {
    refuse('needs a receipt, or an attested operator resolution');
  }
}

/**
 * Decides the proposal part of a commit against the currently stored record.
 * Returns undefined when it may be applied.
 */
export function checkProposalWrite(
  write: StoreCommit,
  current: ProposalRecord | undefined,
): StoreCommitResult | undefined {
  const change = write.proposal;
  if (change === undefined) return undefined;
  if (change.kind === 'insert') {
    return current === undefined ? undefined : { kind: 'proposal_exists' };
  }
  if (
    current === undefined ||
    current.revision !== change.expectedRevision ||
    current.status !== change.expectedStatus
  ) {
    return { kind: 'revision_conflict', current };
  }
  return undefined;
}

/**
 * Decides whether `proposal` may take an effect claim currently held as `existing` by an owner
 * whose stored status is `ownerStatus`.
 */
export function checkEffectClaim(
  proposal: string,
  existing: EffectClaim | undefined,
  ownerStatus: ProposalStatus | undefined,
): StoreCommitResult | undefined {
  if (existing === undefined || existing.proposal === proposal) return undefined;
  if (ownerStatus !== undefined && CLAIM_RELEASING_STATUSES.has(ownerStatus)) return undefined;
  return { kind: 'effect_claimed', owner: existing.proposal };
}
