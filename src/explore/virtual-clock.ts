/**
 * The virtual clock of a schedule: it moves only when the scheduler moves it, never backward
 * (docs/decisions/051-leases-trust-a-monotonic-clock.md), and every guard of the schedule reads it.
 * It is also the guard's scheduler: a lease's end fires when the clock passes it, so an executor
 * that outlives its lease sees its signal abort at the same virtual instant on every replay.
 */
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

interface Timer {
  readonly atMs: number;
  readonly order: number;
  readonly callback: () => void;
}

/** Creates a virtual clock at {@link SIMULATION_EPOCH_MS}. */
export function createVirtualClock(startMs = SIMULATION_EPOCH_MS): VirtualClock {
  let now = startMs;
  let scheduled = 0;
  const timers = new Set<Timer>();
  const fireDue = (): void => {
    for (;;) {
      let next: Timer | undefined;
      for (const timer of timers) {
        if (timer.atMs > now) continue;
        if (
          next === undefined ||
          timer.atMs < next.atMs ||
          (timer.atMs === next.atMs && timer.order < next.order)
        ) {
          next = timer;
        }
      }
      if (next === undefined) return;
      timers.delete(next);
      next.callback();
    }
  };
  return {
    now: () => now,
    advance(durationMs) {
      if (!(durationMs >= 0)) throw new RangeError(`advance(${durationMs}): must be ≥ 0`);
      now += durationMs;
      fireDue();
    },
    advanceTo(epochMs) {
      if (epochMs > now) now = epochMs;
      fireDue();
    },
    at(atMs, callback) {
      const timer: Timer = { atMs, order: scheduled++, callback };
      timers.add(timer);
      fireDue();
      return () => {
        timers.delete(timer);
      };
    },
  };
}
