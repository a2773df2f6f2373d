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
import type { RecordMac } from './record-mac.js';
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
  /**
   * The encrypted input and preview; null once erased. Written once, with the insert: an update
   * keeps it exactly or sets it to null (erasure), never changes it (stores keep it apart from
   * the record so that erasure removes the one copy of its wrapped data key; decision 025).
   */
  readonly snapshot: SealedEnvelope | null;
  /**
   * The encrypted private output of the write (e.g. the provider's response), kept once the
   * write is known; null or absent when there is none, and null once erased. An update may add
   * it where there is none, keep it or set it to null, never change it (kept apart from the
   * record like the snapshot; decision 025).
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
  /**
   * `evidenceRowDigest` of every authority evidence row stored for this proposal, in the order
   * recorded. The record MAC covers it, so an evidence row inserted, changed or deleted outside
   * Sideguard is detected. Absent means none (records written before 0.2, sample records).
   */
  readonly countedEvidence?: readonly string[];
  /**
   * The guard's keyed MAC over every field but `recordMac`, `snapshot` and `output`, set on each
   * write (decision 045). Stores keep it as part of the record and never compute it. Absent only
   * in records the guard did not write (0.1 stores, store tests).
   */
  readonly recordMac?: RecordMac;
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
   * `insert`: a new proposal (its status must be an initial one, revision 1) — or, for `run`'s
   * insert and claim in one commit, `executing` at revision 2 with its `claim` in the same
   * commit (decision 124). `update`: compare-and-set —
   * applies only if the stored revision and status equal the expected ones; `record.revision`
   * must be `expectedRevision + 1` and the status change must be in the transition table.
   * An update's `record.snapshot` must equal the stored one or be null (erasure), and its
   * `record.output` must equal the stored one, be null, or be new where none is stored;
   * anything else throws `StoreInvariantError` `store_commit_malformed` (checked after the
   * compare-and-set, before the claim and the evidence).
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
  /**
   * How durable the commit must be when `commit` resolves (decision 124). @default 'synced'
   * - `synced`: on stable storage, as the store is configured (SQLite `synchronous`,
   *   PostgreSQL `synchronous_commit`): it survives a power loss.
   * - `deferred`: committed and visible to every reader and every later commit, and it
   *   survives a crash of the process, but the store may skip its own sync: an OS crash or power
   *   loss may drop it. Durability stays a prefix: every later synced commit (and every
   *   `ledgerHead` answer) makes it durable too, so a deferred commit is lost only with every
   *   commit after it. The guard asks for it only where losing the commit leaves a state that
   *   verification recovers (the outcome recorded after the provider call); never for a claim,
   *   authority or an erasure. A store may treat every commit as synced (the memory store,
   *   which keeps nothing, does).
   */
  readonly durability?: CommitDurability;
  /**
   * Only with an insert, and only to a store that declares `refusesListedEffects`: the commit
   * applies only if the tenant holds no proposal — in any status — whose `effectScope` is the
   * inserted record's; otherwise it is refused whole with `effect_listed`. Decided in the
   * commit's own transaction, so `run` need not list the effect before inserting (decision 126).
   * @default false
   */
  readonly onlyIfEffectUnlisted?: boolean;
}

/** See `StoreCommit.durability`. */
export type CommitDurability = 'synced' | 'deferred';

/** What a commit did. Only `committed` changed anything. */
export type StoreCommitResult =
  | { readonly kind: 'committed'; readonly events: readonly LedgerEvent[] }
  | { readonly kind: 'revision_conflict'; readonly current: ProposalRecord | undefined }
  | { readonly kind: 'proposal_exists' }
  | { readonly kind: 'effect_claimed'; readonly owner: string }
  | { readonly kind: 'evidence_duplicate'; readonly evidenceDigest: string }
  /** `onlyIfEffectUnlisted` was set and the tenant holds a proposal of that effect scope. */
  | { readonly kind: 'effect_listed' };

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

/** The position of a proposal in `listProposals` order: the keyset a page continues after. */
export interface ProposalListPosition {
  readonly expiresAtMs: number;
  readonly tenant: string;
  readonly proposal: string;
}

/**
 * Filters and keyset paging of `listProposals` (the approvals console's queues). Results are
 * ordered by `expiresAtMs` ascending, then tenant, then proposal id (both by code point).
 */
export interface ProposalListQuery {
  /** Only this tenant's proposals. Omitted: every tenant (for operators, not for agents). */
  readonly tenant?: string;
  /** Only proposals in one of these statuses; an empty list matches nothing. */
  readonly statuses: readonly ProposalStatus[];
  /** Only this action type (`namespace.name@version`). */
  readonly actionType?: string;
  /** At most this many proposals, a whole number from 1 to 1000. @default 100 */
  readonly limit?: number;
  /** Only proposals after this position: pass the last proposal of the previous page. */
  readonly after?: ProposalListPosition;
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
  /**
   * True when `commit` honours `StoreCommit.onlyIfEffectUnlisted` (decision 126); the guard
   * then inserts `run`'s proposal without listing its effect first. Absent: the guard lists.
   */
  readonly refusesListedEffects?: boolean;
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
  /**
   * Proposals matching the query, soonest to expire first (see `ProposalListQuery`), for
   * queues such as the approvals console's. Keyset paging: pass the last one as `after`.
   * @throws ContractViolationError `store_query_invalid` for a malformed query (an unknown
   *   status, a limit outside 1–1000, an incomplete `after`).
   */
  listProposals(query: ProposalListQuery): Promise<readonly ProposalRecord[]>;
  /** Sealed events in sequence order. */
  readLedger(query: LedgerQuery): Promise<readonly LedgerEvent[]>;
  /**
   * The tenant's chain head, or undefined if it has no events and no checkpoint. The head is
   * durable when answered: a store that took `deferred` commits syncs before it answers, so a
   * head written down outside the store (an anchor, an export's end) is never lost afterwards
   * and later mistaken for truncation (decision 124).
   */
  ledgerHead(tenant: string): Promise<LedgerHead | undefined>;
  /**
   * Retention: removes the tenant's events up to and including `throughSequence` and remembers
   * the last removed event as the checkpoint the remaining chain verifies from.
   */
  truncateLedger(tenant: string, throughSequence: number): Promise<void>;
  /**
   * Makes durable every commit the tenant's chain head includes — `deferred` ones too, and
   * (since durability is a prefix) every commit before them, of any tenant or process. A store
   * that honours `deferred` must offer it; a store without it is taken to make each commit
   * durable before answering it (decision 124). The guard calls it before handing a deferred
   * commit's events to the event sink.
   */
  sync?(tenant: string): Promise<void>;
  /** The checkpoint left by `truncateLedger`, if any. */
  ledgerCheckpoint(tenant: string): Promise<LedgerHead | undefined>;
  /** Releases connections and file handles. Further calls fail. */
  close(): Promise<void>;
}
