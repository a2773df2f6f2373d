/**
 * The real-world defaults the pure core must not reach for itself: the system clock,
 * random ids and the operating system's random bytes.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { Clock, Ids } from './core/guard.js';

/** Reads `Date.now()`. */
export const systemClock: Clock = { now: () => Date.now() };

/** Random, unguessable ids (UUID v4 without dashes). */
export const randomIds: Ids = {
  proposal: () => `prop_${randomUUID().replaceAll('-', '')}`,
  lease: () => `lease_${randomUUID().replaceAll('-', '')}`,
};

/** Cryptographically strong random bytes. */
export const systemRandomBytes = (size: number): Uint8Array => randomBytes(size);
