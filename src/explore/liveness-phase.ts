/**
 * The liveness phase: faults are healed, and a patient operator loop (agent retries, reconcile,
 * compensate, sweeps, the clock moved to the next deadline) runs for a bounded virtual time.
 * Afterwards every proposal must be terminal or waiting for a person.
 */
import type { Guard } from '../core/guard.js';
import type { ProposalRecord } from '../core/store.js';
import { type ProposalStatus, TERMINAL_STATUSES } from '../core/vocabulary.js';
import type { Actor } from './scheduler.js';
import type { World } from './world.js';

/** Rounds of the settle loop; each ends by moving the clock to the next deadline. */
export const LIVENESS_ROUNDS = 12;

/** Statuses that wait for a person rather than for the guard. */
const WAITING_FOR_A_PERSON: ReadonlySet<ProposalStatus> = new Set([
  'awaiting_authority',
  'verification_unresolved',
  'partially_succeeded',
]);

/** Whether a proposal in `status` is settled (for an action with or without compensation). */
export function isSettled(status: ProposalStatus, canCompensate: boolean): boolean {
  if (TERMINAL_STATUSES.has(status) || WAITING_FOR_A_PERSON.has(status)) return true;
  return status === 'compensation_required' && !canCompensate;
}

/** One patient operator: retries, reconciles and compensates until everything settles. */
export async function settle(world: World, guard: Guard, actor: Actor): Promise<void> {
  const tenant = world.tenant;
  for (let round = 0; round < LIVENESS_ROUNDS; round++) {
    const open: ProposalRecord[] = [];
    for (const record of world.log.records.values()) {
      const action = world.actions.get(record.actionType);
      if (!isSettled(record.status, action?.config.compensate !== undefined)) open.push(record);
    }
    if (open.length === 0) return;
    for (const record of open) {
      const action = world.actions.get(record.actionType);
      if (action === undefined) continue;
      const address = { tenant, proposal: record.proposal };
      const result = await world.call(actor, `settle:${record.status}`, record.proposal, () => {
        switch (record.status) {
          case 'authorized':
            return guard.execute(action, address);
          case 'compensation_required':
            return guard.compensate(action, address);
          default:
            return guard.reconcile(action, address);
        }
      });
      world.remember(result, undefined);
    }
    for (const action of world.actions.values()) {
      await world.call(actor, 'sweep', null, () => guard.sweep(action, { tenant }));
    }
    const now = world.clock.now();
    const deadline = world.log.nextDeadlineAfter(now);
    world.clock.advanceTo(deadline === undefined ? now + 1_000 : deadline + 1);
  }
}
