/**
 * The store interface the guard needs, defined by the core that uses it (as Kysely's core
 * defines `Dialect`). Adapters in `src/stores/<name>/` implement it and pass the conformance
 * suite exported from `sideguard/testing`. Every write goes through `commit`: one atomic unit of
 * compare-and-set, effect claim, evidence and sealed ledger events.
 */
import type { JsonValue } from './canonical-json.js';
import type { Commitment } from './commitment.js';
import type { SealedEnvelope } from './envelope.js';
import type { LedgerEvent, LedgerEventDraft, LedgerHead } from './ledger.js';
import type { ChannelAssurance, PolicyDecision, ProposalStatus } from './vocabulary.js';

/** A provider's proof that a write happened (non-private: ids, amounts, provider names). */
export interface Receipt {
  /** The provider's own id for the write, e.g. a Stripe refund id `re_…`. */
  readonly id: string;
  /** Which provider issued it, e.g. `payments`. */
  readonly provider: string;
  /** Optional non-private details (amount in minor units, status, operation). */
  readonly details?: Readonly<Record<string, JsonValue>>;
}

/** The durable state of one proposal. Records are immutable values; a write replaces one. */
export interface ProposalRecord {
  readonly tenant: string;
  readonly proposal: string;
  /** Starts at 1; every write bumps it by exactly one (compare-and-set). */
  readonly revision: number;
  readonly status: ProposalStatus;
  /** `namespace.name@version`. */
  readonly actionType: string;
  /** Keyed digest of the protected fields: the semantic effect. */
  readonly semanticEffectKey: string;
  /** `actionType` + `#` + `semanticEffectKey`: the unit the effect claim guards (I1). */
  readonly effectScope: string;
  readonly principal: string;
  readonly agent: string | null;
  /** Epoch milliseconds, from the guard's clock. */
  readonly createdAtMs: number;
  readonly updatedAtMs: number;
  /** After this time the proposal may no longer execute (epoch ms). */
  readonly expiresAtMs: number;
  /**
   * When the guard next needs to look at this proposal without being asked (expiry, lease
   * expiry, next verification), or null. Stores index it for `listDue`.
   */
  readonly dueAtMs: number | null;
  readonly commitment: Commitment;
  /** The encrypted input and preview; null once erased. */
  readonly snapshot: SealedEnvelope | null;
  /**
   * The encrypted private output of the write (e.g. the provider's response), kept once the
   * write is known; null or absent when there is none, and null once erased.
   */
  readonly output?: SealedEnvelope | null;
  readonly policy: { readonly decision: PolicyDecision; readonly reasonCode: string };
  /** The reason code of the latest status change. */
  readonly reasonCode: string | null;
  /** Who holds the execution, verification or compensation lease, until when. */
  readonly lease: { readonly owner: string; readonly expiresAtMs: number } | null;
  /** Bumped by an allowed resend (I5); part of the provider idempotency key. */
  readonly resendGeneration: number;
  readonly verificationAttempts: number;
  readonly receipts: readonly Receipt[];
  readonly compensationReceipts: readonly Receipt[];
  /** The proposal that replaced this one (drift or duplicate), if any. */
  readonly supersededBy: string | null;
  /** The proposal this one replaced, if any. */
  readonly supersedes: string | null;
}

/** Authority evidence as stored: the canonical evidence plus what the guard derived from it. */
export interface AuthorityEvidenceRecord {
  readonly tenant: string;
  readonly proposal: string;
  /** SHA-256 of the canonical evidence; unique per proposal (identical evidence = replay). */
  readonly evidenceDigest: string;
  readonly authority: string;
  readonly decision: 'approve' | 'reject';
  readonly channelAssurance: ChannelAssurance;
  readonly issuedAtMs: number;
  readonly expiresAtMs: number;
  readonly recordedAtMs: number;
  /** The evidence exactly as presented (it carries bindings, never private data). */
  readonly evidence: JsonValue;
}

/** Who holds a semantic effect. */
export interface EffectClaim {
  readonly tenant: string;
  readonly effectScope: string;
  readonly proposal: string;
  readonly claimedAtMs: number;
}

/** One atomic write. Either all of it is stored (and the events sealed), or none of it. */
export interface StoreCommit {
  readonly tenant: string;
  /**
   * `insert`: a new proposal (its status must be an initial one). `update`: compare-and-set —
   * applies only if the stored revision and status equal the expected ones; `record.revision`
   * must be `expectedRevision + 1` and the status change must be in the transition table.
   */
  readonly proposal?:
    | { readonly kind: 'insert'; readonly record: ProposalRecord }
    | {
        readonly kind: 'update';
        readonly expectedRevision: number;
        readonly expectedStatus: ProposalStatus;
        readonly record: ProposalRecord;
      };
  /**
   * Take the semantic-effect claim for `proposal`. Succeeds if the scope is unclaimed, already
   * held by `proposal`, or held by a proposal whose *current stored* status is in
   * `CLAIM_RELEASING_STATUSES` (the claim then passes over). Otherwise the commit is refused
   * with `effect_claimed`.
   */
  readonly claim?: {
    readonly effectScope: string;
    readonly proposal: string;
    readonly atMs: number;
  };
  /** Evidence to add; a digest already stored for the proposal refuses the commit. */
  readonly evidence?: readonly AuthorityEvidenceRecord[];
  /** Drafts sealed onto the tenant's chain in this order, in the same transaction. */
  readonly events: readonly LedgerEventDraft[];
}

/** What a commit did. Only `committed` changed anything. */
export type StoreCommitResult =
  | { readonly kind: 'committed'; readonly events: readonly LedgerEvent[] }
  | { readonly kind: 'revision_conflict'; readonly current: ProposalRecord | undefined }
  | { readonly kind: 'proposal_exists' }
  | { readonly kind: 'effect_claimed'; readonly owner: string }
  | { readonly kind: 'evidence_duplicate'; readonly evidenceDigest: string };

/** Filters for `readLedger`. */
export interface LedgerQuery {
  readonly tenant: string;
  /** Only events with a greater sequence. @default 0 */
  readonly afterSequence?: number;
  /** Only this proposal's events. */
  readonly proposal?: string;
  /** At most this many events. @default unlimited */
  readonly limit?: number;
}

/** Filters for `listDue`. */
export interface DueQuery {
  readonly tenant: string;
  readonly statuses: readonly ProposalStatus[];
  /** Proposals whose `dueAtMs` is at or before this time. */
  readonly dueAtOrBeforeMs: number;
  /** @default 100 */
  readonly limit?: number;
}

/**
 * The guard's persistence. All members are async and safe to call concurrently; adapters decide
 * how (a mutex, SQLite immediate transactions, PostgreSQL row locks). A store must never throw
 * for an operating condition — those are `StoreCommitResult` kinds — and must throw
 * `StoreInvariantError` for an illegal transition or a malformed commit.
 */
export interface GuardStore {
  /** A short adapter name for messages, e.g. `memory`, `sqlite`, `postgres`. */
  readonly kind: string;
  /** Applies one atomic write (see `StoreCommit`). */
  commit(write: StoreCommit): Promise<StoreCommitResult>;
  /** The proposal, or undefined if this tenant has none with that id. */
  getProposal(tenant: string, proposal: string): Promise<ProposalRecord | undefined>;
  /** Proposals for a semantic effect, newest first (by `createdAtMs`, then id). @default limit 50 */
  listProposalsByEffect(
    tenant: string,
    effectScope: string,
    limit?: number,
  ): Promise<readonly ProposalRecord[]>;
  /** The current holder of an effect claim, if any. */
  getEffectClaim(tenant: string, effectScope: string): Promise<EffectClaim | undefined>;
  /** Evidence stored for a proposal, in the order it was recorded. */
  listEvidence(tenant: string, proposal: string): Promise<readonly AuthorityEvidenceRecord[]>;
  /** Proposals in `statuses` that are due, oldest due first. */
  listDue(query: DueQuery): Promise<readonly ProposalRecord[]>;
  /** Sealed events in sequence order. */
  readLedger(query: LedgerQuery): Promise<readonly LedgerEvent[]>;
  /** The tenant's chain head, or undefined if it has no events and no checkpoint. */
  ledgerHead(tenant: string): Promise<LedgerHead | undefined>;
  /**
   * Retention: removes the tenant's events up to and including `throughSequence` and remembers
   * the last removed event as the checkpoint the remaining chain verifies from.
   */
  truncateLedger(tenant: string, throughSequence: number): Promise<void>;
  /** The checkpoint left by `truncateLedger`, if any. */
  ledgerCheckpoint(tenant: string): Promise<LedgerHead | undefined>;
  /** Releases connections and file handles. Further calls fail. */
  close(): Promise<void>;
}
