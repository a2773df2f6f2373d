/**
 * Record MACs: the guard authenticates every proposal record it writes with a keyed MAC, so a
 * record changed outside Sideguard (its status, policy decision, counted evidence, lease, …) is
 * refused instead of acted on (decision 045). Pure: the key ring is passed in.
 */
import { keyedMac, keyedMacMatches, sha256Hex } from './commitment.js';
import { quoteJson } from './json-text.js';
import { KeyPurpose, type KeyReference, type KeyRing } from './key-ring.js';
import { copyRecord } from './record-copy.js';
import type { AuthorityEvidenceRecord, ProposalRecord } from './store.js';

/** An HMAC-SHA-256 over a stored record and the key that made it; `value` is unpadded base64url. */
export interface RecordMac {
  readonly algorithm: 'hmac-sha256';
  readonly keyHandle: string;
  readonly keyVersion: number;
  readonly value: string;
}

/** The domain every record MAC is computed under. */
export const RECORD_MAC_DOMAIN = 'sideguard/proposal-record/v1';

/**
 * The record fields the MAC leaves out: the MAC itself, and the two encrypted envelopes, which
 * authenticate themselves (AES-256-GCM bound to tenant and proposal; the snapshot also to the
 * commitment, which the MAC covers). Every other field is covered, including fields added later.
 */
export const RECORD_MAC_EXCLUDED_FIELDS: readonly string[] = ['recordMac', 'snapshot', 'output'];

/** How a stored record's MAC checks out. */
export const RecordMacVerdict = {
  valid: 'valid',
  /** No MAC: written by Sideguard 0.1, or removed by someone who can write to the store. */
  missing: 'missing',
  /** A MAC that does not match the record: a covered field was changed outside Sideguard. */
  invalid: 'invalid',
} as const;
/** How a stored record's MAC checks out; see {@link RecordMacVerdict}. */
export type RecordMacVerdict = (typeof RecordMacVerdict)[keyof typeof RecordMacVerdict];

/**
 * The exact bytes a record MAC covers: JSON of the record without the excluded fields, object
 * keys sorted (`Array.prototype.sort`, recursively), properties whose value is `undefined`
 * omitted, strings exactly as stored (no Unicode normalisation: a MAC must see every byte).
 */
export function recordMacBytes(record: ProposalRecord): Uint8Array {
  return utf8.encode(recordMacText(record));
}

/** {@link recordMacBytes} as text, which the MAC takes as UTF-8 without a copy of its own. */
const recordMacText = (record: ProposalRecord): string =>
  objectJson(record as unknown as Record<string, unknown>, EXCLUDED_FIELDS);

const utf8 = new TextEncoder();
const EXCLUDED_FIELDS: ReadonlySet<string> = new Set(RECORD_MAC_EXCLUDED_FIELDS);

/**
 * The record with a fresh MAC made with `key` (default `keyRing.current`); any MAC it carried is
 * replaced. Rotating `current` needs nothing else: each MAC names its key.
 * @throws ConfigurationError `keyed_mac_key_unknown` when the ring does not hold `key`.
 */
export function sealRecord(
  keyRing: KeyRing,
  record: ProposalRecord,
  key: KeyReference = keyRing.current,
): ProposalRecord {
  const value = keyedMac(keyRing, KeyPurpose.record, key, RECORD_MAC_DOMAIN, recordMacText(record));
  return copyRecord(record, {
    recordMac: { algorithm: 'hmac-sha256', keyHandle: key.handle, keyVersion: key.version, value },
  });
}

/**
 * Checks a stored record's MAC with the key the MAC names (so records sealed before a rotation
 * still check out), in constant time.
 * @throws ConfigurationError `keyed_mac_key_unknown` when the ring no longer holds that key: a
 *   missing key is a deployment error, not a tampered record.
 */
export function checkRecordMac(keyRing: KeyRing, record: ProposalRecord): RecordMacVerdict {
  const mac: unknown = record.recordMac;
  if (mac === undefined || mac === null) return 'missing';
  const { algorithm, keyHandle, keyVersion, value } = mac as Partial<RecordMac>;
  if (
    algorithm !== 'hmac-sha256' ||
    typeof keyHandle !== 'string' ||
    typeof keyVersion !== 'number'
  ) {
    return 'invalid';
  }
  let bytes: string;
  try {
    bytes = recordMacText(record);
  } catch {
    return 'invalid';
  }
  const key = { handle: keyHandle, version: keyVersion };
  return keyedMacMatches(keyRing, KeyPurpose.record, key, RECORD_MAC_DOMAIN, bytes, value)
    ? 'valid'
    : 'invalid';
}

/**
 * The digest a record lists in `countedEvidence` for one stored evidence row: SHA-256 (hex) of
 * the row's sorted JSON (every field, so a changed expiry or decision changes it too).
 */
export function evidenceRowDigest(row: AuthorityEvidenceRecord): string {
  return sha256Hex(sortedJson(row));
}

/** JSON with object keys sorted at every depth and `undefined` properties left out. */
function sortedJson(value: unknown): string {
  if (Array.isArray(value)) {
    let text = '[';
    for (let index = 0; index < value.length; index += 1) {
      if (index > 0) text += ',';
      text += sortedJson(value[index] ?? null);
    }
    return `${text}]`;
  }
  if (typeof value === 'object' && value !== null) {
    return objectJson(value as Record<string, unknown>, undefined);
  }
  if (typeof value === 'string') return quoteJson(value);
  const text = JSON.stringify(value);
  if (text === undefined || (typeof value === 'number' && !Number.isFinite(value))) {
    throw new TypeError(`a record holds a value JSON cannot represent (${typeof value})`);
  }
  return text;
}

/** One object of {@link sortedJson}, leaving out the `excluded` keys (no copy of the object). */
function objectJson(object: Record<string, unknown>, excluded: ReadonlySet<string> | undefined) {
  const { sorted, heads } = sortedKeys(Object.keys(object));
  let text = '{';
  for (let index = 0; index < sorted.length; index += 1) {
    const key = sorted[index]!;
    const item = object[key];
    if (item === undefined || excluded?.has(key)) continue;
    text += text.length > 1 ? heads.later[index]! : heads.first[index]!;
    text += sortedJson(item);
  }
  return `${text}}`;
}

/** A key list sorted, with what each member starts with: `"key":` first, `,"key":` after another. */
interface SortedShape {
  readonly sorted: readonly string[];
  readonly heads: { readonly first: readonly string[]; readonly later: readonly string[] };
}

/**
 * Key lists sorted before, by their first key: records and their parts come in a few shapes. A
 * first key holds up to {@link SHAPES_PER_FIRST_KEY} shapes, newest first: a record read back
 * with its MAC and a fresh one without it share `tenant` and would otherwise evict each other.
 */
const sortedByFirstKey = new Map<
  string,
  { readonly keys: readonly string[]; shape: SortedShape }[]
>();
/** Bounds the memo: a host's receipts or evidence could bring any number of shapes. */
const SORTED_KEYS_MEMO_MAX = 256;
const SHAPES_PER_FIRST_KEY = 4;

/**
 * `keys` sorted with `Array.prototype.sort` (UTF-16 units), with their member heads. A list
 * equal, key by key and in the same order, to one sorted before reuses that answer: comparing
 * the lists costs less than sorting again and quoting every key, and the sort's scratch arrays
 * were a tenth of the bytes an action allocated.
 */
function sortedKeys(keys: readonly string[]): SortedShape {
  const first = keys[0];
  const shapes = first === undefined ? undefined : sortedByFirstKey.get(first);
  if (shapes !== undefined) {
    for (const known of shapes) if (sameKeys(known.keys, keys)) return known.shape;
  }
  const sorted = sortedCopy(keys);
  const quoted = sorted.map((key) => `${quoteJson(key)}:`);
  const shape = { sorted, heads: { first: quoted, later: quoted.map((head) => `,${head}`) } };
  if (first === undefined) return shape;
  if (shapes !== undefined) {
    shapes.unshift({ keys, shape });
    if (shapes.length > SHAPES_PER_FIRST_KEY) shapes.pop();
  } else if (sortedByFirstKey.size < SORTED_KEYS_MEMO_MAX) {
    sortedByFirstKey.set(first, [{ keys, shape }]);
  }
  return shape;
}

/**
 * A sorted copy of `keys` (distinct), as `[...keys].sort()` sorts it (UTF-16 units): by
 * insertion for a few keys, which needs none of the built-in sort's scratch arrays.
 */
function sortedCopy(keys: readonly string[]): string[] {
  const sorted = [...keys];
  if (sorted.length > 16) return sorted.sort();
  for (let next = 1; next < sorted.length; next += 1) {
    const key = sorted[next]!;
    let at = next;
    while (at > 0 && key < sorted[at - 1]!) {
      sorted[at] = sorted[at - 1]!;
      at -= 1;
    }
    sorted[at] = key;
  }
  return sorted;
}

function sameKeys(left: readonly string[], right: readonly string[]): boolean {
  if (left.length !== right.length) return false;
  for (let index = 0; index < left.length; index += 1) {
    if (left[index] !== right[index]) return false;
  }
  return true;
}
