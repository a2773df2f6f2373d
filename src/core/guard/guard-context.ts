/**
 * The small context every guard operation shares (store, keys, clock, ids, event sink), and the
 * few helpers all of them use: argument checks, loading records, building successor records and
 * ledger drafts, and the compare-and-set commit.
 */
import type { ActionDefinition } from '../action.js';
import { checkArgument, checkTenant } from '../argument-checks.js';
import { type BreakageCheck, breakageCheck } from '../breakages.js';
import type { JsonValue } from '../canonical-json.js';
import { ConfigurationError, ProposalNotFoundError, StoreInvariantError } from '../errors.js';
import type { KeyRing } from '../key-ring.js';
import type { LedgerEvent, LedgerEventDraft } from '../ledger.js';
import { copyRecord } from '../record-copy.js';
import type { ProposalRecord, StoreCommit, StoreCommitResult } from '../store.js';
import type { LedgerEventType, Outcome, ProposalStatus } from '../vocabulary.js';
import {
  type AuthenticatedStore,
  authenticateStore,
  type ListedEffect,
} from './authenticated-store.js';
import type {
  Clock,
  GuardCoreConfig,
  GuardEvent,
  GuardResult,
  Ids,
  ProposalAddress,
  Scheduler,
} from './guard-types.js';

/** How often an operation retries a compare-and-set that lost a race before answering `conflict`. */
export const MAX_CAS_ATTEMPTS = 16;

/** What every guard operation is given. Built once per guard by `createGuardContext`. */
export interface GuardContext {
  /**
   * The configured store behind the checks of decision 045: records are sealed with a MAC on
   * write and refused on read when it fails; counted evidence and claims are checked.
   */
  readonly store: AuthenticatedStore;
  readonly keyRing: KeyRing;
  readonly clock: Clock;
  /** Ends leases on the clock's time (aborts the signal the host's function was given). */
  readonly scheduler: Scheduler;
  readonly ids: Ids;
  readonly randomBytes: (size: number) => Uint8Array;
  /**
   * Executor calls running in this process, counted per `tenant \u0000 proposal`: a resend
   * never starts while one of them is still running, whatever its lease says.
   */
  readonly running: Map<string, number>;
  /**
   * The canonical plaintext of each snapshot envelope this guard sealed, by envelope object: a
   * record it sealed itself (`store.sealedHere`) is opened from here instead of decrypted and
   * checked against its commitment again (see `openSnapshot`).
   */
  readonly snapshotPlaintexts: WeakMap<object, string>;
  /** The audience authority evidence must name. */
  readonly audience: string;
  /** Hands durable events to the host's sink; never throws. */
  readonly emit: (events: readonly LedgerEvent[]) => void;
  /**
   * Hands the events of a `deferred` commit to the host's sink once they are durable: after
   * the store's `sync` answered for their tenants (at once for a store without `sync`, which
   * makes every commit durable). Events emitted meanwhile wait behind them, so the sink still
   * sees the order of the commits. Never throws.
   */
  readonly emitWhenDurable: (events: readonly LedgerEvent[]) => void;
  /** Test-only: whether a guarantee is switched off (always false outside tests). */
  readonly broken: BreakageCheck;
}

/** Builds the shared context from the runtime's configuration. */
export function createGuardContext(config: GuardCoreConfig): GuardContext {
  /** A failing sink, or a failing error handler, must never break an operation. */
  const reportSinkError = (error: unknown): void => {
    try {
      config.onEventSinkError?.(error);
    } catch {
      // Swallowed on purpose: there is nobody left to tell.
    }
  };
  const deliver = (events: readonly LedgerEvent[]): void => {
    const sink = config.events;
    if (sink === undefined) return;
    for (const event of events) {
      const reason = event.data.reasonCode;
      const payload: GuardEvent = {
        tenant: event.tenant,
        proposal: event.proposal,
        actionType: event.actionType,
        type: event.type,
        status: event.status,
        sequence: event.sequence,
        reasonCode: typeof reason === 'string' ? reason : null,
      };
      try {
        const returned = sink(payload);
        if (returned instanceof Promise) returned.catch(reportSinkError);
      } catch (error) {
        reportSinkError(error);
      }
    }
  };
  /** Events waiting for a sync before the sink may see them (and every event after them). */
  let waiting: LedgerEvent[] = [];
  let syncing = false;
  const syncThenDeliver = async (): Promise<void> => {
    while (waiting.length > 0) {
      const batch = waiting;
      waiting = [];
      for (const tenant of new Set(batch.map((event) => event.tenant))) {
        try {
          await config.store.sync?.(tenant);
        } catch (error) {
          // Delivered all the same: the events are committed; only an OS crash before the
          // store's own next sync could drop them. The host hears why they came unsynced.
          reportSinkError(error);
        }
      }
      deliver(batch);
    }
    syncing = false;
  };
  const emit = (events: readonly LedgerEvent[]): void => {
    if (syncing) waiting.push(...events);
    else deliver(events);
  };
  const emitWhenDurable = (events: readonly LedgerEvent[]): void => {
    if (config.store.sync === undefined) {
      emit(events);
      return;
    }
    if (config.events === undefined || events.length === 0) return;
    waiting.push(...events);
    if (syncing) return;
    syncing = true;
    void syncThenDeliver();
  };
  return {
    store: authenticateStore({
      store: config.store,
      keyRing: config.keyRing,
      now: () => config.clock.now(),
      emit,
    }),
    keyRing: config.keyRing,
    clock: config.clock,
    scheduler: schedulerOf(config),
    ids: config.ids,
    randomBytes: config.randomBytes,
    running: new Map(),
    snapshotPlaintexts: new WeakMap(),
    audience: config.audience ?? 'sideguard',
    emit,
    emitWhenDurable,
    broken: breakageCheck(config.breakages),
  };
}

/** The configured scheduler, or the clock when it schedules too (as a manual clock does). */
function schedulerOf(config: GuardCoreConfig): Scheduler {
  if (config.scheduler !== undefined) return config.scheduler;
  const clock = config.clock as Clock & Partial<Scheduler>;
  if (typeof clock.at === 'function') return clock as Scheduler;
  throw new ConfigurationError(
    'scheduler_missing',
    'createGuardCore needs a scheduler that ends leases on the injected clock (createGuard supplies timers; createManualClock returns a clock that schedules)',
  );
}

const STATUS_OUTCOME: Readonly<Record<ProposalStatus, Outcome>> = {
  awaiting_authority: 'authority_pending',
  authorized: 'authorized',
  denied: 'denied',
  expired: 'expired',
  blocked: 'blocked',
  stale: 'stale',
  superseded: 'replayed',
  executing: 'in_progress',
  failed_known: 'failed_known',
  failed_unknown: 'failed_unknown',
  verification_pending: 'verification_pending',
  verification_unresolved: 'verification_unresolved',
  partially_succeeded: 'partially_succeeded',
  verified: 'verified',
  compensation_required: 'compensation_required',
  compensated: 'compensated',
  erased: 'erased',
};

/** The outcome a call reports when all it has to say is the proposal's status. */
export const outcomeOfStatus = (status: ProposalStatus): Outcome => STATUS_OUTCOME[status];

/** Asserts that the host passed an action made by `defineAction`. */
export function checkAction(action: unknown): asserts action is ActionDefinition {
  if (
    typeof action !== 'object' ||
    action === null ||
    (action as { kind?: unknown }).kind !== 'sideguard.action'
  ) {
    throw new ConfigurationError(
      'action_not_defined',
      'The first argument must be an action returned by defineAction(...)',
    );
  }
}

/**
 * The last two times {@link iso} wrote, and their texts: an action's drafts share a millisecond,
 * and an event that carries a deadline (`proposalExpiresAt`, `leaseExpiresAt`) writes it between
 * two stamps of that millisecond. Also the UTC day last written (its first millisecond and its
 * `YYYY-MM-DDT` text), so a new time of that day is written without a `Date`.
 */
const isoMemo = {
  recentMs: Number.NaN,
  recentText: '',
  olderMs: Number.NaN,
  olderText: '',
  dayStartMs: Number.NaN,
  dayText: '',
};

const DAY_MS = 86_400_000;
/** The first millisecond of year 10000: from there `toISOString` writes six-digit years. */
const YEAR_10000_MS = 253_402_300_800_000;
/** `00` … `99`, and `000` … `999`: the clock fields of a time of day. */
const TWO_DIGITS = Array.from({ length: 100 }, (_, value) => String(value).padStart(2, '0'));
const THREE_DIGITS = Array.from({ length: 1_000 }, (_, value) => String(value).padStart(3, '0'));

/** `HH:MM:SS.mmmZ` for a whole number of milliseconds into a UTC day. */
function timeOfDay(intoDayMs: number): string {
  const seconds = Math.floor(intoDayMs / 1_000);
  const minutes = Math.floor(seconds / 60);
  return `${TWO_DIGITS[Math.floor(minutes / 60)]}:${TWO_DIGITS[minutes % 60]}:${TWO_DIGITS[seconds % 60]}.${THREE_DIGITS[intoDayMs % 1_000]}Z`;
}

/**
 * ISO-8601 text for an epoch-millisecond time, exactly as `Date.prototype.toISOString` writes it.
 * Remembers its last two answers: one string shared by an action's events is less CPU, and less
 * memory in a store that keeps them (the memory store). A whole millisecond of the UTC day it
 * wrote last is written from that day's text, without a `Date`. NaN never equals itself and is
 * never inside a day, so an invalid time always reaches `toISOString` and throws.
 */
export const iso = (ms: number): string => {
  const memo = isoMemo;
  if (ms === memo.recentMs) return memo.recentText;
  if (ms === memo.olderMs) return memo.olderText;
  const intoDayMs = ms - memo.dayStartMs;
  let text: string;
  if (intoDayMs >= 0 && intoDayMs < DAY_MS && Number.isInteger(intoDayMs)) {
    text = memo.dayText + timeOfDay(intoDayMs);
  } else {
    text = new Date(ms).toISOString();
    if (Number.isInteger(ms) && ms >= 0 && ms < YEAR_10000_MS) {
      memo.dayStartMs = ms - (ms % DAY_MS);
      memo.dayText = text.slice(0, 11);
    }
  }
  memo.olderMs = memo.recentMs;
  memo.olderText = memo.recentText;
  memo.recentMs = ms;
  memo.recentText = text;
  return text;
};

/**
 * Commits one write and hands its events to the sink once they are durable. `listed` is the
 * write's effect scope as this call listed it just before (see `AuthenticatedStore.commitListed`).
 */
export async function commit(
  context: GuardContext,
  write: StoreCommit,
  listed?: ListedEffect,
): Promise<StoreCommitResult> {
  const result =
    listed === undefined
      ? await context.store.commit(write)
      : await context.store.commitListed(write, listed);
  if (result.kind !== 'committed') return result;
  if (write.durability === 'deferred') context.emitWhenDurable(result.events);
  else context.emit(result.events);
  return result;
}

/**
 * Compare-and-set from `current` to `next` (revision + 1, an allowed transition), with the
 * events and optional claim or evidence that must land in the same transaction.
 */
export function update(
  context: GuardContext,
  current: ProposalRecord,
  next: ProposalRecord,
  parts: Pick<StoreCommit, 'events' | 'claim' | 'evidence' | 'durability'>,
): Promise<StoreCommitResult> {
  return commit(context, {
    tenant: current.tenant,
    proposal: {
      kind: 'update',
      expectedRevision: current.revision,
      expectedStatus: current.status,
      record: next,
    },
    ...parts,
  });
}

/** A ledger event draft stamped with the guard's clock. */
export function draft(
  context: GuardContext,
  type: LedgerEventType,
  proposal: string | null,
  actionType: string | null,
  data: Record<string, JsonValue>,
  after?: { status: ProposalStatus; revision: number },
): LedgerEventDraft {
  return {
    proposal,
    type,
    at: iso(context.clock.now()),
    actionType,
    status: after?.status ?? null,
    revision: after?.revision ?? null,
    data,
  };
}

/** The status and revision a commit leaves behind, for the event that records it. */
export const after = (record: ProposalRecord) => ({
  status: record.status,
  revision: record.revision,
});

/** Marks the last draft with the status and revision the commit leaves behind. */
export function stampLast(events: LedgerEventDraft[], next: ProposalRecord): void {
  const last = events.pop();
  if (last !== undefined) events.push({ ...last, status: next.status, revision: next.revision });
}

function dueFor(
  status: ProposalStatus,
  expiresAtMs: number,
  lease: ProposalRecord['lease'],
  verifyAtMs: number | null,
): number | null {
  switch (status) {
    case 'awaiting_authority':
    case 'authorized':
      return expiresAtMs;
    case 'executing':
      return lease?.expiresAtMs ?? null;
    case 'failed_unknown':
    case 'verification_pending':
      return verifyAtMs;
    default:
      return null;
  }
}

/** A record's successor with the revision bumped and `dueAtMs` recomputed. */
export function successor(
  context: GuardContext,
  previous: ProposalRecord,
  changes: Partial<Omit<ProposalRecord, 'revision' | 'tenant' | 'proposal'>>,
  verifyAtMs: number | null = null,
): ProposalRecord {
  // One copy of the record: the fields `dueFor` needs are read from the change or the record.
  const dueAtMs =
    changes.dueAtMs !== undefined
      ? changes.dueAtMs
      : dueFor(
          changes.status ?? previous.status,
          changes.expiresAtMs ?? previous.expiresAtMs,
          changes.lease !== undefined ? changes.lease : previous.lease,
          verifyAtMs,
        );
  return copyRecord(previous, changes, {
    revision: previous.revision + 1,
    updatedAtMs: context.clock.now(),
    dueAtMs,
  });
}

/** What a call returns about a record. */
export function resultOf(
  record: ProposalRecord,
  outcome: Outcome = STATUS_OUTCOME[record.status],
  extra: Partial<GuardResult> = {},
): GuardResult {
  return {
    proposal: record.proposal,
    status: record.status,
    outcome,
    revision: record.revision,
    ...(record.reasonCode === null ? {} : { reasonCode: record.reasonCode }),
    semanticEffectKey: record.semanticEffectKey,
    result: { receipts: record.receipts, compensationReceipts: record.compensationReceipts },
    ...extra,
  };
}

/** Loads a proposal of this action in this tenant; anything else looks like not-found. */
export async function load(
  context: GuardContext,
  action: ActionDefinition,
  address: ProposalAddress,
): Promise<ProposalRecord> {
  checkAction(action);
  const tenant = checkTenant(address.tenant);
  const proposal = checkArgument('proposal', address.proposal);
  const record = await context.store.getProposal(tenant, proposal);
  if (record === undefined || record.tenant !== tenant || record.actionType !== action.typeName) {
    throw new ProposalNotFoundError(proposal);
  }
  return record;
}

/** Reads a record again after a lost compare-and-set. */
export async function reload(
  context: GuardContext,
  record: ProposalRecord,
): Promise<ProposalRecord> {
  const current = await context.store.getProposal(record.tenant, record.proposal);
  if (current === undefined) {
    throw new StoreInvariantError(
      'proposal_vanished',
      `Proposal ${record.proposal} disappeared from the ${context.store.kind} store`,
    );
  }
  return current;
}
