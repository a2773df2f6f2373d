/**
 * The virtual clock of a schedule: it moves only when the scheduler moves it, never backward
 * (docs/decisions/051-leases-trust-a-monotonic-clock.md), and every guard of the schedule reads it.
 * It is also the guard's scheduler: a lease's end fires when the clock passes it, so an executor
 * that outlives its lease sees its signal abort at the same virtual instant on every replay.
 */
import { createManualClock } from '../core/clock.js';
import type { Clock, Scheduler } from '../core/guard.js';

/** The instant every schedule starts at: 2026-01-01T00:00:00.000Z. */
export const SIMULATION_EPOCH_MS = Date.UTC(2026, 0, 1);

/** A clock the scheduler moves. */
export interface VirtualClock extends Clock, Scheduler {
  /** Moves forward by `durationMs` (≥ 0), firing the timers it passes, earliest first. */
  advance(durationMs: number): void;
  /** Moves forward to `epochMs` if that is later; never backward. */
  advanceTo(epochMs: number): void;
}

/** Creates a virtual clock at {@link SIMULATION_EPOCH_MS}: a manual clock that never steps back. */
export function createVirtualClock(startMs = SIMULATION_EPOCH_MS): VirtualClock {
  const clock = createManualClock(startMs);
  // The manual clock's own closures (they never read `this`), not wrappers: the guard reads the
  // clock several times per store operation.
  return {
    now: clock.now,
    at: clock.at,
    advance(durationMs) {
      if (!(durationMs >= 0)) throw new RangeError(`advance(${durationMs}): must be ≥ 0`);
      clock.advance(durationMs);
    },
    advanceTo(epochMs) {
      clock.set(Math.max(epochMs, clock.now()));
    },
  };
}
