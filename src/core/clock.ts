/**
 * Deterministic clocks and id generators for tests and verifier runs. The system clock and random
 * ids live outside the core (`src/runtime-defaults.ts`), so the core never reads them directly.
 */
import type { Clock, Ids } from './guard.js';

/** A clock that only moves when told to. */
export interface ManualClock extends Clock {
  /** Moves time forward by `durationMs`. */
  advance(durationMs: number): void;
  /** Sets the time (epoch ms). */
  set(epochMs: number): void;
}

/** Creates a manual clock starting at `startMs`. @default 2026-01-01T00:00:00.000Z */
export function createManualClock(startMs = Date.UTC(2026, 0, 1)): ManualClock {
  let now = startMs;
  return {
    now: () => now,
    advance(durationMs) {
      if (!Number.isFinite(durationMs) || durationMs < 0) {
        throw new RangeError(`advance(${durationMs}): duration must be a non-negative number`);
      }
      now += durationMs;
    },
    set(epochMs) {
      now = epochMs;
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
