import { Buffer } from 'node:buffer';
import { createHmac } from 'node:crypto';
import * as fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import golden from '../../fixtures/golden/commitment-v1.json' with { type: 'json' };
import { canonicalBytes } from './canonical-json.js';
import {
  type Commitment,
  computeCommitment,
  keyedDigest,
  sha256Hex,
  verifyCommitment,
} from './commitment.js';
import { ConfigurationError, ContractViolationError } from './errors.js';
import { createKeyRing, type KeyPurpose, type KeyReference } from './key-ring.js';

interface GoldenCommitmentVector {
  readonly name: string;
  readonly kind: 'commitment' | 'keyedDigest';
  readonly purpose?: KeyPurpose;
  readonly key: KeyReference;
  readonly domain: string;
  readonly payload: unknown;
  readonly canonical: string;
  readonly expected: string;
}

const goldenKeys = golden.keys.map((key) => ({
  handle: key.handle,
  version: key.version,
  secret: Uint8Array.from(Buffer.from(key.secretHex, 'hex')),
}));
const goldenVectors = golden.vectors as unknown as readonly GoldenCommitmentVector[];
const v1 = { handle: 'golden', version: 1 };
const v2 = { handle: 'golden', version: 2 };
/** Current is v2 on purpose: golden vectors name their key, so rotation cannot change them. */
const goldenRing = createKeyRing({ keys: goldenKeys, current: v2, effectKey: v1 });
const v1OnlyRing = createKeyRing({ keys: goldenKeys.slice(0, 1), current: v1 });

function thrown(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error('expected an error, but nothing was thrown');
}

describe('commitment golden vectors', () => {
  it('holds the fixed test keys 00..1f and ff..e0', () => {
    expect(golden.keys.map((key) => key.secretHex)).toEqual([
      '000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f',
      'fffefdfcfbfaf9f8f7f6f5f4f3f2f1f0efeeedecebeae9e8e7e6e5e4e3e2e1e0',
    ]);
  });

  it.each(goldenVectors.map((vector) => [vector.name, vector] as const))('%s', (_name, vector) => {
    expect(new TextDecoder().decode(canonicalBytes(vector.payload))).toBe(vector.canonical);
    if (vector.kind === 'commitment') {
      const commitment = computeCommitment(goldenRing, vector.domain, vector.payload, vector.key);
      expect(commitment).toEqual({
        algorithm: 'hmac-sha256',
        keyHandle: vector.key.handle,
        keyVersion: vector.key.version,
        value: vector.expected,
      });
      expect(verifyCommitment(goldenRing, vector.domain, vector.payload, commitment)).toBe(true);
    } else {
      expect(
        keyedDigest(goldenRing, vector.purpose!, vector.key, vector.domain, vector.payload),
      ).toBe(vector.expected);
    }
  });
});

describe('computeCommitment', () => {
  it('is HMAC-SHA-256 with the commitment subkey over the tag and length-prefixed parts', () => {
    const domain = 'sideguard/proposal/v1';
    const payload = { amountMinor: 1250, currency: 'EUR' };
    const domainBytes = Buffer.from(domain, 'utf8');
    const payloadBytes = Buffer.from('{"amountMinor":1250,"currency":"EUR"}', 'utf8');
    const message = Buffer.concat([
      Buffer.from('sideguard/commitment/v1', 'ascii'),
      Buffer.from([0, 0, 0, domainBytes.length]),
      domainBytes,
      Buffer.from([0, 0, 0, payloadBytes.length]),
      payloadBytes,
    ]);
    const expected = createHmac('sha256', goldenRing.deriveKey(v1, 'commitment')!)
      .update(message)
      .digest('base64url');
    expect(computeCommitment(goldenRing, domain, payload, v1).value).toBe(expected);
  });

  it('uses the current key when none is named', () => {
    const commitment = computeCommitment(goldenRing, 'd', { a: 1 });
    expect(commitment.keyHandle).toBe('golden');
    expect(commitment.keyVersion).toBe(2);
    expect(commitment).toEqual(computeCommitment(goldenRing, 'd', { a: 1 }, v2));
  });

  it('writes 43 characters of unpadded base64url', () => {
    expect(computeCommitment(goldenRing, 'd', null).value).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('ignores key order and Unicode normalisation form, because it commits to canonical JSON', () => {
    expect(computeCommitment(goldenRing, 'd', { a: 1, note: 'Cafe\u0301' })).toEqual(
      computeCommitment(goldenRing, 'd', { note: 'Caf\u00E9', a: 1 }),
    );
  });

  it('separates domains, including ones that differ only in where the domain ends', () => {
    const values = new Set([
      computeCommitment(goldenRing, 'a', 'bc').value,
      computeCommitment(goldenRing, 'ab', 'c').value,
      computeCommitment(goldenRing, 'a"', 'c').value,
      computeCommitment(goldenRing, 'b', 'bc').value,
    ]);
    expect(values.size).toBe(4);
  });

  it('rejects a payload that is not Canonical JSON v1', () => {
    const error = thrown(() => computeCommitment(goldenRing, 'd', { amount: 12.5 }));
    expect(error).toBeInstanceOf(ContractViolationError);
    expect((error as ContractViolationError).code).toBe('canonical_json_invalid');
    expect((error as ContractViolationError).data).toEqual({ reason: 'float', path: '/amount' });
  });

  it.each([
    ['empty', ''],
    ['ill-formed', 'sideguard/\uD800'],
  ])('rejects an %s domain', (_name, domain) => {
    const error = thrown(() => computeCommitment(goldenRing, domain, null));
    expect(error).toBeInstanceOf(ContractViolationError);
    expect((error as ContractViolationError).code).toBe('commitment_domain_invalid');
  });

  it('rejects a key the ring does not hold as a configuration error', () => {
    const error = thrown(() =>
      computeCommitment(goldenRing, 'd', null, { handle: 'golden', version: 9 }),
    );
    expect(error).toBeInstanceOf(ConfigurationError);
    expect((error as ConfigurationError).code).toBe('commitment_key_unknown');
    expect((error as ConfigurationError).message).toContain('golden:9');
  });
});

describe('verifyCommitment', () => {
  const commitment = computeCommitment(v1OnlyRing, 'sideguard/proposal/v1', { amountMinor: 500 });

  it('keeps commitments made before a rotation verifiable with their own key', () => {
    expect(commitment.keyVersion).toBe(1);
    expect(
      verifyCommitment(goldenRing, 'sideguard/proposal/v1', { amountMinor: 500 }, commitment),
    ).toBe(true);
  });

  it('returns false for another payload or another domain', () => {
    expect(
      verifyCommitment(goldenRing, 'sideguard/proposal/v1', { amountMinor: 501 }, commitment),
    ).toBe(false);
    expect(
      verifyCommitment(goldenRing, 'sideguard/approval/v1', { amountMinor: 500 }, commitment),
    ).toBe(false);
  });

  it('returns false when the commitment names another key the ring holds', () => {
    const relabelled: Commitment = { ...commitment, keyVersion: 2 };
    expect(
      verifyCommitment(goldenRing, 'sideguard/proposal/v1', { amountMinor: 500 }, relabelled),
    ).toBe(false);
  });

  it.each([
    [
      'a changed value',
      (value: string) => `${value.slice(0, -1)}${value.endsWith('A') ? 'B' : 'A'}`,
    ],
    ['a truncated value', (value: string) => value.slice(0, -2)],
    ['a padded value', (value: string) => `${value}=`],
    ['a hex value', () => 'ab'.repeat(32)],
    ['an empty value', () => ''],
  ])('returns false for %s', (_name, change) => {
    const tampered: Commitment = { ...commitment, value: change(commitment.value) };
    expect(
      verifyCommitment(goldenRing, 'sideguard/proposal/v1', { amountMinor: 500 }, tampered),
    ).toBe(false);
  });

  it('returns false for another algorithm', () => {
    const other = { ...commitment, algorithm: 'hmac-sha512' } as unknown as Commitment;
    expect(verifyCommitment(goldenRing, 'sideguard/proposal/v1', { amountMinor: 500 }, other)).toBe(
      false,
    );
  });

  it('throws commitment_key_unknown naming handle:version when the ring lacks the key', () => {
    const newer = computeCommitment(goldenRing, 'd', null, v2);
    const error = thrown(() => verifyCommitment(v1OnlyRing, 'd', null, newer));
    expect(error).toBeInstanceOf(ConfigurationError);
    expect((error as ConfigurationError).code).toBe('commitment_key_unknown');
    expect((error as ConfigurationError).message).toContain('golden:2');
    expect((error as ConfigurationError).data).toEqual({ key: 'golden:2' });
  });
});

describe('keyedDigest', () => {
  it('never equals the commitment of the same key, domain and payload', () => {
    const digest = keyedDigest(goldenRing, 'commitment', v1, 'd', { a: 1 });
    expect(digest).not.toBe(computeCommitment(goldenRing, 'd', { a: 1 }, v1).value);
    expect(digest).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('differs by purpose and by key', () => {
    const digests = new Set([
      keyedDigest(goldenRing, 'effect', v1, 'd', { a: 1 }),
      keyedDigest(goldenRing, 'ledger', v1, 'd', { a: 1 }),
      keyedDigest(goldenRing, 'effect', v2, 'd', { a: 1 }),
    ]);
    expect(digests.size).toBe(3);
  });

  it('stays the same for the effect key when current rotates', () => {
    const rotated = createKeyRing({ keys: goldenKeys, current: v2, effectKey: v1 });
    expect(keyedDigest(rotated, 'effect', rotated.effectKey, 'refund@1', { charge: 'ch_1' })).toBe(
      keyedDigest(v1OnlyRing, 'effect', v1OnlyRing.effectKey, 'refund@1', { charge: 'ch_1' }),
    );
  });

  it('rejects a key the ring does not hold as keyed_digest_key_unknown', () => {
    const error = thrown(() => keyedDigest(v1OnlyRing, 'effect', v2, 'd', null));
    expect(error).toBeInstanceOf(ConfigurationError);
    expect((error as ConfigurationError).code).toBe('keyed_digest_key_unknown');
    expect((error as ConfigurationError).message).toContain('golden:2');
  });
});

describe('sha256Hex', () => {
  it('matches the FIPS 180-2 test vectors', () => {
    expect(sha256Hex('')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    expect(sha256Hex('abc')).toBe(
      'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
    );
  });

  it('hashes a string as its UTF-8 bytes, without normalising it', () => {
    expect(sha256Hex('\u00E9')).toBe(sha256Hex(Uint8Array.from([0xc3, 0xa9])));
    expect(sha256Hex('e\u0301')).not.toBe(sha256Hex('\u00E9'));
  });
});

const leaf = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.maxSafeInteger(),
  fc.string({ unit: 'binary', maxLength: 8 }),
);
const { json } = fc.letrec<{ json: unknown }>((tie) => ({
  json: fc.oneof(
    { depthSize: 'small', maxDepth: 3 },
    leaf,
    fc.array(tie('json'), { maxLength: 4 }),
    fc.dictionary(fc.string({ unit: 'grapheme-ascii', maxLength: 4 }), tie('json'), {
      maxKeys: 4,
      noNullPrototype: true,
    }),
  ),
}));

type Path = readonly (string | number)[];

/** Paths to every scalar and every empty array or object (the leaves of the tree). */
function leafPaths(value: unknown, path: Path = []): Path[] {
  if (Array.isArray(value) && value.length > 0) {
    return value.flatMap((item, index) => leafPaths(item, [...path, index]));
  }
  if (value !== null && typeof value === 'object' && Object.keys(value).length > 0) {
    return Object.entries(value).flatMap(([key, item]) => leafPaths(item, [...path, key]));
  }
  return [path];
}

/** A different leaf value whose canonical form surely differs from the old one. */
function changedLeaf(old: unknown): unknown {
  if (old === null) return 0;
  if (typeof old === 'object') return null;
  if (typeof old === 'boolean') return !old;
  if (typeof old === 'number') return old === Number.MAX_SAFE_INTEGER ? old - 1 : old + 1;
  return `${old as string}x`;
}

function withLeaf(value: unknown, path: Path, replacement: unknown): unknown {
  const [head, ...rest] = path;
  if (head === undefined) return replacement;
  if (Array.isArray(value)) {
    return value.map((item, index) => (index === head ? withLeaf(item, rest, replacement) : item));
  }
  const copy: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
    Object.defineProperty(copy, key, {
      value: key === head ? withLeaf(item, rest, replacement) : item,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return copy;
}

function leafAt(value: unknown, path: Path): unknown {
  return path.reduce<unknown>(
    (node, step) => (node as Record<string | number, unknown>)[step],
    value,
  );
}

/**
 * `fc.assert` for synchronous properties. Typing the argument as `fc.IProperty` lets Biome see
 * the synchronous overload; called directly, every call is flagged as a floating promise.
 */
function assertProperty<T>(property: fc.IProperty<T>, parameters?: fc.Parameters<T>): void {
  fc.assert(property, parameters);
}

describe('commitment properties', () => {
  it('changes when any leaf of the payload changes', () => {
    assertProperty(
      fc.property(json, fc.nat(), (payload, choice) => {
        const paths = leafPaths(payload);
        const path = paths[choice % paths.length]!;
        const changed = withLeaf(payload, path, changedLeaf(leafAt(payload, path)));
        const original = computeCommitment(goldenRing, 'sideguard/proposal/v1', payload);
        const after = computeCommitment(goldenRing, 'sideguard/proposal/v1', changed);
        expect(after.value).not.toBe(original.value);
        expect(verifyCommitment(goldenRing, 'sideguard/proposal/v1', changed, original)).toBe(
          false,
        );
        expect(verifyCommitment(goldenRing, 'sideguard/proposal/v1', payload, original)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });
});
