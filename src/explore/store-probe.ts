/**
 * The store probe: wraps a real store so that every store operation is a scheduling point, and
 * records what every acknowledged commit wrote (leases, sealed events) as evidence. It never
 * changes what the store decides.
 */
import type { LedgerEvent } from '../core/ledger.js';
import type { GuardStore, ProposalRecord, StoreCommit, StoreCommitResult } from '../core/store.js';
import { awaitWithoutTraps } from './ambient-traps.js';
import type { Phase } from './explore-vocabulary.js';
import type { Actor, Scheduler } from './scheduler.js';
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
  /** The scheduler step at which each ledger sequence became durable. */
  readonly stepOfSequence = new Map<number, number>();
  /** Who moved each proposal to `executing` last (the executor holding its lease). */
  readonly executors = new Map<string, Actor>();

  /** Notes that `events` became durable at `step`. */
  durable(events: readonly LedgerEvent[], step: number): void {
    for (const event of events) this.stepOfSequence.set(event.sequence, step);
  }

  /** Deadlines the scheduler may jump just past: leases, due times, TTLs, evidence expiries. */
  nextDeadlineAfter(nowMs: number): number | undefined {
    let next: number | undefined;
    const consider = (value: number | null | undefined) => {
      if (value != null && value > nowMs && (next === undefined || value < next)) next = value;
    };
    for (const record of this.records.values()) {
      consider(record.lease?.expiresAtMs);
      consider(record.dueAtMs);
      consider(record.expiresAtMs);
    }
    for (const expiry of this.evidenceExpiries) consider(expiry);
    return next;
  }
}

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
 * Commits `write` through `inner` in the running actor and logs what an acknowledged commit wrote.
 * A module function bound per commit rather than an arrow: a fresh arrow's first call goes through
 * V8's lazy-compile stub (decision 134).
 */
function commitAndObserve(
  inner: GuardStore,
  disarm: boolean,
  write: StoreCommit,
  scheduler: Scheduler,
  clock: VirtualClock,
  log: StoreLog,
): Promise<StoreCommitResult> {
  const actor = scheduler.current?.name ?? '?';
  const pending = disarm ? awaitWithoutTraps(() => inner.commit(write)) : inner.commit(write);
  return pending.then(observeCommit.bind(undefined, write, actor, scheduler, clock, log));
}

/** Logs what an acknowledged commit wrote (leases, events, evidence expiries); returns `result`. */
function observeCommit(
  write: StoreCommit,
  actor: string,
  scheduler: Scheduler,
  clock: VirtualClock,
  log: StoreLog,
  result: StoreCommitResult,
): StoreCommitResult {
  if (result.kind === 'committed') {
    const id = write.proposal?.record.proposal ?? null;
    const previous = id === null ? undefined : log.records.get(id);
    const next = write.proposal?.record;
    if (id !== null && next !== undefined) log.records.set(id, next);
    const current = scheduler.current;
    if (id !== null && next?.status === 'executing' && current !== undefined) {
      log.executors.set(id, current);
    }
    for (const evidence of write.evidence ?? []) log.evidenceExpiries.push(evidence.expiresAtMs);
    log.durable(result.events, scheduler.step);
    log.commits.push({
      step: scheduler.step,
      atMs: clock.now(),
      proposal: id,
      previous,
      next,
      events: result.events,
      actor,
    });
  }
  return result;
}

/** Wraps `inner` so every call parks on `scheduler` and every acknowledged commit is logged. */
export function createStoreProbe(
  inner: GuardStore,
  scheduler: Scheduler,
  clock: VirtualClock,
  log: StoreLog,
): GuardStore {
  // The memory store does all its work synchronously inside the call and reads no ambient time,
  // so its calls run with the traps armed (an escape there is caught too) and without the extra
  // async frame; a real store (SQLite) may wait on I/O or timers, so it runs disarmed.
  const disarm = inner.kind !== 'memory';
  const read = <T>(label: string, call: () => Promise<T>): Promise<T> =>
    scheduler.pointThen(label, 'store_read', disarm ? () => awaitWithoutTraps(call) : call);
  return {
    kind: inner.kind,
    // The guard takes decision 126's path (insert without listing) exactly when the real store
    // would let it, so schedules explore what production runs.
    refusesListedEffects: inner.refusesListedEffects === true,
    commit(write: StoreCommit): Promise<StoreCommitResult> {
      const label = `store.commit ${write.events[0]?.type ?? ''}`;
      // Parks, then commits in the actor: one promise chain instead of an async frame per commit.
      return scheduler.pointThen(
        label,
        phaseOfCommit(write),
        commitAndObserve.bind(undefined, inner, disarm, write, scheduler, clock, log),
      );
    },
    // Bound methods rather than arrows: a fresh arrow's first call goes through V8's lazy-compile
    // stub, and every read of every schedule makes one.
    getProposal: (tenant, proposal) =>
      read('store.getProposal', inner.getProposal.bind(inner, tenant, proposal)),
    listProposalsByEffect: (tenant, effectScope, limit) =>
      read(
        'store.listProposalsByEffect',
        inner.listProposalsByEffect.bind(inner, tenant, effectScope, limit),
      ),
    getEffectClaim: (tenant, effectScope) =>
      read('store.getEffectClaim', inner.getEffectClaim.bind(inner, tenant, effectScope)),
    listEvidence: (tenant, proposal) =>
      read('store.listEvidence', inner.listEvidence.bind(inner, tenant, proposal)),
    listDue: (query) => read('store.listDue', inner.listDue.bind(inner, query)),
    listProposals: (query) => read('store.listProposals', inner.listProposals.bind(inner, query)),
    readLedger: (query) => read('store.readLedger', inner.readLedger.bind(inner, query)),
    ledgerHead: (tenant) => read('store.ledgerHead', inner.ledgerHead.bind(inner, tenant)),
    truncateLedger: (tenant, through) =>
      read('store.truncateLedger', inner.truncateLedger.bind(inner, tenant, through)),
    ledgerCheckpoint: (tenant) =>
      read('store.ledgerCheckpoint', inner.ledgerCheckpoint.bind(inner, tenant)),
    close: () => inner.close(),
  };
}
