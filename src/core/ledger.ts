/**
 * The tamper-evident ledger model (I7): sealing events into a per-tenant hash chain, verifying
 * a chain and replaying it into a proposal's decision path. Stores call `sealLedgerEvents` inside
 * the transaction that holds the chain head, so the chain stays linear under concurrency.
 */
import { canonicalizeMembers, type JsonValue } from './canonical-json.js';
import { sha256Hex } from './commitment.js';
import { LedgerEventType, ProposalStatus } from './vocabulary.js';

/** The previous hash of a tenant's first event. */
export const GENESIS_HASH = '0'.repeat(64);

/** An event as the guard proposes it; the store seals it into the chain. */
export interface LedgerEventDraft {
  /** The proposal this decision is about, or null for tenant-level events. */
  readonly proposal: string | null;
  readonly type: LedgerEventType;
  /** ISO-8601 time from the guard's injected clock. */
  readonly at: string;
  /** `namespace.name@version`, or null when the input never reached a contract. */
  readonly actionType: string | null;
  /** Status the proposal has after this event, when the event changed or confirmed it. */
  readonly status: ProposalStatus | null;
  /** Proposal revision after this event, when the event is tied to a proposal write. */
  readonly revision: number | null;
  /** Allow-listed, non-private metadata only (reason codes, hashes, receipt ids, counts). */
  readonly data: Readonly<Record<string, JsonValue>>;
}

/** A sealed ledger event: a link of its tenant's hash chain. */
export interface LedgerEvent extends LedgerEventDraft {
  readonly tenant: string;
  /** 1-based, gapless per tenant. */
  readonly sequence: number;
  readonly previousHash: string;
  /** SHA-256 (hex) of the canonical JSON of every other field. */
  readonly hash: string;
}

/** The last link of a tenant's chain (or the checkpoint a truncated chain starts from). */
export interface LedgerHead {
  readonly sequence: number;
  readonly hash: string;
}

/**
 * The hash of a sealed event, from all of its fields but `hash`: lower-case hex SHA-256 of the
 * Canonical JSON v1 text (keys sorted by code point, strings NFC, no whitespace, safe integers
 * only) of `{ v: 1, tenant, sequence, previousHash, proposal, type, at, actionType, status,
 * revision, data }`. `previousHash` is the hash of the tenant's previous event, or
 * {@link GENESIS_HASH} for sequence 1. Unkeyed on purpose, so anyone can re-verify an exported
 * chain; a chain rewritten and rehashed whole is caught against a head anchored outside the store
 * (`sideguard ledger head`, `ledger verify --expect-head`).
 * @throws ContractViolationError `canonical_json_invalid` for fields Canonical JSON refuses.
 */
export function hashLedgerEvent(event: Omit<LedgerEvent, 'hash'>): string {
  return sha256Hex(
    canonicalizeMembers(EVENT_HASH_KEYS, [
      event.actionType,
      event.at,
      event.data,
      event.previousHash,
      event.proposal,
      event.revision,
      event.sequence,
      event.status,
      event.tenant,
      event.type,
      1,
    ]),
  );
}

/** The hashed members in code point order; the values above follow it. */
const EVENT_HASH_KEYS: readonly string[] = Object.freeze([
  'actionType',
  'at',
  'data',
  'previousHash',
  'proposal',
  'revision',
  'sequence',
  'status',
  'tenant',
  'type',
  'v',
]);

/**
 * Seals drafts onto a chain whose current head is `head` (undefined for an empty chain).
 * Pure: the caller must hold whatever lock makes `head` current until it stores the result.
 */
export function sealLedgerEvents(
  tenant: string,
  head: LedgerHead | undefined,
  drafts: readonly LedgerEventDraft[],
): LedgerEvent[] {
  let sequence = head?.sequence ?? 0;
  let previousHash = head?.hash ?? GENESIS_HASH;
  const sealed: LedgerEvent[] = [];
  for (const draft of drafts) {
    sequence += 1;
    // One object per event, `hash` last (the stored JSON keeps this order); the hash covers
    // every other field and is filled in once computed.
    const event: { -readonly [Key in keyof LedgerEvent]: LedgerEvent[Key] } = {
      tenant,
      sequence,
      previousHash,
      proposal: draft.proposal,
      type: draft.type,
      at: draft.at,
      actionType: draft.actionType,
      status: draft.status,
      revision: draft.revision,
      data: draft.data,
      hash: '',
    };
    event.hash = hashLedgerEvent(event);
    sealed.push(event);
    previousHash = event.hash;
  }
  return sealed;
}

/** Why a chain failed verification. */
export const LedgerFailureReason = {
  malformed: 'malformed',
  tenant_mismatch: 'tenant_mismatch',
  sequence_gap: 'sequence_gap',
  previous_hash_mismatch: 'previous_hash_mismatch',
  hash_mismatch: 'hash_mismatch',
  /** The chain ends before the head the store recorded: its newest entries were removed. */
  head_mismatch: 'head_mismatch',
} as const;
export type LedgerFailureReason = (typeof LedgerFailureReason)[keyof typeof LedgerFailureReason];

/** The verdict on a chain. `index` is the 0-based position of the first bad entry. */
export type LedgerVerification =
  | { readonly kind: 'valid'; readonly count: number; readonly head: LedgerHead | undefined }
  | {
      readonly kind: 'invalid';
      readonly index: number;
      readonly sequence: number | null;
      readonly reason: LedgerFailureReason;
      readonly message: string;
    };

const EVENT_TYPES = new Set<string>(Object.values(LedgerEventType));
const LEDGER_EVENT_KEYS: ReadonlySet<string> = new Set([
  'tenant',
  'sequence',
  'previousHash',
  'proposal',
  'type',
  'at',
  'actionType',
  'status',
  'revision',
  'data',
  'hash',
]);
const STATUSES = new Set<string>(Object.values(ProposalStatus));

/** Narrow an unknown parsed value (e.g. a JSONL line) to a LedgerEvent, or explain why not. */
export function parseLedgerEvent(value: unknown): LedgerEvent | string {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return 'not a JSON object';
  }
  const v = value as Record<string, unknown>;
  if (typeof v.tenant !== 'string' || v.tenant === '') return 'tenant must be a non-empty string';
  if (typeof v.sequence !== 'number' || !Number.isSafeInteger(v.sequence) || v.sequence < 1) {
    return 'sequence must be a positive integer';
  }
  if (typeof v.previousHash !== 'string' || !/^[0-9a-f]{64}$/.test(v.previousHash)) {
    return 'previousHash must be 64 hex digits';
  }
  if (typeof v.hash !== 'string' || !/^[0-9a-f]{64}$/.test(v.hash)) {
    return 'hash must be 64 hex digits';
  }
  if (v.proposal !== null && typeof v.proposal !== 'string') return 'proposal must be a string';
  if (typeof v.type !== 'string' || !EVENT_TYPES.has(v.type)) return 'type is not a known event';
  if (typeof v.at !== 'string') return 'at must be an ISO time string';
  if (v.actionType !== null && typeof v.actionType !== 'string') return 'actionType invalid';
  if (v.status !== null && (typeof v.status !== 'string' || !STATUSES.has(v.status))) {
    return 'status is not a known proposal status';
  }
  if (
    v.revision !== null &&
    (typeof v.revision !== 'number' || !Number.isSafeInteger(v.revision))
  ) {
    return 'revision must be an integer or null';
  }
  if (typeof v.data !== 'object' || v.data === null || Array.isArray(v.data)) {
    return 'data must be an object';
  }
  const unknown = Object.keys(v).filter((key) => !LEDGER_EVENT_KEYS.has(key));
  if (unknown.length > 0) {
    return `unknown field ${JSON.stringify(unknown[0])} (a sealed event has exactly ${LEDGER_EVENT_KEYS.size} fields)`;
  }
  return v as unknown as LedgerEvent;
}

/** Verifies a chain one entry at a time (for streaming large exports). */
export interface LedgerChainVerifier {
  /** Checks the next entry; returns the failure, or undefined if it links correctly. */
  push(entry: unknown): Extract<LedgerVerification, { kind: 'invalid' }> | undefined;
  /** The verdict so far. */
  result(): LedgerVerification;
}

/**
 * Creates an incremental verifier for one tenant's chain. With `from`, the chain is expected to
 * continue from that checkpoint (a truncated ledger); otherwise it must start at sequence 1.
 */
export function createLedgerChainVerifier(
  options: { from?: LedgerHead } = {},
): LedgerChainVerifier {
  let expectedSequence = (options.from?.sequence ?? 0) + 1;
  let expectedPrevious = options.from?.hash ?? GENESIS_HASH;
  let tenant: string | undefined;
  let head: LedgerHead | undefined = options.from;
  let index = 0;
  let failure: Extract<LedgerVerification, { kind: 'invalid' }> | undefined;
  return {
    push(raw) {
      if (failure !== undefined) return failure;
      const position = index;
      index += 1;
      const rawSequence =
        typeof raw === 'object' &&
        raw !== null &&
        typeof (raw as { sequence?: unknown }).sequence === 'number'
          ? (raw as { sequence: number }).sequence
          : null;
      const fail = (reason: LedgerFailureReason, message: string) => {
        failure = { kind: 'invalid', index: position, sequence: rawSequence, reason, message };
        return failure;
      };
      const event = parseLedgerEvent(raw);
      if (typeof event === 'string') return fail('malformed', `entry ${position + 1}: ${event}`);
      tenant ??= event.tenant;
      if (event.tenant !== tenant) {
        return fail('tenant_mismatch', `entry ${position + 1} belongs to tenant ${event.tenant}`);
      }
      if (event.sequence !== expectedSequence) {
        return fail(
          'sequence_gap',
          `entry ${position + 1} has sequence ${event.sequence}, expected ${expectedSequence} (an entry was removed, added or reordered)`,
        );
      }
      if (event.previousHash !== expectedPrevious) {
        return fail(
          'previous_hash_mismatch',
          `entry ${position + 1} (sequence ${event.sequence}) does not link to the previous entry`,
        );
      }
      const { hash, ...rest } = event;
      if (hashLedgerEvent(rest) !== hash) {
        return fail(
          'hash_mismatch',
          `entry ${position + 1} (sequence ${event.sequence}) was changed after it was written`,
        );
      }
      expectedSequence += 1;
      expectedPrevious = hash;
      head = { sequence: event.sequence, hash };
      return undefined;
    },
    result() {
      return failure ?? { kind: 'valid', count: index, head };
    },
  };
}

/**
 * Verifies one tenant's chain in order. With `from`, the chain is expected to continue from
 * that checkpoint (a truncated ledger); otherwise it must start at sequence 1 from genesis.
 */
export function verifyLedgerChain(
  events: readonly unknown[],
  options: { from?: LedgerHead } = {},
): LedgerVerification {
  const verifier = createLedgerChainVerifier(options);
  for (const event of events) {
    if (verifier.push(event) !== undefined) break;
  }
  return verifier.result();
}

/** One line per event, in sequence order: the JSONL export format. */
export function ledgerToJsonl(events: readonly LedgerEvent[]): string {
  return events.map((event) => `${JSON.stringify(event)}\n`).join('');
}

/** A proposal's history reconstructed from ledger events alone. */
export interface ProposalReplay {
  readonly proposal: string;
  readonly tenant: string;
  readonly actionType: string | null;
  /** Event types in order, e.g. `contract_validated -> policy_decided -> …`. */
  readonly decisionPath: readonly LedgerEventType[];
  /** The last status the ledger recorded, or null if none was. */
  readonly status: ProposalStatus | null;
  readonly events: readonly LedgerEvent[];
}

/** Replays a ledger (any order, any tenants) into the decision path of one proposal. */
export function replayProposal(
  events: readonly LedgerEvent[],
  proposal: string,
): ProposalReplay | undefined {
  const own = events
    .filter((event) => event.proposal === proposal)
    .sort((a, b) => a.sequence - b.sequence);
  const first = own[0];
  if (first === undefined) return undefined;
  let status: ProposalStatus | null = null;
  for (const event of own) {
    if (event.status !== null) status = event.status;
  }
  return {
    proposal,
    tenant: first.tenant,
    actionType: own.find((event) => event.actionType !== null)?.actionType ?? null,
    decisionPath: own.map((event) => event.type),
    status,
    events: own,
  };
}
