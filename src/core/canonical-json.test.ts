import * as fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import goldenVectors from '../../fixtures/golden/canonical-json-v1.json' with { type: 'json' };
import {
  CANONICAL_JSON_MAX_DEPTH,
  type CanonicalJsonFailure,
  canonicalBytes,
  canonicalize,
  type JsonValue,
} from './canonical-json.js';
import { ContractViolationError } from './errors.js';

/**
 * A golden vector. `input` is JSON, except that an object with a `"$"` key is a tag for a value
 * JSON cannot hold (see `decodeInput`).
 */
interface GoldenVector {
  readonly name: string;
  readonly input: unknown;
  readonly canonical?: string;
  readonly error?: { readonly reason: CanonicalJsonFailure; readonly path: string };
}

/**
 * Decode the tagged input encoding of `fixtures/golden/canonical-json-v1.json`:
 * - `{"$":"number","value":s}` → `Number(s)` (NaN, ±Infinity, -0, 1.5, 2^53 …)
 * - `{"$":"string","utf16":["d800", …]}` → the string of those UTF-16 code units
 * - `{"$":"undefined"}` → `undefined`; `{"$":"bigint","value":s}` → `BigInt(s)`
 * - `{"$":"object","entries":[[key, value], …]}` → an object with those own keys in that order
 *   (keys may be tags; `"__proto__"` is an own key)
 * - `{"$":"nested-arrays","depth":n}` → n nested empty arrays
 */
function decodeInput(encoded: unknown): unknown {
  if (Array.isArray(encoded)) return encoded.map(decodeInput);
  if (encoded === null || typeof encoded !== 'object') return encoded;
  const tagged = encoded as Record<string, unknown>;
  if (!Object.hasOwn(tagged, '$')) {
    return objectFromEntries(Object.entries(tagged).map(([key, value]) => [key, value]));
  }
  switch (tagged.$) {
    case 'number':
      return Number(tagged.value);
    case 'bigint':
      return BigInt(tagged.value as string);
    case 'undefined':
      return undefined;
    case 'string':
      return String.fromCharCode(
        ...(tagged.utf16 as string[]).map((unit) => Number.parseInt(unit, 16)),
      );
    case 'object':
      return objectFromEntries(tagged.entries as [unknown, unknown][]);
    case 'nested-arrays': {
      let value: unknown[] = [];
      for (let depth = 1; depth < (tagged.depth as number); depth += 1) value = [value];
      return value;
    }
    default:
      throw new Error(`unknown golden tag ${String(tagged.$)}`);
  }
}

function objectFromEntries(entries: readonly (readonly [unknown, unknown])[]): object {
  const result: Record<string, unknown> = {};
  for (const [key, value] of entries) {
    // defineProperty, not assignment: "__proto__" must become an own key, not the prototype.
    Object.defineProperty(result, decodeInput(key) as string, {
      value: decodeInput(value),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return result;
}

/** Call `run` and return the `canonical_json_invalid` error it throws. */
function canonicalFailure(run: () => unknown): ContractViolationError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ContractViolationError);
    expect((error as ContractViolationError).code).toBe('canonical_json_invalid');
    return error as ContractViolationError;
  }
  throw new Error('expected canonical_json_invalid, but nothing was thrown');
}

function expectFailure(value: unknown, reason: CanonicalJsonFailure, path: string): void {
  const error = canonicalFailure(() => canonicalize(value));
  expect(error.data).toEqual({ reason, path });
}

const vectors = goldenVectors as unknown as readonly GoldenVector[];

describe('Canonical JSON v1 golden vectors', () => {
  it('has vectors for every required case', () => {
    expect(vectors.length).toBeGreaterThanOrEqual(40);
    const reasons = new Set(vectors.flatMap((vector) => vector.error?.reason ?? []));
    for (const reason of [
      'float',
      'non_finite',
      'unsafe_integer',
      'lone_surrogate',
      'key_collision',
      'unsupported_type',
      'too_deep',
      'undefined_in_array',
    ]) {
      expect(reasons).toContain(reason);
    }
  });

  it.each(vectors.map((vector) => [vector.name, vector] as const))('%s', (_name, vector) => {
    const input = decodeInput(vector.input);
    if (vector.error === undefined) {
      expect(canonicalize(input)).toBe(vector.canonical);
    } else {
      expect(vector.canonical).toBeUndefined();
      expectFailure(input, vector.error.reason, vector.error.path);
    }
  });
});

describe('canonicalize', () => {
  it('orders an astral-plane key after a U+FFFF key, unlike a UTF-16 sort', () => {
    const value = { '\u{1F600}': 1, '\uFFFF': 2 };
    expect(Object.keys(value).sort()).toEqual(['\u{1F600}', '\uFFFF']);
    expect(canonicalize(value)).toBe('{"\uFFFF":2,"\u{1F600}":1}');
  });

  it('explains a float with the path and the money advice', () => {
    const error = canonicalFailure(() => canonicalize({ amount: 1.5 }));
    expect(error.message).toBe(
      'Cannot encode canonical JSON at /amount: 1.5 is not a safe integer (send money as a decimal string or integer minor units)',
    );
  });

  it('names the root when the root itself is invalid', () => {
    const error = canonicalFailure(() => canonicalize(Number.NaN));
    expect(error.data).toEqual({ reason: 'non_finite', path: '' });
    expect(error.message).toContain('at the root');
  });

  it('does not echo string contents in the message of a lone-surrogate error', () => {
    const error = canonicalFailure(() => canonicalize({ secret: 'hunter2\uD800' }));
    expect(error.data).toEqual({ reason: 'lone_surrogate', path: '/secret' });
    expect(error.message).not.toContain('hunter2');
  });

  it.each([
    ['a Date', new Date(0)],
    ['a Map', new Map([['a', 1]])],
    ['a Set', new Set([1])],
    ['a Buffer', Buffer.from('ab')],
    ['a Uint8Array', new Uint8Array([1])],
    [
      'a class instance',
      new (class Point {
        x = 1;
      })(),
    ],
    ['a function', () => 1],
    ['a symbol', Symbol('s')],
    ['a bigint', 10n],
    ['a boxed string', Object('text')],
    ['an array subclass', new (class Items extends Array<number> {})()],
    ['an object with a symbol key', { [Symbol('s')]: 1 }],
  ])('rejects %s as an unsupported type at its path', (_name, value) => {
    expectFailure({ items: [value] }, 'unsupported_type', '/items/0');
  });

  it('rejects undefined at the root as an unsupported type', () => {
    expectFailure(undefined, 'unsupported_type', '');
  });

  it('rejects a function-valued property instead of dropping it as JSON.stringify does', () => {
    expectFailure({ a: 1, run: () => 1 }, 'unsupported_type', '/run');
  });

  it('accepts null-prototype objects as plain objects', () => {
    const value = Object.assign(Object.create(null) as Record<string, unknown>, { b: 1, a: 2 });
    expect(canonicalize(value)).toBe('{"a":2,"b":1}');
  });

  it('rejects a hole in a sparse array as undefined in an array', () => {
    // biome-ignore lint/suspicious/noSparseArray: the hole is the point of this test.
    expectFailure({ list: [1, , 3] }, 'undefined_in_array', '/list/1');
  });

  it('rejects a cycle through an object and through an array with the path where it closes', () => {
    const node: Record<string, unknown> = { name: 'a' };
    node.self = node;
    expectFailure(node, 'cycle', '/self');
    const list: unknown[] = [1];
    list.push({ back: list });
    expectFailure({ list }, 'cycle', '/list/1/back');
  });

  it('encodes a shared, acyclic reference once per occurrence', () => {
    const shared = { id: 1 };
    expect(canonicalize({ a: shared, b: [shared, shared] })).toBe(
      '{"a":{"id":1},"b":[{"id":1},{"id":1}]}',
    );
  });

  it(`accepts ${CANONICAL_JSON_MAX_DEPTH} nested objects and rejects one more as too deep`, () => {
    const nest = (depth: number): unknown => (depth === 1 ? {} : { n: nest(depth - 1) });
    expect(canonicalize(nest(CANONICAL_JSON_MAX_DEPTH))).toBe(
      `${'{"n":'.repeat(CANONICAL_JSON_MAX_DEPTH - 1)}{}${'}'.repeat(CANONICAL_JSON_MAX_DEPTH - 1)}`,
    );
    expectFailure(
      nest(CANONICAL_JSON_MAX_DEPTH + 1),
      'too_deep',
      '/n'.repeat(CANONICAL_JSON_MAX_DEPTH),
    );
  });

  it('reads every property exactly once, so a getter cannot answer twice', () => {
    let reads = 0;
    const value = {
      get amount() {
        reads += 1;
        return reads;
      },
    };
    expect(canonicalize(value)).toBe('{"amount":1}');
    expect(reads).toBe(1);
  });
});

describe('canonicalBytes', () => {
  it('is the UTF-8 encoding of the canonical text, NFC first', () => {
    expect([...canonicalBytes({ b: 'e\u0301', a: '\u{1F600}' })]).toEqual([
      ...Buffer.from('{"a":"\u{1F600}","b":"\u00E9"}', 'utf8'),
    ]);
    expect(Buffer.from(canonicalBytes('\u00E9')).toString('hex')).toBe('22c3a922');
  });

  it('returns a plain Uint8Array', () => {
    expect(Object.getPrototypeOf(canonicalBytes(1))).toBe(Uint8Array.prototype);
  });

  it('throws the same errors as canonicalize', () => {
    const error = canonicalFailure(() => canonicalBytes({ amount: 0.1 }));
    expect(error.data).toEqual({ reason: 'float', path: '/amount' });
  });
});

// Keys and strings drawn from characters that stress NFC, code-point order and escaping.
const trickyCharacter = fc.constantFrom(
  'a',
  'e',
  'A',
  '1',
  '0',
  '\u0301',
  '\u030A',
  '\u00E9',
  '\u00C5',
  '\u212B',
  '\uE000',
  '\uFFFF',
  '\u{1F600}',
  '\u{10000}',
  '~',
  '/',
  '"',
  '\\',
  '\n',
  '\u0000',
  ' ',
);
const keyArbitrary = fc.oneof(
  fc.string({ unit: trickyCharacter, maxLength: 4 }),
  fc.string({ unit: 'binary', maxLength: 6 }),
);
const stringArbitrary = fc.oneof(
  fc.string({ unit: trickyCharacter, maxLength: 8 }),
  fc.string({ unit: 'binary', maxLength: 12 }),
);
const { json: jsonArbitrary } = fc.letrec<{ json: unknown }>((tie) => ({
  json: fc.oneof(
    { depthSize: 'small', maxDepth: 4 },
    fc.constant(null),
    fc.boolean(),
    fc.maxSafeInteger(),
    fc.constant(-0),
    stringArbitrary,
    fc.array(tie('json'), { maxLength: 5 }),
    fc.dictionary(keyArbitrary, tie('json'), { maxKeys: 5 }),
  ),
}));

/** Canonical text, or `undefined` when keys collide after NFC (generators can produce that). */
function canonicalUnlessCollision(value: unknown): string | undefined {
  try {
    return canonicalize(value);
  } catch (error) {
    if (
      error instanceof ContractViolationError &&
      (error.data as { reason?: unknown } | undefined)?.reason === 'key_collision'
    ) {
      return undefined;
    }
    throw error;
  }
}

/** The same value with every object's keys inserted in reverse order. */
function reverseKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reverseKeys);
  if (value === null || typeof value !== 'object') return value;
  const entries = Object.entries(value).reverse();
  return objectFromPlainEntries(entries.map(([key, item]) => [key, reverseKeys(item)]));
}

function objectFromPlainEntries(entries: readonly (readonly [string, unknown])[]): object {
  const result: Record<string, unknown> = {};
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

/** Code-point order, spelled the slow, obvious way, as an oracle. */
function compareCodePointsSlowly(left: string, right: string): number {
  const a = Array.from(left, (character) => character.codePointAt(0)!);
  const b = Array.from(right, (character) => character.codePointAt(0)!);
  for (let index = 0; index < Math.min(a.length, b.length); index += 1) {
    if (a[index] !== b[index]) return a[index]! - b[index]!;
  }
  return a.length - b.length;
}

/**
 * `fc.assert` for synchronous properties. Typing the argument as `fc.IProperty` lets Biome see
 * the synchronous overload; called directly, every call is flagged as a floating promise.
 */
function assertProperty<T>(property: fc.IProperty<T>, parameters?: fc.Parameters<T>): void {
  fc.assert(property, parameters);
}

describe('canonicalize properties', () => {
  it('is idempotent through JSON.parse', () => {
    assertProperty(
      fc.property(jsonArbitrary, (value) => {
        const text = canonicalUnlessCollision(value);
        fc.pre(text !== undefined);
        expect(canonicalize(JSON.parse(text as string))).toBe(text);
      }),
      { numRuns: 500 },
    );
  });

  it('never depends on key insertion order', () => {
    assertProperty(
      fc.property(
        jsonArbitrary,
        fc.uniqueArray(fc.tuple(keyArbitrary, jsonArbitrary), {
          selector: ([key]) => key,
          maxLength: 6,
        }),
        fc.infiniteStream(fc.nat()),
        (nested, entries, randomness) => {
          const forwards = objectFromPlainEntries([...entries, ['nested', nested]]);
          const shuffled = [...entries, ['nested', nested] as const]
            .map((entry) => ({ entry, order: randomness.next().value as number }))
            .sort((left, right) => left.order - right.order)
            .map(({ entry }) => entry);
          const text = canonicalUnlessCollision(forwards);
          fc.pre(text !== undefined);
          expect(canonicalize(objectFromPlainEntries(shuffled))).toBe(text);
          expect(canonicalize(reverseKeys(forwards))).toBe(text);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('writes no whitespace outside strings and no raw control characters inside them', () => {
    assertProperty(
      fc.property(jsonArbitrary, (value) => {
        const text = canonicalUnlessCollision(value);
        fc.pre(text !== undefined);
        let inString = false;
        for (let index = 0; index < (text as string).length; index += 1) {
          const character = (text as string)[index] as string;
          if (inString) {
            expect(character.charCodeAt(0)).toBeGreaterThanOrEqual(0x20);
            if (character === '\\') index += 1;
            else if (character === '"') inString = false;
          } else {
            expect(character).not.toMatch(/\s/u);
            if (character === '"') inString = true;
          }
        }
        expect(inString).toBe(false);
      }),
      { numRuns: 500 },
    );
  });

  it('sorts object keys exactly as a slow code-point comparison does', () => {
    assertProperty(
      fc.property(fc.uniqueArray(keyArbitrary, { maxLength: 12 }), (rawKeys) => {
        const keys = [...new Set(rawKeys.map((key) => key.normalize('NFC')))];
        const value = objectFromPlainEntries(keys.map((key, index) => [key, index]));
        const expected = [...keys]
          .sort(compareCodePointsSlowly)
          .map((key) => `${JSON.stringify(key)}:${keys.indexOf(key)}`)
          .join(',');
        expect(canonicalize(value)).toBe(`{${expected}}`);
      }),
      { numRuns: 500 },
    );
  });

  it('rejects every number that is not a safe integer with the matching reason', () => {
    assertProperty(
      fc.property(
        fc.double().filter((number) => !Number.isSafeInteger(number)),
        (number) => {
          const reason = !Number.isFinite(number)
            ? 'non_finite'
            : Number.isInteger(number)
              ? 'unsafe_integer'
              : 'float';
          expectFailure({ n: number }, reason, '/n');
        },
      ),
      { numRuns: 500 },
    );
  });

  it('rejects a lone surrogate anywhere in a string or key', () => {
    assertProperty(
      fc.property(
        fc.string({ unit: 'binary', maxLength: 6 }),
        fc.integer({ min: 0xd800, max: 0xdfff }),
        fc.string({ unit: 'binary', maxLength: 6 }),
        fc.boolean(),
        (before, surrogate, after, inKey) => {
          const text = `${before}${String.fromCharCode(surrogate)}${after}`;
          // A neighbour may complete the pair; only genuinely lone surrogates must fail.
          fc.pre(/[\uD800-\uDFFF]/u.test(text));
          const value = inKey ? objectFromPlainEntries([[text, 1]]) : [text];
          const error = canonicalFailure(() => canonicalize(value));
          expect((error.data as { reason: string }).reason).toBe('lone_surrogate');
        },
      ),
      { numRuns: 300 },
    );
  });

  it('agrees with JSON.stringify on sorted ASCII-keyed values', () => {
    const asciiKey = fc.string({ unit: 'binary-ascii', maxLength: 5 });
    const { ascii } = fc.letrec<{ ascii: unknown }>((tie) => ({
      ascii: fc.oneof(
        { depthSize: 'small', maxDepth: 4 },
        fc.constant(null),
        fc.boolean(),
        fc.maxSafeInteger(),
        fc.string({ unit: 'binary-ascii', maxLength: 8 }),
        fc.array(tie('ascii'), { maxLength: 4 }),
        fc.dictionary(asciiKey, tie('ascii'), { maxKeys: 4, noNullPrototype: true }),
      ),
    }));
    const sortDeep = (value: unknown): unknown => {
      if (Array.isArray(value)) return value.map(sortDeep);
      if (value === null || typeof value !== 'object') return value;
      return objectFromPlainEntries(
        Object.keys(value)
          .sort()
          .map((key) => [key, sortDeep((value as Record<string, unknown>)[key])]),
      );
    };
    assertProperty(
      fc.property(ascii, (value) => {
        // JSON.stringify lists integer-like keys first, so compare after re-parsing both sides.
        const expected = JSON.stringify(sortDeep(value));
        const actual = canonicalize(value);
        expect(JSON.parse(actual)).toEqual(JSON.parse(expected));
        expect(actual.length).toBe(expected.length);
      }),
      { numRuns: 300 },
    );
  });
});

// Type-level check: JsonValue accepts what canonicalize produces after JSON.parse.
const sample: JsonValue = { a: [1, 'b', null, true, { c: [] }] };
void sample;
