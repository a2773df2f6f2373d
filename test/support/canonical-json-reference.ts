/**
 * The Canonical JSON v1 encoder as it was before its rewrite for speed (commit 2857911), kept
 * only as the reference of the differential test (`src/core/canonical-json-differential.test.ts`):
 * the encoder in `src/core/canonical-json.ts` must give the same bytes and the same errors for
 * every value. Without `CanonicalText` embedding (tested on its own). Never used by the package.
 */

import { CANONICAL_JSON_MAX_DEPTH } from '../../src/core/canonical-json.js';
import { describeObject, invalid, type Path } from '../../src/core/canonical-json-errors.js';
import { PLAIN_ASCII } from '../../src/core/json-text.js';

/** The reference encoding of `value` (throws as the reference encoder threw). */
export function referenceCanonicalize(value: unknown): string {
  deepest = 0;
  const parts: string[] = [];
  encodeValue(value, undefined, 0, [], parts);
  return parts.join('');
}

/** The deepest container nesting the running encode has reached. */
let deepest = 0;

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
