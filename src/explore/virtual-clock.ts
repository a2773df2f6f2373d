/**
 * The virtual clock of a schedule: it moves only when the scheduler moves it, never backward
 * (docs/decisions/051-leases-trust-a-monotonic-clock.md), and every guard of the schedule reads it.
 */
import type { Clock } from '../core/guard.js';

/** The instant every schedule starts at: 2026-01-01T00:00:00.000Z. */
export const SIMULATION_EPOCH_MS = Date.UTC(2026, 0, 1);

/** A clock the scheduler moves. */
export interface VirtualClock extends Clock {
  /** Moves forward by `durationMs` (≥ 0). */
  advance(durationMs: number): void;
  /** Moves forward to `epochMs` if that is later; never backward. */
  advanceTo(epochMs: number): void;
}

/** Creates a virtual clock at {@link SIMULATION_EPOCH_MS}. */
export function createVirtualClock(startMs = SIMULATION_EPOCH_MS): VirtualClock {
  let now = startMs;
  return {
    now: () => now,
    advance(durationMs) {
      if (!(durationMs >= 0)) throw new RangeError(`advance(${durationMs}): must be ≥ 0`);
      now += durationMs;
    },
    advanceTo(epochMs) {
      if (epochMs > now) now = epochMs;
    },
  };
}
