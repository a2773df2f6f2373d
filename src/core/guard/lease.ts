/**
 * Leases: who may act on a proposal until when. One executor, verifier or compensator holds a
 * proposal at a time; once its lease has ended, a reconciler may take the proposal over.
 */
import type { ActionDefinition } from '../action.js';
import { SideguardError, StoreInvariantError } from '../errors.js';
import type { ProposalRecord } from '../store.js';
import { type GuardContext, iso } from './guard-context.js';

/** A granted lease: its owner and the epoch millisecond it ends at. */
export type Lease = NonNullable<ProposalRecord['lease']>;

/** True while someone holds `lease` at `nowMs` (a record without a lease is not held). */
export function leaseHeld(context: GuardContext, lease: Lease | null, nowMs: number): boolean {
  if (lease === null) return false;
  const live = lease.expiresAtMs > nowMs;
  return context.broken('lease_check_inverted') ? !live : live;
}

/** A new lease for one executor, verifier or compensator, starting at `nowMs`. */
export const grantLease = (
  context: GuardContext,
  action: ActionDefinition,
  nowMs: number,
): Lease => ({ owner: context.ids.lease(), expiresAtMs: nowMs + action.executionLeaseMs });

/** The lease a record taken by this call holds; a record without one is a bug in the guard. */
export function heldLease(record: ProposalRecord): Lease {
  if (record.lease === null) {
    throw new StoreInvariantError(
      'lease_missing',
      `Proposal ${record.proposal} was taken without a lease (status ${record.status})`,
    );
  }
  return record.lease;
}

/** What a host function running under a lease is given: the lease's end, and its signal. */
export interface LeaseLimits {
  readonly deadlineMs: number;
  readonly signal: AbortSignal;
}

/**
 * Runs one executor, verifier or compensator call under `lease`: the host's function gets
 * `base` plus the lease's end as its deadline and a signal the scheduler aborts when the clock
 * reaches it. The timer is cancelled once the call settles. The signal is made when the host
 * first reads it (already aborted if the lease has ended by then): most calls never look at it,
 * and making one was about 2 % of an action's CPU.
 */
export async function underLease<Base extends object, T>(
  context: GuardContext,
  lease: Lease,
  base: Base,
  run: (hostContext: Base & LeaseLimits) => Promise<T>,
): Promise<T> {
  let controller: AbortController | undefined;
  let ended: SideguardError | undefined;
  const cancel = context.scheduler.at(lease.expiresAtMs, () => {
    ended = new SideguardError(
      'lease_ended',
      `The lease held by ${lease.owner} ended at ${iso(lease.expiresAtMs)}; stop and send nothing more`,
    );
    controller?.abort(ended);
  });
  const hostContext: Base & LeaseLimits = {
    ...base,
    deadlineMs: lease.expiresAtMs,
    get signal(): AbortSignal {
      if (controller === undefined) {
        controller = new AbortController();
        if (ended !== undefined) controller.abort(ended);
      }
      return controller.signal;
    },
  };
  try {
    return await run(hostContext);
  } finally {
    cancel();
  }
}

const runningKey = (record: ProposalRecord): string => `${record.tenant}\u0000${record.proposal}`;

/**
 * Runs an executor call, counting it as running in this process until it settles — whether it
 * heeded its signal or not. See {@link attemptRunningHere}.
 */
export async function countedAsRunning<T>(
  context: GuardContext,
  record: ProposalRecord,
  run: () => Promise<T>,
): Promise<T> {
  const key = runningKey(record);
  context.running.set(key, (context.running.get(key) ?? 0) + 1);
  try {
    return await run();
  } finally {
    const left = (context.running.get(key) ?? 1) - 1;
    if (left === 0) context.running.delete(key);
    else context.running.set(key, left);
  }
}

/** True while an executor call for this proposal still runs in this process. */
export const attemptRunningHere = (context: GuardContext, record: ProposalRecord): boolean =>
  context.running.has(runningKey(record));
