/**
 * Leases: who may act on a proposal until when. One executor, verifier or compensator holds a
 * proposal at a time; once its lease has ended, a reconciler may take the proposal over.
 */
import type { ActionDefinition } from '../action.js';
import type { ProposalRecord } from '../store.js';
import type { GuardContext } from './guard-context.js';

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
