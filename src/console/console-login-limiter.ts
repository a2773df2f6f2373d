/**
 * Login rate limiting: failed attempts are counted per client address and per approver id in a
 * sliding window; past the limit, logins are refused (429) until the window moves on, whether or
 * not the secret would have been right.
 */
import type { Clock } from '../core/guard.js';

/** Options of {@link createLoginLimiter}. */
export interface LoginLimiterConfig {
  readonly clock: Clock;
  /** Failures allowed per key within the window. @default 5 */
  readonly maxFailures?: number;
  /** @default 600_000 (10 minutes) */
  readonly windowMs?: number;
}

/** Counts login failures. */
export interface LoginLimiter {
  /** Milliseconds until a login may be tried again for any of these keys; 0 when allowed. */
  retryAfterMs(keys: readonly string[]): number;
  fail(keys: readonly string[]): void;
  succeed(keys: readonly string[]): void;
}

/** The most keys remembered; the longest-quiet ones are forgotten first. */
const MAX_TRACKED_KEYS = 10_000;

/** Creates a limiter (in memory). */
export function createLoginLimiter(config: LoginLimiterConfig): LoginLimiter {
  const maxFailures = config.maxFailures ?? 5;
  const windowMs = config.windowMs ?? 600_000;
  const failures = new Map<string, number[]>();
  const recent = (key: string, now: number): number[] => {
    const kept = (failures.get(key) ?? []).filter((at) => at > now - windowMs);
    if (kept.length === 0) failures.delete(key);
    else failures.set(key, kept);
    return kept;
  };
  return {
    retryAfterMs(keys) {
      const now = config.clock.now();
      let wait = 0;
      for (const key of keys) {
        const times = recent(key, now);
        if (times.length >= maxFailures) {
          wait = Math.max(wait, (times[times.length - maxFailures] ?? now) + windowMs - now);
        }
      }
      return wait;
    },
    fail(keys) {
      const now = config.clock.now();
      for (const key of keys) {
        const times = [...recent(key, now), now];
        failures.delete(key); // re-insert: the map stays ordered by latest failure
        failures.set(key, times.slice(-maxFailures));
      }
      // Bounded memory under a spray of made-up ids: forget the keys that failed longest ago.
      for (const key of failures.keys()) {
        if (failures.size <= MAX_TRACKED_KEYS) break;
        failures.delete(key);
      }
    },
    succeed(keys) {
      for (const key of keys) failures.delete(key);
    },
  };
}
