/**
 * Text encoded once and embedded (CanonicalText), and the plain-ASCII fast path of
 * canonicalize: both must give exactly the bytes and the errors of encoding the value itself.
 */
import { describe, expect, it } from 'vitest';
import {
  CANONICAL_JSON_MAX_DEPTH,
  CanonicalText,
  canonicalize,
  canonicalizeMembers,
  encodeCanonical,
} from './canonical-json.js';
import { ContractViolationError } from './errors.js';

/** `depth` nested arrays around `inner`. */
function nested(depth: number, inner: unknown = []): unknown {
  let value = inner;
  for (let level = 1; level < depth; level += 1) value = [value];
  return value;
}

function failureOf(run: () => unknown): { reason: unknown; path: unknown } {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ContractViolationError);
    const data = (error as ContractViolationError).data as { reason: unknown; path: unknown };
    return { reason: data.reason, path: data.path };
  }
  throw new Error('expected canonical_json_invalid');
}

describe('CanonicalText', () => {
  const values: unknown[] = [
    { b: 1, a: ['x', { d: null, c: true }] },
    'caf\u0065\u0301',
    { '\u212B': 1, z: 'é' },
    0,
    [],
  ];

  it('embeds exactly the bytes of the value it encoded', () => {
    for (const value of values) {
      const payload = { tenant: 't', input: value, list: [value] };
      const embedded = {
        tenant: 't',
        input: encodeCanonical(value),
        list: [encodeCanonical(value)],
      };
      expect(canonicalize(embedded)).toBe(canonicalize(payload));
      expect(encodeCanonical(value).text).toBe(canonicalize(value));
    }
  });

  it('throws the errors canonicalize throws when it is made', () => {
    expect(failureOf(() => encodeCanonical({ a: 1.5 }))).toEqual(
      failureOf(() => canonicalize({ a: 1.5 })),
    );
  });

  it('keeps the depth limit where it is embedded, failing where the value would fail', () => {
    const deepest = nested(CANONICAL_JSON_MAX_DEPTH - 1);
    const fragment = encodeCanonical(deepest);
    // Alone it fits; one level deeper inside a payload it is one container too many.
    expect(canonicalize({ ok: fragment })).toBe(canonicalize({ ok: deepest }));
    const tooDeep = { outer: { inner: deepest } };
    const embedded = { outer: { inner: fragment } };
    expect(failureOf(() => canonicalize(embedded))).toEqual(failureOf(() => canonicalize(tooDeep)));
    expect(failureOf(() => canonicalize(embedded)).reason).toBe('too_deep');
  });

  it('refuses an object that only borrows its prototype', () => {
    const forged = Object.create(CanonicalText.prototype) as object;
    expect(failureOf(() => canonicalize({ input: forged })).reason).toBe('unsupported_type');
  });
});

describe('canonicalize, plain-ASCII keys', () => {
  it('still refuses a plain key and a later key that equals it after NFC, in either order', () => {
    // U+212A KELVIN SIGN normalises to the ASCII letter K.
    for (const entries of [
      [
        ['K', 1],
        ['\u212A', 2],
      ],
      [
        ['\u212A', 1],
        ['K', 2],
      ],
    ]) {
      expect(failureOf(() => canonicalize(Object.fromEntries(entries))).reason).toBe(
        'key_collision',
      );
    }
  });

  it('sorts plain keys by code point and escapes nothing it need not', () => {
    expect(canonicalize({ b: 'x', B: 'y', a: 'q"\\', _: '~' })).toBe(
      '{"B":"y","_":"~","a":"q\\"\\\\","b":"x"}',
    );
  });
});

describe('canonicalizeMembers', () => {
  const objectOf = (keys: readonly string[], values: readonly unknown[]) =>
    Object.fromEntries(keys.map((key, index) => [key, values[index]]));

  it('writes what canonicalize writes for the same object, leaving out undefined members', () => {
    const keys = ['actionType', 'at', 'data', 'v'];
    const values = [null, 'caf\u0065\u0301', { z: [1, 'é'], a: { b: true } }, undefined];
    expect(canonicalizeMembers(keys, values)).toBe(canonicalize(objectOf(keys, values)));
  });

  it('takes the generic path for keys out of order or not plain ASCII', () => {
    for (const keys of [
      ['b', 'a'],
      ['a', '\u00e9'],
      ['a', 'a'],
    ]) {
      expect(canonicalizeMembers(keys, [1, 2])).toBe(canonicalize(objectOf(keys, [1, 2])));
    }
  });

  it('fails with the path and reason canonicalize gives', () => {
    const keys = ['data', 'v'];
    const values = [{ amount: 1.5 }, 1];
    expect(failureOf(() => canonicalizeMembers(keys, values))).toEqual(
      failureOf(() => canonicalize(objectOf(keys, values))),
    );
  });
});
