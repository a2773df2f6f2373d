/**
 * The real-world defaults the pure core must not reach for itself: the system clock and its
 * timers, random ids and the operating system's random bytes.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { Clock, Ids, Scheduler } from './core/guard.js';

/** Reads `Date.now()`. */
export const systemClock: Clock = { now: () => Date.now() };

/** The longest delay one Node.js timer takes; longer waits re-arm. */
const MAX_TIMER_DELAY_MS = 2_147_483_647;

/**
 * A scheduler on real timers for `clock`: it waits until `clock` says the time has come,
 * re-arming for a clock that runs slower than the system's or a wait beyond one timer's range.
 * Timers are unref'd: a pending lease end never keeps the process alive.
 */
export function timerScheduler(clock: Clock): Scheduler {
  return {
    at(atMs, callback) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      let cancelled = false;
      const arm = (): void => {
        if (cancelled) return;
        const waitMs = atMs - clock.now();
        if (waitMs <= 0) {
          callback();
          return;
        }
        timer = setTimeout(arm, Math.min(waitMs, MAX_TIMER_DELAY_MS));
        timer.unref();
      };
      timer = setTimeout(arm, 0);
      timer.unref();
      return () => {
        cancelled = true;
        if (timer !== undefined) clearTimeout(timer);
      };
    },
  };
}

/** Random, unguessable ids (UUID v4 without dashes). */
export const randomIds: Ids = {
  proposal: () => `prop_${randomUUID().replaceAll('-', '')}`,
  lease: () => `lease_${randomUUID().replaceAll('-', '')}`,
};

/** Cryptographically strong random bytes. */
export const systemRandomBytes = (size: number): Uint8Array => randomBytes(size);
