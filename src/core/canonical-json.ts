/**
 * Canonical JSON v1: one deterministic UTF-8 byte string per JSON value, so that hashes,
 * commitments and semantic effect keys computed here or anywhere else agree (DESIGN.md).
 */

import {
  CanonicalJsonFailure,
  describeObject,
  invalid,
  type Path,
} from './canonical-json-errors.js';
import { PLAIN_ASCII } from './json-text.js';

/** A value that Canonical JSON v1 can encode (after the checks `canonicalize` performs). */
export type JsonValue =
  | null
  | boolean
  | number
  | string
  | readonly JsonValue[]
  | { readonly [key: string]: JsonValue };

export { CanonicalJsonFailure };

/**
 * The deepest container nesting Canonical JSON v1 accepts: the root array or object is at
 * depth 1, so 64 nested containers are fine and the 65th is rejected with `too_deep`.
 */
export const CANONICAL_JSON_MAX_DEPTH = 64;

/**
 * Encode `value` as Canonical JSON v1 text.
 *
 * - Object keys are sorted by Unicode code point (so U+1F600 sorts after U+FFFF, unlike
 *   `Array.prototype.sort`), every key and string is NFC-normalised, and two keys of one object
 *   that become equal after NFC are rejected.
 * - Numbers must be safe integers (`Number.isSafeInteger`); `-0` is written as `0`. Money travels
 *   as decimal strings or integer minor units.
 * - Only `null`, booleans, numbers, strings, arrays and plain objects (prototype
 *   `Object.prototype` or `null`) are accepted. Object properties whose value is `undefined` are
 *   omitted (as `JSON.stringify` does); `undefined` or a hole inside an array is rejected. Symbol
 *   keys are rejected rather than silently dropped, so two different inputs never share bytes.
 * - No whitespace; strings are escaped exactly as `JSON.stringify` escapes well-formed strings.
 * - At most {@link CANONICAL_JSON_MAX_DEPTH} nested containers; cycles are rejected (shared,
 *   acyclic references are fine and are encoded once per occurrence).
 *
 * @throws ContractViolationError code `canonical_json_invalid`, with
 *   `data: { path, reason }` where `path` is a JSON-pointer to the offending value (`""` for the
 *   root) and `reason` is a {@link CanonicalJsonFailure}. Messages never echo string contents.
 */
export function canonicalize(value: unknown): string {
  return encodeRoot(value).text;
}

/**
 * {@link canonicalize} of the object whose members are `keys[i]: values[i]`, for payloads of
 * fixed shape (a ledger event): when the keys are plain ASCII in ascending order, the object is
 * written straight from the lists, skipping the generic key sort. Same bytes and errors as
 * canonicalize of that object; other keys take the generic path.
 */
export function canonicalizeMembers(keys: readonly string[], values: readonly unknown[]): string {
  const prefixes = memberPrefixesOf(keys);
  if (prefixes === undefined) {
    return canonicalize(Object.fromEntries(keys.map((name, at) => [name, values[at]])));
  }
  const outer = deepest;
  deepest = 1;
  try {
    let text = '{';
    for (let index = 0; index < keys.length; index += 1) {
      const item = values[index];
      if (item === undefined) continue;
      text += text.length === 1 ? prefixes.first[index]! : prefixes.later[index]!;
      text += encodeValue(item, undefined, keys[index], 1, []);
    }
    return `${text}}`;
  } finally {
    deepest = outer;
  }
}

/** What each member of a fixed shape starts with: `"key":` first, `,"key":` after another. */
interface MemberPrefixes {
  readonly first: readonly string[];
  readonly later: readonly string[];
}

/**
 * The member prefixes of `keys` when they are plain ASCII in ascending order (undefined
 * otherwise). Worked out once per frozen key list (the ledger's event shape), so each event
 * writes two ready strings per member instead of building them; a list that is not frozen could
 * change after it was checked, so it is checked each time.
 */
function memberPrefixesOf(keys: readonly string[]): MemberPrefixes | undefined {
  const known = memberPrefixes.get(keys);
  if (known !== undefined) return known;
  for (let index = 0; index < keys.length; index += 1) {
    const key = keys[index]!;
    if (!PLAIN_ASCII.test(key) || (index > 0 && !(keys[index - 1]! < key))) return undefined;
  }
  const prefixes = {
    first: keys.map((key) => `"${key}":`),
    later: keys.map((key) => `,"${key}":`),
  };
  if (Object.isFrozen(keys)) memberPrefixes.set(keys, prefixes);
  return prefixes;
}

const memberPrefixes = new WeakMap<readonly string[], MemberPrefixes>();

/** The UTF-8 bytes of {@link canonicalize}; same rules, same errors. Returns a fresh array. */
export function canonicalBytes(value: unknown): Uint8Array {
  return utf8Encoder.encode(canonicalize(value));
}

const utf8Encoder = new TextEncoder();

/**
 * A value already encoded as Canonical JSON v1, so a payload that embeds it (a commitment over
 * the input, the snapshot that holds it) does not encode it again: `canonicalize` writes its text
 * where the value would go. The constructor encodes, so the text is always what `canonicalize`
 * produced for the value at that moment. Internal to the core (not exported by the package).
 * @throws as {@link canonicalize}.
 */
export class CanonicalText {
  readonly #text: string;
  /** Container nesting of the value (0 for a scalar), to keep the depth limit when embedded. */
  readonly #depth: number;
  readonly #value: unknown;
  constructor(value: unknown) {
    const { text, depth } = encodeRoot(value);
    this.#text = text;
    this.#depth = depth;
    this.#value = value;
  }
  /** The canonical text. */
  get text(): string {
    return this.#text;
  }
  /**
   * The text to write at `depth` (the depth its root would have), or the value encoded there
   * when that is too deep; undefined when `fragment` is not a CanonicalText.
   */
  static embed(
    fragment: object,
    path: Path,
    depth: number,
    ancestors: object[],
  ): string | undefined {
    if (!(#text in fragment)) return undefined;
    const nesting = depth - 1 + fragment.#depth;
    if (nesting > CANONICAL_JSON_MAX_DEPTH) {
      // Encoded whole, the value fails exactly where it would have failed without the shortcut.
      return encodeValue(fragment.#value, path?.parent, path?.key, depth - 1, ancestors);
    }
    if (nesting > deepest) deepest = nesting;
    return fragment.#text;
  }
}

/** Encodes a value once, for embedding in larger payloads; same rules and errors as `canonicalize`. */
export const encodeCanonical = (value: unknown): CanonicalText => new CanonicalText(value);

/** The deepest container nesting the running (synchronous) encode has reached. */
let deepest = 0;

/** Encodes a root value and reports its container nesting. */
function encodeRoot(value: unknown): { readonly text: string; readonly depth: number } {
  const outer = deepest;
  deepest = 0;
  try {
    const text = encodeValue(value, undefined, undefined, 0, []);
    return { text, depth: deepest };
  } finally {
    deepest = outer;
  }
}

// With the `u` flag a well-formed surrogate pair is one code point outside this range, so only
// lone (unpaired) surrogates match.
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

/** Where a member sits: its container's path and its key (undefined for the root). */
type Key = string | number | undefined;

/**
 * The path of the member `key` of the container at `at`. Built only where it is needed (a
 * container's children, an error), never for every scalar.
 */
const pathOf = (at: Path, key: Key): Path => (key === undefined ? at : { parent: at, key });

/** Encodes the member `key` of the container at `at` (`key` undefined: the root itself). */
function encodeValue(
  value: unknown,
  at: Path,
  key: Key,
  depth: number,
  ancestors: object[],
): string {
  switch (typeof value) {
    case 'string':
      return PLAIN_ASCII.test(value) ? `"${value}"` : encodeString(value, at, key);
    case 'number':
      // String(-0) is "0", which is exactly the canonical form of negative zero.
      return Number.isSafeInteger(value) ? String(value) : rejectNumber(value, pathOf(at, key));
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object':
      if (value === null) return 'null';
      return encodeContainer(value, pathOf(at, key), depth + 1, ancestors);
    case 'bigint':
      throw invalid(
        pathOf(at, key),
        'unsupported_type',
        'a bigint is not supported (send it as a decimal string or a safe integer)',
      );
    default:
      throw invalid(
        pathOf(at, key),
        'unsupported_type',
        `a value of type ${typeof value} is not JSON`,
      );
  }
}

function encodeContainer(value: object, path: Path, depth: number, ancestors: object[]): string {
  const prototype: unknown = Object.getPrototypeOf(value);
  // Text encoded before: written as it is, or as its value where that would be too deep.
  if (prototype === CanonicalText.prototype) {
    const text = CanonicalText.embed(value, path, depth, ancestors);
    if (text !== undefined) return text;
  }
  if (ancestors.includes(value)) {
    throw invalid(path, 'cycle', 'the value contains itself (a cycle)');
  }
  if (depth > deepest) deepest = depth;
  if (depth > CANONICAL_JSON_MAX_DEPTH) {
    throw invalid(
      path,
      'too_deep',
      `nesting is deeper than ${CANONICAL_JSON_MAX_DEPTH} arrays and objects`,
    );
  }
  if (Array.isArray(value) && prototype === Array.prototype) {
    ancestors.push(value);
    const text = encodeArray(value, path, depth, ancestors);
    ancestors.pop();
    return text;
  }
  if (prototype === Object.prototype || prototype === null) {
    ancestors.push(value);
    const text = encodeObject(value as Record<string, unknown>, path, depth, ancestors);
    ancestors.pop();
    return text;
  }
  throw invalid(
    path,
    'unsupported_type',
    `a ${describeObject(value)} is not a plain object or array`,
  );
}

function encodeArray(
  value: readonly unknown[],
  path: Path,
  depth: number,
  ancestors: object[],
): string {
  let text = '[';
  for (let index = 0; index < value.length; index += 1) {
    const item = value[index];
    if (item === undefined) {
      throw invalid(
        { parent: path, key: index },
        'undefined_in_array',
        'undefined (or a hole) inside an array has no JSON form',
      );
    }
    const encoded = encodeValue(item, path, index, depth, ancestors);
    text += index === 0 ? encoded : `,${encoded}`;
  }
  return `${text}]`;
}

function encodeObject(
  value: Record<string, unknown>,
  path: Path,
  depth: number,
  ancestors: object[],
): string {
  const symbols = Object.getOwnPropertySymbols(value);
  if (symbols.length > 0 && symbols.some((symbol) => isEnumerable(value, symbol))) {
    throw invalid(path, 'unsupported_type', 'an object with symbol keys has no JSON form');
  }
  const keys: string[] = [];
  const items: unknown[] = [];
  // Whether the keys read so far arrived in ascending order (then no sort is needed).
  let ascending = true;
  // Created at the first key that is not plain ASCII: until then keys are distinct as they are
  // (NFC leaves plain ASCII alone), so the common case needs no set and no normalisation.
  let seen: Set<string> | undefined;
  for (const rawKey of Object.keys(value)) {
    // Read each property once: a getter must not be able to answer differently twice.
    const item = value[rawKey];
    if (item === undefined) continue;
    if (seen === undefined && PLAIN_ASCII.test(rawKey)) {
      if (ascending && keys.length > 0 && !(keys[keys.length - 1]! < rawKey)) ascending = false;
      keys.push(rawKey);
      items.push(item);
      continue;
    }
    seen ??= new Set(keys);
    if (LONE_SURROGATE.test(rawKey)) {
      throw invalid(
        { parent: path, key: rawKey },
        'lone_surrogate',
        'the key contains a lone surrogate (not well-formed Unicode)',
      );
    }
    const key = rawKey.normalize('NFC');
    if (seen.has(key)) {
      throw invalid(
        { parent: path, key },
        'key_collision',
        'two keys of this object are equal after NFC normalisation',
      );
    }
    seen.add(key);
    keys.push(key);
    items.push(item);
  }
  if (seen === undefined && ascending) {
    // Plain ASCII keys in order: written as they come.
    let text = '{';
    for (let index = 0; index < keys.length; index += 1) {
      const key = keys[index]!;
      const encoded = encodeValue(items[index], path, key, depth, ancestors);
      text += index === 0 ? `"${key}":${encoded}` : `,"${key}":${encoded}`;
    }
    return `${text}}`;
  }
  const order = seen === undefined ? plainKeyOrder(keys) : codePointOrder(keys);
  let text = '{';
  for (let position = 0; position < order.length; position += 1) {
    const index = order[position]!;
    const key = keys[index]!;
    const name = seen === undefined ? `"${key}"` : JSON.stringify(key);
    const encoded = encodeValue(items[index], path, key, depth, ancestors);
    text += position === 0 ? `${name}:${encoded}` : `,${name}:${encoded}`;
  }
  return `${text}}`;
}

/**
 * The positions of `keys` (distinct plain ASCII, which sort the same by UTF-16 unit and by code
 * point) in sorted order. Objects of a few keys (the guard's event data and payloads) are sorted
 * by insertion in place: `Array.prototype.sort`'s scratch arrays were about a twentieth of the
 * bytes an action allocated. Nothing is remembered across calls (keys may be private).
 */
function plainKeyOrder(keys: readonly string[]): number[] {
  const order = keys.map((_, index) => index);
  if (keys.length > INSERTION_SORT_MAX_KEYS) {
    order.sort((left, right) => (keys[left]! < keys[right]! ? -1 : 1));
    return order;
  }
  for (let next = 1; next < order.length; next += 1) {
    const index = order[next]!;
    const key = keys[index]!;
    let at = next;
    while (at > 0 && key < keys[order[at - 1]!]!) {
      order[at] = order[at - 1]!;
      at -= 1;
    }
    order[at] = index;
  }
  return order;
}

/** Above this many keys, an object's keys are sorted with `Array.prototype.sort`. */
const INSERTION_SORT_MAX_KEYS = 16;

/** The positions of `keys` (distinct, well-formed, NFC) in code point order. */
function codePointOrder(keys: readonly string[]): number[] {
  const order = keys.map((_, index) => index);
  order.sort((left, right) => compareByCodePoint(keys[left]!, keys[right]!));
  return order;
}

function encodeString(value: string, at: Path, key: Key): string {
  if (LONE_SURROGATE.test(value)) {
    throw invalid(
      pathOf(at, key),
      'lone_surrogate',
      'the string contains a lone surrogate (not well-formed Unicode)',
    );
  }
  return JSON.stringify(value.normalize('NFC'));
}

/** Throws the error of a number that is not a safe integer (the checks in this order). */
function rejectNumber(value: number, path: Path): never {
  if (!Number.isFinite(value)) {
    throw invalid(path, 'non_finite', `${String(value)} is not a finite number`);
  }
  if (!Number.isInteger(value)) {
    throw invalid(
      path,
      'float',
      `${String(value)} is not a safe integer (send money as a decimal string or integer minor units)`,
    );
  }
  throw invalid(
    path,
    'unsafe_integer',
    `${String(value)} is not a safe integer (beyond ±(2^53 - 1); send it as a decimal string)`,
  );
}

/**
 * Order two well-formed strings by Unicode code point. UTF-16 code-unit order agrees with
 * code-point order except that surrogates (U+D800..U+DFFF, which encode U+10000 and above) must
 * sort after U+E000..U+FFFF; shifting the code units at the first difference fixes that (the
 * classic ICU trick).
 */
function compareByCodePoint(left: string, right: string): number {
  const length = Math.min(left.length, right.length);
  for (let index = 0; index < length; index += 1) {
    const a = left.charCodeAt(index);
    const b = right.charCodeAt(index);
    if (a !== b) return codePointRank(a) - codePointRank(b);
  }
  return left.length - right.length;
}

function codePointRank(codeUnit: number): number {
  if (codeUnit >= 0xe000) return codeUnit - 0x800;
  if (codeUnit >= 0xd800) return codeUnit + 0x2000;
  return codeUnit;
}

function isEnumerable(value: object, key: PropertyKey): boolean {
  return Object.prototype.propertyIsEnumerable.call(value, key);
}
