/**
 * Deterministic clocks and id generators for tests and verifier runs. The system clock, its
 * timers and random ids live outside the core (`src/runtime-defaults.ts`), so the core never
 * reads them directly.
 */
import type { Clock, Ids, Scheduler } from './guard/guard-types.js';

/** A clock that only moves when told to, and fires the timers it passes when it moves. */
export interface ManualClock extends Clock, Scheduler {
  /** Moves time forward by `durationMs`, firing every timer due by then, earliest first. */
  advance(durationMs: number): void;
  /** Sets the time (epoch ms), firing every timer due by then, earliest first. */
  set(epochMs: number): void;
}

interface Timer {
  readonly atMs: number;
  readonly order: number;
  readonly callback: () => void;
}

/** Creates a manual clock starting at `startMs`. @default 2026-01-01T00:00:00.000Z */
export function createManualClock(startMs = Date.UTC(2026, 0, 1)): ManualClock {
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
      if (!Number.isFinite(durationMs) || durationMs < 0) {
        throw new RangeError(`advance(${durationMs}): duration must be a non-negative number`);
      }
      now += durationMs;
      fireDue();
    },
    set(epochMs) {
      now = epochMs;
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

/** Sequential ids `prop_<prefix>0001`, `lease_<prefix>0001`, … — repeatable from a seed. */
export function createSequentialIds(prefix = ''): Ids {
  let proposals = 0;
  let leases = 0;
  return {
    proposal: () => `prop_${prefix}${String(++proposals).padStart(4, '0')}`,
    lease: () => `lease_${prefix}${String(++leases).padStart(4, '0')}`,
  };
}
