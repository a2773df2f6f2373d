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
  for (let index = 0; index < keys.length; index += 1) {
    const key = keys[index]!;
    if (!PLAIN_ASCII.test(key) || (index > 0 && !(keys[index - 1]! < key))) {
      return canonicalize(Object.fromEntries(keys.map((name, at) => [name, values[at]])));
    }
  }
  const outer = deepest;
  deepest = 1;
  try {
    const parts = ['{'];
    for (let index = 0; index < keys.length; index += 1) {
      const key = keys[index]!;
      const item = values[index];
      if (item === undefined) continue;
      parts.push(parts.length === 1 ? `"${key}":` : `,"${key}":`);
      encodeValue(item, { parent: undefined, key }, 1, [], parts);
    }
    parts.push('}');
    return parts.join('');
  } finally {
    deepest = outer;
  }
}

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
  /** Writes the text at `depth` (the depth its root would have), or the value when too deep. */
  static embed(
    fragment: object,
    path: Path,
    depth: number,
    ancestors: object[],
    parts: string[],
  ): boolean {
    if (!(#text in fragment)) return false;
    const nesting = depth - 1 + fragment.#depth;
    if (nesting > CANONICAL_JSON_MAX_DEPTH) {
      // Encoded whole, the value fails exactly where it would have failed without the shortcut.
      encodeValue(fragment.#value, path, depth - 1, ancestors, parts);
      return true;
    }
    if (nesting > deepest) deepest = nesting;
    parts.push(fragment.#text);
    return true;
  }
}

/** Encodes `value` once, for embedding in larger payloads; same rules and errors as `canonicalize`. */
export const encodeCanonical = (value: unknown): CanonicalText => new CanonicalText(value);

/** The deepest container nesting the running (synchronous) encode has reached. */
let deepest = 0;

/** Encodes a root value and reports its container nesting. */
function encodeRoot(value: unknown): { readonly text: string; readonly depth: number } {
  const outer = deepest;
  deepest = 0;
  try {
    const parts: string[] = [];
    encodeValue(value, undefined, 0, [], parts);
    return { text: parts.join(''), depth: deepest };
  } finally {
    deepest = outer;
  }
}

// With the `u` flag a well-formed surrogate pair is one code point outside this range, so only
// lone (unpaired) surrogates match.
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

function encodeValue(
  value: unknown,
  path: Path,
  depth: number,
  ancestors: object[],
  parts: string[],
): void {
  switch (typeof value) {
    case 'string':
      parts.push(encodeString(value, path));
      return;
    case 'number':
      parts.push(encodeNumber(value, path));
      return;
    case 'boolean':
      parts.push(value ? 'true' : 'false');
      return;
    case 'object':
      if (value === null) {
        parts.push('null');
        return;
      }
      encodeContainer(value, path, depth + 1, ancestors, parts);
      return;
    case 'bigint':
      throw invalid(
        path,
        'unsupported_type',
        'a bigint is not supported (send it as a decimal string or a safe integer)',
      );
    default:
      throw invalid(path, 'unsupported_type', `a value of type ${typeof value} is not JSON`);
  }
}

function encodeContainer(
  value: object,
  path: Path,
  depth: number,
  ancestors: object[],
  parts: string[],
): void {
  const prototype: unknown = Object.getPrototypeOf(value);
  // Text encoded before: written as it is, or as its value where that would be too deep.
  if (
    prototype === CanonicalText.prototype &&
    CanonicalText.embed(value, path, depth, ancestors, parts)
  ) {
    return;
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
    encodeArray(value, path, depth, ancestors, parts);
    ancestors.pop();
    return;
  }
  if (prototype === Object.prototype || prototype === null) {
    ancestors.push(value);
    encodeObject(value as Record<string, unknown>, path, depth, ancestors, parts);
    ancestors.pop();
    return;
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
  parts: string[],
): void {
  parts.push('[');
  for (let index = 0; index < value.length; index += 1) {
    const itemPath: Path = { parent: path, key: index };
    const item = value[index];
    if (item === undefined) {
      throw invalid(
        itemPath,
        'undefined_in_array',
        'undefined (or a hole) inside an array has no JSON form',
      );
    }
    if (index > 0) parts.push(',');
    encodeValue(item, itemPath, depth, ancestors, parts);
  }
  parts.push(']');
}

function encodeObject(
  value: Record<string, unknown>,
  path: Path,
  depth: number,
  ancestors: object[],
  parts: string[],
): void {
  if (Object.getOwnPropertySymbols(value).some((symbol) => isEnumerable(value, symbol))) {
    throw invalid(path, 'unsupported_type', 'an object with symbol keys has no JSON form');
  }
  const entries: { key: string; item: unknown }[] = [];
  // Created at the first key that is not plain ASCII: until then keys are distinct as they are
  // (NFC leaves plain ASCII alone), so the common case needs no set and no normalisation.
  let seen: Set<string> | undefined;
  for (const rawKey of Object.keys(value)) {
    // Read each property once: a getter must not be able to answer differently twice.
    const item = value[rawKey];
    if (item === undefined) continue;
    if (seen === undefined && PLAIN_ASCII.test(rawKey)) {
      entries.push({ key: rawKey, item });
      continue;
    }
    seen ??= new Set(entries.map((entry) => entry.key));
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
    entries.push({ key, item });
  }
  // Plain ASCII keys sort the same by UTF-16 unit and by code point.
  entries.sort(seen === undefined ? compareAsciiKeys : compareEntriesByCodePoint);
  parts.push('{');
  let first = true;
  for (const { key, item } of entries) {
    if (!first) parts.push(',');
    first = false;
    parts.push(seen === undefined ? `"${key}":` : `${JSON.stringify(key)}:`);
    encodeValue(item, { parent: path, key }, depth, ancestors, parts);
  }
  parts.push('}');
}

type Entry = { readonly key: string };
const compareAsciiKeys = (left: Entry, right: Entry): number => (left.key < right.key ? -1 : 1);
const compareEntriesByCodePoint = (left: Entry, right: Entry): number =>
  compareByCodePoint(left.key, right.key);

function encodeString(value: string, path: Path): string {
  if (PLAIN_ASCII.test(value)) return `"${value}"`;
  if (LONE_SURROGATE.test(value)) {
    throw invalid(
      path,
      'lone_surrogate',
      'the string contains a lone surrogate (not well-formed Unicode)',
    );
  }
  return JSON.stringify(value.normalize('NFC'));
}

function encodeNumber(value: number, path: Path): string {
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
  if (!Number.isSafeInteger(value)) {
    throw invalid(
      path,
      'unsafe_integer',
      `${String(value)} is not a safe integer (beyond ±(2^53 - 1); send it as a decimal string)`,
    );
  }
  // String(-0) is "0", which is exactly the canonical form of negative zero.
  return String(value);
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
