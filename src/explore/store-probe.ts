/**
 * The store probe: wraps a real store so that every store operation is a scheduling point, and
 * records what every acknowledged commit wrote (leases, sealed events) as evidence. It never
 * changes what the store decides.
 */
import type { LedgerEvent } from '../core/ledger.js';
import type { GuardStore, ProposalRecord, StoreCommit, StoreCommitResult } from '../core/store.js';
import { awaitWithoutTraps } from './ambient-traps.js';
import type { Phase } from './explore-vocabulary.js';
import type { Scheduler } from './scheduler.js';
import type { VirtualClock } from './virtual-clock.js';

/** A lease as a record holds it. */
export type Lease = ProposalRecord['lease'];

/** One acknowledged commit, as the probe saw it. */
export interface CommitObservation {
  readonly step: number;
  readonly atMs: number;
  readonly proposal: string | null;
  readonly previous: ProposalRecord | undefined;
  readonly next: ProposalRecord | undefined;
  readonly events: readonly LedgerEvent[];
  readonly actor: string;
}

/** What every probe of a schedule writes to. */
export class StoreLog {
  readonly commits: CommitObservation[] = [];
  /** The latest record every acknowledged commit left, per proposal. */
  readonly records = new Map<string, ProposalRecord>();
  /** Evidence expiry times recorded so far (deadlines for clock jumps). */
  readonly evidenceExpiries: number[] = [];
  /**
   * The scheduler step at which ledger events became durable apart from their commit (a store
   * breakage appends them later). An acknowledged commit's events became durable at its step, in
   * `commits`: the checks derive the step of every sequence from both, after the schedule.
   */
  readonly lateDurableSteps = new Map<number, number>();

  /** Notes that `events` became durable at `step`, apart from the commit that wrote them. */
  durableLate(events: readonly LedgerEvent[], step: number): void {
    for (const event of events) this.lateDurableSteps.set(event.sequence, step);
  }

  /** Deadlines the scheduler may jump just past: leases, due times, TTLs, evidence expiries. */
  nextDeadlineAfter(nowMs: number): number | undefined {
    let next = Number.POSITIVE_INFINITY;
    for (const record of this.records.values()) {
      next = earliestAfter(nowMs, next, record.lease?.expiresAtMs);
      next = earliestAfter(nowMs, next, record.dueAtMs);
      next = earliestAfter(nowMs, next, record.expiresAtMs);
    }
    for (const expiry of this.evidenceExpiries) next = earliestAfter(nowMs, next, expiry);
    return next === Number.POSITIVE_INFINITY ? undefined : next;
  }
}

/** `value` if it is a time after `nowMs` and before `next`, else `next`. */
const earliestAfter = (nowMs: number, next: number, value: number | null | undefined): number =>
  value != null && value > nowMs && value < next ? value : next;

const phaseOfCommit = (write: StoreCommit): Phase => {
  if (write.claim !== undefined) return 'claim';
  if (write.proposal?.kind === 'insert') return 'prepare';
  if (write.evidence !== undefined && write.evidence.length > 0) return 'authority';
  const first = write.events[0]?.type;
  if (
    first === 'committed' ||
    first === 'commit_failed' ||
    first === 'commit_outcome_unknown' ||
    first === 'partial_commit' ||
    first === 'late_result_observed'
  ) {
    return 'record';
  }
  if (first === 'verification_started' || first === 'compensation_started') return 'verify_lease';
  return 'other_commit';
};

/**
 * A store whose every call parks on the scheduler, over a real store. A class rather than a
 * literal of arrows: two probes are made per schedule (and one per crash), and each arrow would
 * be a closure made, and compiled lazily on its first call, per probe.
 */
class StoreProbe implements GuardStore {
  readonly kind: GuardStore['kind'];
  readonly refusesListedEffects: boolean;
  readonly #inner: GuardStore;
  readonly #scheduler: Scheduler;
  readonly #clock: VirtualClock;
  readonly #log: StoreLog;
  /**
   * The memory store does all its work synchronously inside the call and reads no ambient time,
   * so its calls run with the traps armed (an escape there is caught too) and without the extra
   * async frame; a real store (SQLite) may wait on I/O or timers, so it runs disarmed.
   */
  readonly #disarm: boolean;

  constructor(inner: GuardStore, scheduler: Scheduler, clock: VirtualClock, log: StoreLog) {
    this.kind = inner.kind;
    // The guard takes decision 126's path (insert without listing) exactly when the real store
    // would let it, so schedules explore what production runs.
    this.refusesListedEffects = inner.refusesListedEffects === true;
    this.#inner = inner;
    this.#scheduler = scheduler;
    this.#clock = clock;
    this.#log = log;
    this.#disarm = inner.kind !== 'memory';
  }

  #read<T>(label: string, call: () => Promise<T>): Promise<T> {
    return this.#scheduler.pointThen(
      label,
      'store_read',
      this.#disarm ? () => awaitWithoutTraps(call) : call,
    );
  }

  commit(write: StoreCommit): Promise<StoreCommitResult> {
    const label = `store.commit ${write.events[0]?.type ?? ''}`;
    // Parks, then commits in the actor: one promise chain instead of an async frame per commit.
    // Bound methods rather than arrows: a fresh arrow's first call goes through V8's lazy-compile
    // stub (decision 134).
    return this.#scheduler.pointThen(
      label,
      phaseOfCommit(write),
      this.#commitAndObserve.bind(this, write),
    );
  }

  /** Commits `write` in the running actor; logs what an acknowledged commit wrote. */
  #commitAndObserve(write: StoreCommit): Promise<StoreCommitResult> {
    const inner = this.#inner;
    const actor = this.#scheduler.current?.name ?? '?';
    const pending = this.#disarm
      ? awaitWithoutTraps(() => inner.commit(write))
      : inner.commit(write);
    return pending.then(this.#observeCommit.bind(this, write, actor));
  }

  /** Logs what an acknowledged commit wrote (leases, events, evidence expiries); returns `result`. */
  #observeCommit(write: StoreCommit, actor: string, result: StoreCommitResult): StoreCommitResult {
    if (result.kind === 'committed') {
      const log = this.#log;
      const id = write.proposal?.record.proposal ?? null;
      const previous = id === null ? undefined : log.records.get(id);
      const next = write.proposal?.record;
      if (id !== null && next !== undefined) log.records.set(id, next);
      for (const evidence of write.evidence ?? []) log.evidenceExpiries.push(evidence.expiresAtMs);
      log.commits.push({
        step: this.#scheduler.step,
        atMs: this.#clock.now(),
        proposal: id,
        previous,
        next,
        events: result.events,
        actor,
      });
    }
    return result;
  }

  // Bound methods of the real store rather than arrows: a fresh arrow's first call goes through
  // V8's lazy-compile stub, and every read of every schedule makes one.
  getProposal(tenant: string, proposal: string) {
    const inner = this.#inner;
    return this.#read('store.getProposal', inner.getProposal.bind(inner, tenant, proposal));
  }

  listProposalsByEffect(tenant: string, effectScope: string, limit?: number) {
    const inner = this.#inner;
    return this.#read(
      'store.listProposalsByEffect',
      inner.listProposalsByEffect.bind(inner, tenant, effectScope, limit),
    );
  }

  getEffectClaim(tenant: string, effectScope: string) {
    const inner = this.#inner;
    return this.#read(
      'store.getEffectClaim',
      inner.getEffectClaim.bind(inner, tenant, effectScope),
    );
  }

  listEvidence(tenant: string, proposal: string) {
    const inner = this.#inner;
    return this.#read('store.listEvidence', inner.listEvidence.bind(inner, tenant, proposal));
  }

  listDue(query: Parameters<GuardStore['listDue']>[0]) {
    const inner = this.#inner;
    return this.#read('store.listDue', inner.listDue.bind(inner, query));
  }

  listProposals(query: Parameters<GuardStore['listProposals']>[0]) {
    const inner = this.#inner;
    return this.#read('store.listProposals', inner.listProposals.bind(inner, query));
  }

  readLedger(query: Parameters<GuardStore['readLedger']>[0]) {
    const inner = this.#inner;
    return this.#read('store.readLedger', inner.readLedger.bind(inner, query));
  }

  ledgerHead(tenant: string) {
    const inner = this.#inner;
    return this.#read('store.ledgerHead', inner.ledgerHead.bind(inner, tenant));
  }

  truncateLedger(tenant: string, through: number) {
    const inner = this.#inner;
    return this.#read('store.truncateLedger', inner.truncateLedger.bind(inner, tenant, through));
  }

  ledgerCheckpoint(tenant: string) {
    const inner = this.#inner;
    return this.#read('store.ledgerCheckpoint', inner.ledgerCheckpoint.bind(inner, tenant));
  }

  close(): Promise<void> {
    return this.#inner.close();
  }
}

/** Wraps `inner` so every call parks on `scheduler` and every acknowledged commit is logged. */
export function createStoreProbe(
  inner: GuardStore,
  scheduler: Scheduler,
  clock: VirtualClock,
  log: StoreLog,
): GuardStore {
  return new StoreProbe(inner, scheduler, clock, log);
}
