/**
 * Deterministic randomness for the sandbox: seed data, object ids and probabilistic faults all
 * derive from the seed, so the same seed gives the same data and the same fault schedule.
 */
import { createHash } from 'node:crypto';

const base62Alphabet = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** A small, fast PRNG (mulberry32); good enough for synthetic data, never for secrets. */
export function createSeededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A uniform number in [0, 1) that depends only on the given parts (order-independent draws). */
export function hashToUnit(...parts: readonly (string | number)[]): number {
  const digest = createHash('sha256').update(parts.join('\u0000')).digest();
  return digest.readUInt32BE(0) / 4294967296;
}

/** A base62 token of `length` characters that depends only on the given parts. */
export function hashToken(length: number, ...parts: readonly (string | number)[]): string {
  const digest = createHash('sha256').update(parts.join('\u0000')).digest();
  let token = '';
  for (let index = 0; token.length < length; index += 1) {
    const byte = digest[index % digest.length] ?? 0;
    token += base62Alphabet[(byte + index * 7) % 62];
  }
  return token;
}

/** Picks one element of a non-empty list with the given random source. */
export function pick<T>(random: () => number, items: readonly T[]): T {
  const item = items[Math.floor(random() * items.length)];
  if (item === undefined) throw new RangeError('pick() needs a non-empty list');
  return item;
}
