import { describe, expect, it } from 'vitest';
import { openEnvelope, sealEnvelope } from './core/envelope.js';
import { createDevelopmentKeyRing } from './core/key-ring.js';
import {
  createPooledRandomBytes,
  RANDOM_POOL_BYTES,
  systemRandomBytes,
} from './runtime-defaults.js';

/**
 * A fill that writes a running counter, so every byte it ever produced is identified by its
 * position in one endless sequence (four bytes per number, big-endian).
 */
function countingFill() {
  let produced = 0;
  const fills: number[] = [];
  const fill = (buffer: Uint8Array): void => {
    fills.push(buffer.length);
    for (let index = 0; index < buffer.length; index += 1) {
      buffer[index] = Math.floor((produced + index) / 4) >>> (8 * (3 - ((produced + index) % 4)));
    }
    produced += buffer.length;
  };
  return { fill, fills, producedBytes: () => produced };
}

const expectedByte = (position: number): number =>
  (Math.floor(position / 4) >>> (8 * (3 - (position % 4)))) & 0xff;

describe('the pooled random bytes', () => {
  it('hands out every byte of each fill once, in order, and throws the unusable rest away', () => {
    const source = countingFill();
    const random = createPooledRandomBytes(source.fill, 64);
    const handedOut: number[] = [];
    // 32 + 12 + 12 per envelope: the fourth 12 does not fit the 8 bytes left of a 64-byte pool.
    for (let index = 0; index < 40; index += 1) {
      for (const size of [32, 12, 12]) {
        const bytes = random(size);
        expect(bytes).toBeInstanceOf(Uint8Array);
        expect(bytes.length).toBe(size);
        handedOut.push(...bytes);
      }
    }
    // Each fill of 64 serves 32 + 12 + 12 = 56 bytes; the 8 left over are never handed out.
    expect(source.fills.every((length) => length === 64)).toBe(true);
    expect(source.fills.length).toBe(40);
    const expected: number[] = [];
    for (let fill = 0; fill < 40; fill += 1) {
      for (let offset = 0; offset < 56; offset += 1)
        expected.push(expectedByte(fill * 64 + offset));
    }
    expect(handedOut).toEqual(expected);
  });

  it('answers each caller with its own copy and keeps none of it in the pool', () => {
    const source = countingFill();
    const random = createPooledRandomBytes(source.fill, 64);
    const first = random(16);
    const copy = Uint8Array.from(first);
    first.fill(0xff);
    const second = random(16);
    // Wiping or changing one answer changes nothing handed out before or after it.
    expect([...second]).toEqual(Array.from({ length: 16 }, (_, index) => expectedByte(16 + index)));
    expect(first.buffer).not.toBe(second.buffer);
    expect([...copy]).toEqual(Array.from({ length: 16 }, (_, index) => expectedByte(index)));
  });

  it('draws large requests directly and refuses sizes that are not byte counts', () => {
    const source = countingFill();
    const random = createPooledRandomBytes(source.fill, 64);
    expect(random(300).length).toBe(300);
    expect(source.fills).toEqual([300]);
    expect(random(0).length).toBe(0);
    expect(() => random(-1)).toThrow(RangeError);
    expect(() => random(1.5)).toThrow(RangeError);
  });

  it('never repeats a 16-byte window across many system pools', () => {
    const seen = new Set<string>();
    const draws = Math.ceil((RANDOM_POOL_BYTES * 8) / 16);
    for (let index = 0; index < draws; index += 1) {
      const bytes = systemRandomBytes(16);
      expect(bytes.length).toBe(16);
      seen.add(Buffer.from(bytes).toString('hex'));
    }
    expect(seen.size).toBe(draws);
  });

  it('gives every sealed envelope its own data key and IVs', () => {
    const keyRing = createDevelopmentKeyRing();
    const envelopes = Array.from({ length: 200 }, () =>
      sealEnvelope(keyRing, { same: 'plaintext' }, 'aad', systemRandomBytes),
    );
    expect(new Set(envelopes.map((envelope) => envelope.iv)).size).toBe(200);
    expect(new Set(envelopes.map((envelope) => envelope.wrappedKey)).size).toBe(200);
    expect(new Set(envelopes.map((envelope) => envelope.ciphertext)).size).toBe(200);
    for (const envelope of envelopes) {
      expect(openEnvelope(keyRing, envelope, 'aad')).toEqual({ same: 'plaintext' });
    }
  });
});
