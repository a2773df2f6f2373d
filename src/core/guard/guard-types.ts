/**
 * The guard's public types: what the runtime needs injected (clock, ids, event sink), what each
 * operation takes, and what every operation returns.
 */
import type { ActionDefinition } from '../action.js';
import type { Breakage } from '../breakages.js';
import type { JsonValue } from '../canonical-json.js';
import type { EvidenceBindings } from '../evidence.js';
import type { KeyRing } from '../key-ring.js';
import type { LedgerVerification, ProposalReplay } from '../ledger.js';
import type { GuardStore, Receipt } from '../store.js';
import type { LedgerEventType, Outcome, PolicyDecision, ProposalStatus } from '../vocabulary.js';

/** Milliseconds since the epoch. Inject a manual clock in tests. */
export interface Clock {
  now(): number;
}

/**
 * Calls back when the guard's clock reaches a time: how the guard ends a lease (it aborts the
 * `signal` an executor, verifier or compensator was given). Time is the injected clock's, so a
 * manual clock needs a manual scheduler (`createManualClock` returns one that is both).
 */
export interface Scheduler {
  /**
   * Calls `callback` once, when the clock reaches `atMs` (epoch ms), or as soon as possible if
   * it already has. Returns a function that cancels the call; calling it later does nothing.
   */
  at(atMs: number, callback: () => void): () => void;
}

/** Id generation. Inject a sequential generator for repeatable runs. */
export interface Ids {
  /** A new, globally unique proposal id. */
  proposal(): string;
  /** A new lease-owner id. */
  lease(): string;
}

/** What the event sink receives: allow-listed metadata only, never private data (I8). */
export interface GuardEvent {
  readonly tenant: string;
  readonly proposal: string | null;
  readonly actionType: string | null;
  readonly type: LedgerEventType;
  readonly status: ProposalStatus | null;
  readonly sequence: number;
  readonly reasonCode: string | null;
}

/** Receives guard events after they are durable. Failures never break an operation. */
export type GuardEventSink = (event: GuardEvent) => void | Promise<void>;

/** Dependencies of the runtime; `createGuard` (the public entry) fills defaults. */
export interface GuardCoreConfig {
  readonly store: GuardStore;
  readonly keyRing: KeyRing;
  readonly clock: Clock;
  /**
   * Ends leases on the clock's time. @default the clock itself when it is also a `Scheduler`
   * (as `createManualClock`'s is); otherwise required.
   */
  readonly scheduler?: Scheduler;
  readonly ids: Ids;
  readonly randomBytes: (size: number) => Uint8Array;
  readonly events?: GuardEventSink;
  /** Called when the event sink throws or rejects. @default ignore */
  readonly onEventSinkError?: (error: unknown) => void;
  /** The audience authority evidence must name. @default 'sideguard' */
  readonly audience?: string;
  /**
   * Test-only: guarantees to switch off (see `Breakage`), so a test or the verifier can prove
   * the evidence judge notices. Not settable through `createGuard`. @default none
   */
  readonly breakages?: ReadonlySet<Breakage>;
}

/** One zod issue, reduced to what is safe to put in the ledger. */
export interface ContractIssue {
  readonly path: string;
  readonly code: string;
  readonly message: string;
}

/** What a dry run predicts. */
export interface DryRunPrediction {
  /** The status a commit-mode prepare would have produced, or `replayed`. */
  readonly wouldBe: ProposalStatus | 'replayed';
  /** Whether executing would (eventually) write to the provider. */
  readonly wouldWrite: boolean;
  readonly semanticEffectKey: string;
  readonly replayOf?: string;
}

/** What every guard call returns. */
export interface GuardResult {
  /** The proposal the outcome is about (for `replayed`: the existing one). */
  readonly proposal: string;
  /** Its durable status, or null when nothing was stored (rejected, dry run). */
  readonly status: ProposalStatus | null;
  readonly outcome: Outcome;
  /** Its revision, or 0 when nothing was stored. */
  readonly revision: number;
  readonly reasonCode?: string;
  readonly preview?: JsonValue;
  readonly result?: {
    readonly receipts: readonly Receipt[];
    readonly compensationReceipts: readonly Receipt[];
  };
  /**
   * The private output the executor (or verifier) returned for this effect, decrypted: given to
   * the call that executed and to later calls resolving to the same effect. Absent when none
   * was kept or after erasure.
   */
  readonly output?: JsonValue;
  /** After drift: the fresh proposal that supersedes this stale one. */
  readonly freshProposal?: string;
  readonly semanticEffectKey?: string;
  /** For `rejected` contracts: what was wrong. */
  readonly issues?: readonly ContractIssue[];
  readonly prediction?: DryRunPrediction;
}

/** What `read` returns to an authorised reader. */
export interface ProposalView extends GuardResult {
  readonly tenant: string;
  readonly actionType: string;
  readonly principal: string;
  readonly agent: string | null;
  readonly createdAt: string;
  readonly expiresAt: string;
  /** The validated input; absent once erased. */
  readonly input?: JsonValue;
  /** The facts the policy decided on (null if none); absent once erased. */
  readonly facts?: JsonValue;
  /** What evidence must bind; pass to `buildAuthorityEvidence`. Absent once erased. */
  readonly evidenceBindings?: EvidenceBindings;
  readonly authority: {
    readonly required: number;
    readonly approvers: readonly string[];
    readonly rejectedBy: string | null;
  };
  readonly supersededBy: string | null;
  readonly supersedes: string | null;
  /** What the action's policy decided at admission, and why. */
  readonly policy: { readonly decision: PolicyDecision; readonly reasonCode: string };
}

/** Arguments of `prepare`. */
export interface PrepareOptions {
  readonly tenant: string;
  /** The proposed input; validated strictly against the action's schema. */
  readonly input: unknown;
  /** Who (or which service) proposes, on whose behalf the agent acts. */
  readonly principal: string;
  readonly agent?: string;
  /**
   * Facts the host read for this decision (e.g. an order's eligible refund amount), passed to the
   * policy and committed with the input. Must be canonical JSON (no floats). @default null
   */
  readonly facts?: unknown;
  /** @default 'commit' */
  readonly mode?: 'commit' | 'dry_run';
}

/** Arguments of `recordAuthority`. */
export interface RecordAuthorityOptions {
  /** The tenant of the authenticated session presenting the evidence. */
  readonly tenant: string;
  readonly evidence: unknown;
  /** The authority the host authenticated (e.g. from the approver's session). */
  readonly authenticatedAuthority: string;
  /**
   * Why the approver decided. It may hold private text, so the ledger keeps only a keyed digest
   * (`noteDigest` on `authority_recorded`). At most 1,000 characters. @default none
   */
  readonly note?: string;
}

/** What an operator found at the provider for an unknown outcome. */
export type OperatorFinding =
  /** The provider certainly has no such write (and none can still land). */
  | { readonly kind: 'absent' }
  /** The write exists: its receipt. */
  | { readonly kind: 'present'; readonly receipt: Receipt };

/** Arguments of `resolveOutcome`. */
export interface ResolveOutcomeOptions {
  readonly tenant: string;
  readonly proposal: string;
  /** The operator the host authenticated; must be one of the action's `operators`. */
  readonly operator: string;
  readonly finding: OperatorFinding;
  /**
   * What the operator checked and where. It may hold private text, so the ledger keeps only a
   * keyed digest. At most 4,096 characters.
   */
  readonly note?: string;
}

/** Addresses one proposal. */
export interface ProposalAddress {
  readonly tenant: string;
  readonly proposal: string;
}

/** Addresses one proposal on behalf of a reader. */
export interface ReaderAddress extends ProposalAddress {
  readonly reader: string;
}

/** The guard runtime. Every method takes the action definition first. */
export interface Guard {
  prepare<A extends ActionDefinition>(action: A, options: PrepareOptions): Promise<GuardResult>;
  recordAuthority<A extends ActionDefinition>(
    action: A,
    options: RecordAuthorityOptions,
  ): Promise<GuardResult>;
  execute<A extends ActionDefinition>(action: A, address: ProposalAddress): Promise<GuardResult>;
  reconcile<A extends ActionDefinition>(action: A, address: ProposalAddress): Promise<GuardResult>;
  resumeVerification<A extends ActionDefinition>(
    action: A,
    address: ProposalAddress,
  ): Promise<GuardResult>;
  compensate<A extends ActionDefinition>(action: A, address: ProposalAddress): Promise<GuardResult>;
  expireDue<A extends ActionDefinition>(action: A, address: ProposalAddress): Promise<GuardResult>;
  /** Expires and reconciles every due proposal of this action type in a tenant. */
  sweep<A extends ActionDefinition>(
    action: A,
    options: { readonly tenant: string; readonly limit?: number },
  ): Promise<readonly GuardResult[]>;
  /**
   * An operator's attested finding for an unknown outcome (`failed_unknown` or
   * `verification_unresolved`): `absent` → `failed_known` (the effect is released), `present` →
   * `verified` with the receipt. Only the action's declared `operators`; others get not-found.
   */
  resolveOutcome<A extends ActionDefinition>(
    action: A,
    options: ResolveOutcomeOptions,
  ): Promise<GuardResult>;
  read<A extends ActionDefinition>(action: A, address: ReaderAddress): Promise<ProposalView>;
  /**
   * Erases a settled proposal's private data. `address.reader` is who asks: one of the action's
   * declared `erasers`, or the call fails exactly like a missing proposal.
   */
  erase<A extends ActionDefinition>(action: A, address: ReaderAddress): Promise<GuardResult>;
  /** prepare + execute when no approval is needed (or resumes an authorized replay). */
  run<A extends ActionDefinition>(
    action: A,
    options: Omit<PrepareOptions, 'mode'>,
  ): Promise<GuardResult>;
  /** The tenant's ledger as JSONL (one sealed event per line), as one string. */
  exportLedger(options: { readonly tenant: string }): Promise<string>;
  /**
   * The tenant's ledger as JSONL chunks (a page of events each), read page by page up to the head
   * the store holds when it starts: constant memory however long the chain, e.g.
   * `await pipeline(Readable.from(guard.exportLedgerChunks({ tenant })), createWriteStream(file))`.
   */
  exportLedgerChunks(options: { readonly tenant: string }): AsyncIterable<string>;
  /** Verifies the tenant's stored chain (from its retention checkpoint, if any). */
  verifyLedger(options: { readonly tenant: string }): Promise<LedgerVerification>;
  /** A proposal's decision path reconstructed from the ledger alone. */
  replay(options: ProposalAddress): Promise<ProposalReplay | undefined>;
}
