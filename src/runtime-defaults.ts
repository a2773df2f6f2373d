/**
 * The real-world defaults the pure core must not reach for itself: the system clock and its
 * timers, random ids and the operating system's random bytes.
 */
import { randomFillSync, randomUUID } from 'node:crypto';
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

/** Bytes the pool of {@link systemRandomBytes} draws from the system at once. */
export const RANDOM_POOL_BYTES = 4096;

/** Requests above this many bytes bypass the pool (one system draw each). */
const POOLED_REQUEST_MAX_BYTES = 256;

/**
 * A source of random bytes that draws `poolBytes` from `fill` at once and hands out slices of
 * them (decision 129): sealing an envelope takes three small draws (56 bytes), and one call into
 * the system's CSPRNG per draw cost more than the encryption. Every byte is handed out once: the
 * offset only moves forward, the pool is refilled only when what is left cannot serve a request
 * (the rest is discarded, never reused), each answer is a fresh copy the caller owns, and the
 * pool's copy of it is zeroed as it is handed out. Requests larger than 256 bytes are drawn
 * directly. Node's own `randomUUID` pools the same way.
 */
export function createPooledRandomBytes(
  fill: (buffer: Uint8Array) => void = (buffer) => {
    randomFillSync(buffer);
  },
  poolBytes: number = RANDOM_POOL_BYTES,
): (size: number) => Uint8Array {
  const pool = new Uint8Array(poolBytes);
  let offset = poolBytes;
  return (size) => {
    if (!Number.isSafeInteger(size) || size < 0) {
      throw new RangeError(`randomBytes(size): size must be a non-negative integer, got ${size}`);
    }
    if (size > POOLED_REQUEST_MAX_BYTES || size > poolBytes) {
      const bytes = new Uint8Array(size);
      fill(bytes);
      return bytes;
    }
    if (offset + size > poolBytes) {
      fill(pool);
      offset = 0;
    }
    const bytes = pool.slice(offset, offset + size);
    pool.fill(0, offset, offset + size);
    offset += size;
    return bytes;
  };
}

/** Cryptographically strong random bytes, pooled (see {@link createPooledRandomBytes}). */
export const systemRandomBytes: (size: number) => Uint8Array = createPooledRandomBytes();
