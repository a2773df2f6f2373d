import { Buffer } from 'node:buffer';
import { createHash } from 'node:crypto';
import * as fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalize } from './canonical-json.js';
import { openEnvelope, rewrapEnvelope, type SealedEnvelope, sealEnvelope } from './envelope.js';
import {
  ConfigurationError,
  ContractViolationError,
  type SideguardError,
  StoreInvariantError,
} from './errors.js';
import { createKeyRing } from './key-ring.js';

/** Deterministic randomness for tests: SHA-256 in counter mode over a seed. */
function seededRandomBytes(seed: string): (size: number) => Uint8Array {
  let counter = 0;
  return (size) => {
    const out = new Uint8Array(size);
    for (let offset = 0; offset < size; offset += 32) {
      counter += 1;
      const block = createHash('sha256').update(`${seed}/${counter}`).digest();
      out.set(block.subarray(0, Math.min(32, size - offset)), offset);
    }
    return out;
  };
}

const secretOld = Uint8Array.from({ length: 32 }, (_, index) => index * 3);
const secretNew = Uint8Array.from({ length: 32 }, (_, index) => 255 - index * 5);
const oldKey = { handle: 'snap', version: 1 };
const newKey = { handle: 'snap', version: 2 };
const oldRing = createKeyRing({ keys: [{ ...oldKey, secret: secretOld }], current: oldKey });
const rotatedRing = createKeyRing({
  keys: [
    { ...oldKey, secret: secretOld },
    { ...newKey, secret: secretNew },
  ],
  current: newKey,
  effectKey: oldKey,
});
const newOnlyRing = createKeyRing({ keys: [{ ...newKey, secret: secretNew }], current: newKey });

const associatedData = 'tenant:t1/proposal:p_42/snapshot';
const snapshot = { customer: { email: 'ada@example.com', name: 'Ade\u0300le' }, amountMinor: 1250 };

function thrown(run: () => unknown): SideguardError {
  try {
    run();
  } catch (error) {
    return error as SideguardError;
  }
  throw new Error('expected an error, but nothing was thrown');
}

function expectIntegrityFailure(run: () => unknown): void {
  const error = thrown(run);
  expect(error).toBeInstanceOf(StoreInvariantError);
  expect(error.code).toBe('envelope_integrity_failed');
  expect(error.message).not.toContain('ada@example.com');
}

function expectMalformed(run: () => unknown): void {
  const error = thrown(run);
  expect(error).toBeInstanceOf(StoreInvariantError);
  expect(error.code).toBe('envelope_malformed');
}

/** Flip one bit of one byte of a base64url field. */
function flipBit(field: string, byteIndex: number, bit: number): string {
  const bytes = Buffer.from(field, 'base64url');
  bytes[byteIndex % bytes.length]! ^= 1 << (bit % 8);
  return bytes.toString('base64url');
}

describe('sealEnvelope and openEnvelope', () => {
  const envelope = sealEnvelope(oldRing, snapshot, associatedData, seededRandomBytes('seal'));

  it('round-trips the canonical form of the plaintext (NFC, sorted keys)', () => {
    const opened = openEnvelope(oldRing, envelope, associatedData);
    expect(opened).toEqual({
      amountMinor: 1250,
      customer: { email: 'ada@example.com', name: 'Ad\u00E8le' },
    });
    expect(canonicalize(opened)).toBe(canonicalize(snapshot));
  });

  it('produces a v1 A256GCM envelope under the current key with well-sized base64url fields', () => {
    expect(envelope.v).toBe(1);
    expect(envelope.alg).toBe('A256GCM');
    expect(envelope.kek).toEqual(oldKey);
    expect(Buffer.from(envelope.iv, 'base64url')).toHaveLength(12);
    expect(Buffer.from(envelope.tag, 'base64url')).toHaveLength(16);
    expect(Buffer.from(envelope.wrappedKey, 'base64url')).toHaveLength(60);
    expect(Buffer.from(envelope.ciphertext, 'base64url')).toHaveLength(
      Buffer.byteLength(canonicalize(snapshot)),
    );
    for (const field of [envelope.iv, envelope.tag, envelope.wrappedKey, envelope.ciphertext]) {
      expect(field).toMatch(/^[A-Za-z0-9_-]+$/);
    }
  });

  it('leaves no plaintext visible in the stored envelope', () => {
    const stored = JSON.stringify(envelope);
    expect(stored).not.toContain('ada@example.com');
    expect(stored).not.toContain(Buffer.from('ada@example.com').toString('base64url'));
  });

  it('is deterministic for the same randomness and differs for other randomness', () => {
    expect(sealEnvelope(oldRing, snapshot, associatedData, seededRandomBytes('seal'))).toEqual(
      envelope,
    );
    const other = sealEnvelope(oldRing, snapshot, associatedData, seededRandomBytes('other'));
    expect(other.ciphertext).not.toBe(envelope.ciphertext);
    expect(other.wrappedKey).not.toBe(envelope.wrappedKey);
  });

  it('asks randomBytes for a 32-byte data key and two 12-byte IVs', () => {
    const sizes: number[] = [];
    const random = seededRandomBytes('sizes');
    sealEnvelope(oldRing, 1, associatedData, (size) => {
      sizes.push(size);
      return random(size);
    });
    expect(sizes).toEqual([32, 12, 12]);
  });

  it('refuses to open with other associated data', () => {
    expectIntegrityFailure(() =>
      openEnvelope(oldRing, envelope, 'tenant:t2/proposal:p_42/snapshot'),
    );
    expectIntegrityFailure(() => openEnvelope(oldRing, envelope, ''));
  });

  it.each(['ciphertext', 'tag', 'iv', 'wrappedKey'] as const)(
    'detects a flipped bit in %s as an integrity failure',
    (field) => {
      const tampered = { ...envelope, [field]: flipBit(envelope[field], 3, 0) };
      expectIntegrityFailure(() => openEnvelope(oldRing, tampered, associatedData));
    },
  );

  it('detects fields swapped in from another envelope as an integrity failure', () => {
    const other = sealEnvelope(oldRing, snapshot, associatedData, seededRandomBytes('swap'));
    expectIntegrityFailure(() =>
      openEnvelope(oldRing, { ...envelope, wrappedKey: other.wrappedKey }, associatedData),
    );
    expectIntegrityFailure(() =>
      openEnvelope(oldRing, { ...envelope, ciphertext: other.ciphertext }, associatedData),
    );
  });

  it('detects a key reference relabelled to another key the ring holds', () => {
    const sealed = sealEnvelope(rotatedRing, snapshot, associatedData, seededRandomBytes('r'));
    expectIntegrityFailure(() =>
      openEnvelope(rotatedRing, { ...sealed, kek: oldKey }, associatedData),
    );
  });

  it('reports a key the ring does not hold as envelope_key_unknown', () => {
    const sealed = sealEnvelope(rotatedRing, snapshot, associatedData, seededRandomBytes('k'));
    const error = thrown(() => openEnvelope(oldRing, sealed, associatedData));
    expect(error).toBeInstanceOf(ConfigurationError);
    expect(error.code).toBe('envelope_key_unknown');
    expect(error.message).toContain('snap:2');
  });

  it.each([
    ['null', null],
    ['a string', 'envelope'],
    ['version 2', { ...envelope, v: 2 }],
    ['another algorithm', { ...envelope, alg: 'A128GCM' }],
    ['a missing key reference', { ...envelope, kek: undefined }],
    ['a key version that is a string', { ...envelope, kek: { handle: 'snap', version: '1' } }],
    ['a missing tag', { ...envelope, tag: undefined }],
    ['an empty ciphertext', { ...envelope, ciphertext: '' }],
    ['standard base64 characters', { ...envelope, ciphertext: `${envelope.ciphertext}+/` }],
    ['padding', { ...envelope, iv: `${envelope.iv}==` }],
    ['a short IV', { ...envelope, iv: Buffer.alloc(8).toString('base64url') }],
    ['a short tag', { ...envelope, tag: Buffer.alloc(12).toString('base64url') }],
    ['a short wrapped key', { ...envelope, wrappedKey: envelope.wrappedKey.slice(0, 40) }],
  ])('rejects an envelope with %s as envelope_malformed', (_name, malformed) => {
    expectMalformed(() => openEnvelope(oldRing, malformed as SealedEnvelope, associatedData));
  });

  it('rejects a plaintext that is not Canonical JSON v1 before encrypting anything', () => {
    let asked = false;
    const error = thrown(() =>
      sealEnvelope(oldRing, { amount: 1.5 }, associatedData, (size) => {
        asked = true;
        return new Uint8Array(size);
      }),
    );
    expect(error).toBeInstanceOf(ContractViolationError);
    expect(error.code).toBe('canonical_json_invalid');
    expect(error.data).toEqual({ reason: 'float', path: '/amount' });
    expect(asked).toBe(false);
  });

  it('rejects ill-formed associated data as envelope_associated_data_invalid', () => {
    for (const run of [
      () => sealEnvelope(oldRing, 1, 'tenant\uD800', seededRandomBytes('aad')),
      () => openEnvelope(oldRing, envelope, 'tenant\uDC00'),
      () => openEnvelope(oldRing, envelope, 42 as unknown as string),
    ]) {
      const error = thrown(run);
      expect(error).toBeInstanceOf(ContractViolationError);
      expect(error.code).toBe('envelope_associated_data_invalid');
    }
  });

  it('crashes loudly when randomBytes returns the wrong number of bytes', () => {
    const error = thrown(() => sealEnvelope(oldRing, 1, associatedData, () => new Uint8Array(4)));
    expect(error).toBeInstanceOf(StoreInvariantError);
    expect(error.code).toBe('assertion_failed');
  });

  it('does not keep a reference to the caller’s random buffer', () => {
    const buffers: Uint8Array[] = [];
    const random = seededRandomBytes('wipe');
    const sealed = sealEnvelope(oldRing, { a: 1 }, associatedData, (size) => {
      const bytes = random(size);
      buffers.push(bytes);
      return bytes;
    });
    for (const bytes of buffers) bytes.fill(0);
    expect(openEnvelope(oldRing, sealed, associatedData)).toEqual({ a: 1 });
  });
});

describe('rewrapEnvelope', () => {
  const sealedBeforeRotation = sealEnvelope(
    oldRing,
    snapshot,
    associatedData,
    seededRandomBytes('before'),
  );

  it('moves the data key to the current key without touching the ciphertext', () => {
    const rewrapped = rewrapEnvelope(
      rotatedRing,
      sealedBeforeRotation,
      associatedData,
      seededRandomBytes('rewrap'),
    );
    expect(rewrapped.kek).toEqual(newKey);
    expect(rewrapped.iv).toBe(sealedBeforeRotation.iv);
    expect(rewrapped.ciphertext).toBe(sealedBeforeRotation.ciphertext);
    expect(rewrapped.tag).toBe(sealedBeforeRotation.tag);
    expect(rewrapped.wrappedKey).not.toBe(sealedBeforeRotation.wrappedKey);
    expect(openEnvelope(newOnlyRing, rewrapped, associatedData)).toEqual(
      openEnvelope(oldRing, sealedBeforeRotation, associatedData),
    );
  });

  it('leaves the old envelope readable only by a ring that still holds the old key', () => {
    expect(openEnvelope(rotatedRing, sealedBeforeRotation, associatedData)).toEqual(
      openEnvelope(oldRing, sealedBeforeRotation, associatedData),
    );
    const error = thrown(() => openEnvelope(newOnlyRing, sealedBeforeRotation, associatedData));
    expect(error).toBeInstanceOf(ConfigurationError);
    expect(error.code).toBe('envelope_key_unknown');
  });

  it('re-wraps even when the envelope already uses the current key', () => {
    const again = rewrapEnvelope(
      oldRing,
      sealedBeforeRotation,
      associatedData,
      seededRandomBytes('a'),
    );
    expect(again.kek).toEqual(oldKey);
    expect(again.wrappedKey).not.toBe(sealedBeforeRotation.wrappedKey);
    expect(openEnvelope(oldRing, again, associatedData)).toEqual(
      openEnvelope(oldRing, sealedBeforeRotation, associatedData),
    );
  });

  it('refuses to re-wrap a tampered envelope or one bound to other associated data', () => {
    const tampered = {
      ...sealedBeforeRotation,
      ciphertext: flipBit(sealedBeforeRotation.ciphertext, 0, 7),
    };
    expectIntegrityFailure(() =>
      rewrapEnvelope(rotatedRing, tampered, associatedData, seededRandomBytes('t')),
    );
    expectIntegrityFailure(() =>
      rewrapEnvelope(rotatedRing, sealedBeforeRotation, 'tenant:t2', seededRandomBytes('t')),
    );
  });

  it('reports an unknown old key and a malformed envelope like openEnvelope does', () => {
    const unknown = thrown(() =>
      rewrapEnvelope(newOnlyRing, sealedBeforeRotation, associatedData, seededRandomBytes('u')),
    );
    expect(unknown).toBeInstanceOf(ConfigurationError);
    expect(unknown.code).toBe('envelope_key_unknown');
    expectMalformed(() =>
      rewrapEnvelope(
        rotatedRing,
        { ...sealedBeforeRotation, v: 3 } as unknown as SealedEnvelope,
        associatedData,
        seededRandomBytes('m'),
      ),
    );
  });
});

const { json } = fc.letrec<{ json: unknown }>((tie) => ({
  json: fc.oneof(
    { depthSize: 'small', maxDepth: 4 },
    fc.constant(null),
    fc.boolean(),
    fc.maxSafeInteger(),
    fc.string({ unit: 'binary', maxLength: 16 }),
    fc.array(tie('json'), { maxLength: 5 }),
    fc.dictionary(fc.string({ unit: 'grapheme-ascii', maxLength: 6 }), tie('json'), {
      maxKeys: 5,
    }),
  ),
}));

/**
 * `fc.assert` for synchronous properties. Typing the argument as `fc.IProperty` lets Biome see
 * the synchronous overload; called directly, every call is flagged as a floating promise.
 */
function assertProperty<T>(property: fc.IProperty<T>, parameters?: fc.Parameters<T>): void {
  fc.assert(property, parameters);
}

describe('envelope properties', () => {
  it('round-trips arbitrary JSON values to their canonical form', () => {
    assertProperty(
      fc.property(json, fc.string({ maxLength: 20 }), fc.string(), (value, aad, seed) => {
        const sealed = sealEnvelope(oldRing, value, aad, seededRandomBytes(seed));
        const opened = openEnvelope(oldRing, sealed, aad);
        expect(canonicalize(opened)).toBe(canonicalize(value));
        expect(opened).toEqual(JSON.parse(canonicalize(value)));
      }),
      { numRuns: 200 },
    );
  });

  it('fails its integrity check on any single flipped bit of the ciphertext', () => {
    assertProperty(
      fc.property(
        json,
        fc.nat(),
        fc.integer({ min: 0, max: 7 }),
        fc.string(),
        (value, byteIndex, bit, seed) => {
          const sealed = sealEnvelope(oldRing, value, associatedData, seededRandomBytes(seed));
          const tampered = { ...sealed, ciphertext: flipBit(sealed.ciphertext, byteIndex, bit) };
          expectIntegrityFailure(() => openEnvelope(oldRing, tampered, associatedData));
        },
      ),
      { numRuns: 200 },
    );
  });

  it('fails its integrity check on any single flipped bit of the IV, tag or wrapped key', () => {
    assertProperty(
      fc.property(
        fc.constantFrom('iv', 'tag', 'wrappedKey' as const),
        fc.nat(),
        fc.integer({ min: 0, max: 7 }),
        (field, byteIndex, bit) => {
          const sealed = sealEnvelope(oldRing, snapshot, associatedData, seededRandomBytes('f'));
          const tampered = { ...sealed, [field]: flipBit(sealed[field], byteIndex, bit) };
          expectIntegrityFailure(() => openEnvelope(oldRing, tampered, associatedData));
        },
      ),
      { numRuns: 200 },
    );
  });
});
