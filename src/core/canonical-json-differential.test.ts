import * as fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { referenceCanonicalize } from '../../test/support/canonical-json-reference.js';
import { canonicalize, canonicalizeMembers, encodeCanonical } from './canonical-json.js';

/**
 * The encoder against the one it replaced (test/support/canonical-json-reference.ts): the same
 * bytes for every value it accepts, the same error (code, message, path, reason) for every value
 * it refuses. Hashes, commitments and effect keys already stored depend on it.
 */

type Outcome =
  | { readonly ok: string }
  | { readonly error: { name: string; message: string; code: unknown; data: unknown } };

function outcome(encode: () => string): Outcome {
  try {
    return { ok: encode() };
  } catch (error) {
    const failure = error as { name: string; message: string; code?: unknown; data?: unknown };
    return {
      error: {
        name: failure.name,
        message: failure.message,
        code: failure.code,
        data: failure.data,
      },
    };
  }
}

/**
 * `fc.assert` for synchronous properties (typed as `fc.IProperty` so that Biome sees the
 * synchronous overload, as in canonical-json.test.ts).
 */
function assertProperty<T>(property: fc.IProperty<T>, parameters?: fc.Parameters<T>): void {
  fc.assert(property, parameters);
}

const expectSame = (value: unknown): void => {
  expect(outcome(() => canonicalize(value))).toEqual(outcome(() => referenceCanonicalize(value)));
};

// Characters that stress NFC (composed/decomposed, the Kelvin and Ångström signs that normalise
// to other letters, even to ASCII), code-point order (U+E000..U+FFFF against astral pairs),
// escaping (quotes, backslash, controls), lone surrogates, and integer-like keys (which objects
// enumerate first, in numeric order).
const hostileCharacter = fc.constantFrom(
  'a',
  'b',
  'K',
  'A',
  '1',
  '2',
  '0',
  '_',
  '\u212A',
  '\u212B',
  '\u00C5',
  '\u0301',
  '\u030A',
  '\u00E9',
  '\uE000',
  '\uFFFF',
  '\u{1F600}',
  '\u{10000}',
  '\uD800',
  '\uDFFF',
  '\uD83D',
  '"',
  '\\',
  '\n',
  '\u0000',
  '\u001F',
  '\u007F',
  '\u2028',
  '~',
  '/',
  ' ',
);
const hostileString = fc.oneof(
  fc.string({ unit: hostileCharacter, maxLength: 6 }),
  fc.string({ unit: 'binary', maxLength: 8 }),
  fc.string({ maxLength: 12 }),
  fc.constantFrom('', '__proto__', 'constructor', 'toJSON', '10', '9', '01', '-1', '1e3'),
);
const hostileNumber = fc.oneof(
  fc.integer(),
  fc.maxSafeInteger(),
  fc.double(),
  fc.constantFrom(
    -0,
    0,
    2 ** 53 - 1,
    -(2 ** 53 - 1),
    2 ** 53,
    -(2 ** 53),
    1e21,
    1e-7,
    0.1,
    Number.MAX_VALUE,
    Number.MIN_VALUE,
    Number.NaN,
    Number.POSITIVE_INFINITY,
    Number.NEGATIVE_INFINITY,
  ),
);
const oddValue = fc.constantFrom<unknown>(
  undefined,
  10n,
  Symbol('s'),
  () => 1,
  new Date(0),
  new Map(),
  new Set(),
  new Uint8Array(2),
  Object.create(Array.prototype),
  new (class Point {})(),
);

/** An object with exactly these own keys in this order (`__proto__` an own key, not the prototype). */
function objectOf(
  entries: readonly (readonly [string, unknown])[],
  nullPrototype: boolean,
): object {
  const result: Record<string, unknown> = nullPrototype ? Object.create(null) : {};
  for (const [key, value] of entries) {
    Object.defineProperty(result, key, {
      value,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return result;
}

const { value: hostileValue } = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', maxDepth: 5 },
    fc.constant(null),
    fc.boolean(),
    hostileNumber,
    hostileString,
    hostileString,
    fc.array(tie('value'), { maxLength: 5 }),
    fc.sparseArray(tie('value'), { maxLength: 4 }),
    fc
      .tuple(fc.array(fc.tuple(hostileString, tie('value')), { maxLength: 6 }), fc.boolean())
      .map(([entries, nullPrototype]) => objectOf(entries, nullPrototype)),
    fc
      .array(fc.tuple(fc.string({ unit: 'grapheme-ascii', maxLength: 4 }), tie('value')), {
        maxLength: 8,
      })
      .map((entries) => objectOf(entries, false)),
    oddValue,
  ),
}));

describe('canonicalize, against the reference encoder', () => {
  it('gives the same bytes or the same error for hostile values', () => {
    assertProperty(fc.property(hostileValue, expectSame), { numRuns: 5000 });
  });

  it('gives the same bytes for plain-ASCII objects in any key order', () => {
    const ascii = fc.string({ unit: 'grapheme-ascii', maxLength: 6 });
    const member = fc.oneof(ascii, fc.maxSafeInteger(), fc.boolean(), fc.constant(null));
    assertProperty(
      fc.property(
        fc.array(fc.tuple(ascii, fc.oneof(member, fc.array(member, { maxLength: 3 }))), {
          maxLength: 12,
        }),
        (entries) => {
          const value = objectOf(entries, false);
          expectSame(value);
          expectSame({ nested: value, list: [value, value] });
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('sorts plain-ASCII keys exactly on both sides of the insertion-sort bound (16 keys)', () => {
    assertProperty(
      fc.property(
        fc.uniqueArray(fc.string({ unit: 'grapheme-ascii', maxLength: 4 }), {
          minLength: 14,
          maxLength: 19,
        }),
        (keys) => {
          const value = Object.fromEntries(keys.map((key, index) => [key, index]));
          expectSame(value);
          expectSame(Object.fromEntries([...keys].reverse().map((key, index) => [key, index])));
        },
      ),
      { numRuns: 500 },
    );
  });

  it('gives the same errors for symbol keys, cycles and nesting past the limit', () => {
    const withSymbol = { a: 1, [Symbol('hidden')]: 2 };
    const withHiddenSymbol = { a: 1 };
    Object.defineProperty(withHiddenSymbol, Symbol('hidden'), { value: 2, enumerable: false });
    const cycle: Record<string, unknown> = { a: [1, { b: 2 }] };
    ((cycle.a as unknown[])[1] as Record<string, unknown>).back = cycle;
    const shared = { s: 'shared' };
    let deep: unknown = 'leaf';
    for (let depth = 0; depth < 70; depth += 1) deep = depth % 2 === 0 ? [deep] : { d: deep };
    for (const value of [
      withSymbol,
      withHiddenSymbol,
      cycle,
      { x: shared, y: [shared, shared] },
      deep,
      { k: deep },
      [1, undefined, 2],
      { '\u212A': 1, K: 2 },
      { K: 2, '\u212A': 1 },
      { '\uD800': undefined, a: 1 },
      { '\uD800': 1 },
      { 'a\u030A': 1, '\u00E5': 2 },
      { b: 1, a: { d: -0, c: 2 ** 53 } },
    ]) {
      expectSame(value);
    }
  });

  it('reads each property once on the way to an error, as the reference did', () => {
    const reads = { now: 0, reference: 0 };
    const make = (counter: 'now' | 'reference') => ({
      get a() {
        reads[counter] += 1;
        return 1;
      },
      b: 0.5,
    });
    expect(outcome(() => canonicalize(make('now')))).toEqual(
      outcome(() => referenceCanonicalize(make('reference'))),
    );
    expect(reads).toEqual({ now: 1, reference: 1 });
  });
});

describe('canonicalizeMembers and embedded text, against the reference encoder', () => {
  it('canonicalizeMembers writes what the reference writes for that object', () => {
    const keys = ['a', 'b', 'data', 'z'];
    assertProperty(
      fc.property(fc.array(hostileValue, { minLength: 4, maxLength: 4 }), (values) => {
        expect(outcome(() => canonicalizeMembers(keys, values))).toEqual(
          outcome(() =>
            referenceCanonicalize(Object.fromEntries(keys.map((key, at) => [key, values[at]]))),
          ),
        );
      }),
      { numRuns: 2000 },
    );
  });

  it('canonicalizeMembers is exact for a frozen key list used again and a list changed in place', () => {
    const frozen = Object.freeze(['a', 'b', 'data', 'z']);
    const values = [1, undefined, { y: 'é', x: [2] }, 'z'];
    const expected = referenceCanonicalize({ a: 1, data: { y: 'é', x: [2] }, z: 'z' });
    expect(canonicalizeMembers(frozen, values)).toBe(expected);
    expect(canonicalizeMembers(frozen, values)).toBe(expected);
    // A list that is not frozen is checked each time: changed out of order, it takes the
    // generic path and still sorts.
    const open = ['a', 'b', 'c'];
    expect(canonicalizeMembers(open, [1, 2, 3])).toBe('{"a":1,"b":2,"c":3}');
    open[0] = 'd';
    expect(canonicalizeMembers(open, [1, 2, 3])).toBe('{"b":2,"c":3,"d":1}');
    open[0] = 'é';
    expect(canonicalizeMembers(open, [1, 2, 3])).toBe(referenceCanonicalize({ é: 1, b: 2, c: 3 }));
  });

  it('an embedded CanonicalText is written as the value it encodes', () => {
    assertProperty(
      fc.property(hostileValue, (value) => {
        let fragment: unknown;
        try {
          fragment = encodeCanonical(value);
        } catch {
          return;
        }
        expect(canonicalize({ inner: fragment, list: [fragment] })).toBe(
          referenceCanonicalize({ inner: value, list: [value] }),
        );
      }),
      { numRuns: 2000 },
    );
  });
});
