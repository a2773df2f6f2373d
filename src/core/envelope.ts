/**
 * Sealed envelopes: private snapshots are encrypted here, before any store sees them (I8), with a
 * fresh data key per envelope wrapped under the key ring so keys rotate without re-encrypting.
 */

import { Buffer } from 'node:buffer';
import { createCipheriv, createDecipheriv } from 'node:crypto';
import { canonicalBytes, canonicalize, type JsonValue } from './canonical-json.js';
import {
  assert,
  ConfigurationError,
  ContractViolationError,
  StoreInvariantError,
} from './errors.js';
import type { KeyReference, KeyRing } from './key-ring.js';

/**
 * An encrypted Canonical JSON v1 value; every binary field is unpadded base64url.
 *
 * - `iv` (12 bytes), `ciphertext` and `tag` (16 bytes): AES-256-GCM of the canonical bytes under
 *   a random 32-byte data key, with associated data `"sideguard/envelope/v1/content"` followed by
 *   the caller's associated data as UTF-8 behind a 4-byte big-endian length.
 * - `wrappedKey` (60 bytes): wrap IV (12) ‖ encrypted data key (32) ‖ GCM tag (16), AES-256-GCM
 *   under the `encryption` subkey of `kek`, with associated data `"sideguard/envelope/v1/key"`
 *   followed by the caller's associated data, the KEK handle and the KEK version (decimal), each
 *   as UTF-8 behind a 4-byte big-endian length.
 */
export interface SealedEnvelope {
  readonly v: 1;
  readonly alg: 'A256GCM';
  readonly kek: KeyReference;
  readonly wrappedKey: string;
  readonly iv: string;
  readonly ciphertext: string;
  readonly tag: string;
}

const DATA_KEY_LENGTH_BYTES = 32;
const IV_LENGTH_BYTES = 12;
const TAG_LENGTH_BYTES = 16;
const WRAPPED_KEY_LENGTH_BYTES = IV_LENGTH_BYTES + DATA_KEY_LENGTH_BYTES + TAG_LENGTH_BYTES;
const CONTENT_TAG = 'sideguard/envelope/v1/content';
const KEY_WRAP_TAG = 'sideguard/envelope/v1/key';

/**
 * Encrypt `plaintext` (encoded as Canonical JSON v1) into an envelope bound to `associatedData`
 * (for example tenant and proposal id): opening it with any other associated data fails. The
 * data key is wrapped under `keyRing.current`. Consumes 56 bytes of `randomBytes` (data key,
 * content IV, wrap IV), which must return exactly the number of bytes asked for.
 *
 * @throws ContractViolationError `canonical_json_invalid` when Canonical JSON v1 rejects the
 *   plaintext, `envelope_associated_data_invalid` when `associatedData` is not a well-formed
 *   string; ConfigurationError `envelope_key_unknown` when the ring lacks its current key.
 */
export function sealEnvelope(
  keyRing: KeyRing,
  plaintext: unknown,
  associatedData: string,
  randomBytes: (size: number) => Uint8Array,
): SealedEnvelope {
  const associated = associatedDataBytes(associatedData);
  const content = canonicalBytes(plaintext);
  const dataKey = takeRandom(randomBytes, DATA_KEY_LENGTH_BYTES);
  try {
    const iv = takeRandom(randomBytes, IV_LENGTH_BYTES);
    const cipher = createCipheriv('aes-256-gcm', dataKey, iv, { authTagLength: TAG_LENGTH_BYTES });
    cipher.setAAD(frame(CONTENT_TAG, [associated]));
    const ciphertext = Buffer.concat([cipher.update(content), cipher.final()]);
    const tag = cipher.getAuthTag();
    const kek = keyRing.current;
    return {
      v: 1,
      alg: 'A256GCM',
      kek: { handle: kek.handle, version: kek.version },
      wrappedKey: encode(wrapDataKey(keyRing, kek, dataKey, associated, randomBytes)),
      iv: encode(iv),
      ciphertext: encode(ciphertext),
      tag: encode(tag),
    };
  } finally {
    dataKey.fill(0);
  }
}

/**
 * Decrypt an envelope sealed with the same `associatedData`. Works for any KEK the ring still
 * holds, so envelopes sealed before a rotation stay readable.
 *
 * @throws StoreInvariantError `envelope_malformed` when `envelope` is not a v1 A256GCM envelope
 *   with well-sized base64url fields; `envelope_integrity_failed` when the wrapped key, IV,
 *   ciphertext or tag was altered or the associated data differs (the message names no secret).
 *   ConfigurationError `envelope_key_unknown` naming `handle:version` when the ring lacks the KEK.
 *   ContractViolationError `envelope_associated_data_invalid` for a non-string or ill-formed
 *   `associatedData`.
 */
export function openEnvelope(
  keyRing: KeyRing,
  envelope: SealedEnvelope,
  associatedData: string,
): JsonValue {
  const associated = associatedDataBytes(associatedData);
  const parsed = parseEnvelope(envelope);
  const dataKey = unwrapDataKey(keyRing, parsed, associated);
  let content: Buffer;
  try {
    content = decryptContent(dataKey, parsed, associated);
  } finally {
    dataKey.fill(0);
  }
  let text: string;
  let value: JsonValue;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(content);
    value = JSON.parse(text) as JsonValue;
  } catch {
    // No `cause`: a JSON.parse error quotes the (private) plaintext.
    throw malformed('the authenticated plaintext is not UTF-8 JSON');
  } finally {
    content.fill(0);
  }
  // Authenticated bytes that are not canonical mean a broken writer, not an attacker: crash.
  assert(canonicalize(value) === text, 'an envelope plaintext is not Canonical JSON v1');
  return value;
}

/**
 * Re-wrap the data key of `envelope` under `keyRing.current` with a fresh wrap IV (key
 * rotation); `iv`, `ciphertext` and `tag` are returned unchanged. Always re-wraps, even when the
 * envelope already uses the current KEK. Verifies the content's integrity first, so a damaged
 * envelope is reported now rather than at the next read. Consumes 12 bytes of `randomBytes`.
 *
 * @throws the same errors as {@link openEnvelope}.
 */
export function rewrapEnvelope(
  keyRing: KeyRing,
  envelope: SealedEnvelope,
  associatedData: string,
  randomBytes: (size: number) => Uint8Array,
): SealedEnvelope {
  const associated = associatedDataBytes(associatedData);
  const parsed = parseEnvelope(envelope);
  const dataKey = unwrapDataKey(keyRing, parsed, associated);
  try {
    decryptContent(dataKey, parsed, associated).fill(0);
    const kek = keyRing.current;
    return {
      v: 1,
      alg: 'A256GCM',
      kek: { handle: kek.handle, version: kek.version },
      wrappedKey: encode(wrapDataKey(keyRing, kek, dataKey, associated, randomBytes)),
      iv: envelope.iv,
      ciphertext: envelope.ciphertext,
      tag: envelope.tag,
    };
  } finally {
    dataKey.fill(0);
  }
}

interface ParsedEnvelope {
  readonly kek: KeyReference;
  readonly wrappedKey: Buffer;
  readonly iv: Buffer;
  readonly ciphertext: Buffer;
  readonly tag: Buffer;
}

function parseEnvelope(envelope: unknown): ParsedEnvelope {
  if (typeof envelope !== 'object' || envelope === null) {
    throw malformed('it is not an object');
  }
  const candidate = envelope as Record<string, unknown>;
  if (candidate.v !== 1 || candidate.alg !== 'A256GCM') {
    throw malformed('only version 1 with algorithm A256GCM is supported');
  }
  const kek = candidate.kek as Record<string, unknown> | null | undefined;
  if (
    typeof kek !== 'object' ||
    kek === null ||
    typeof kek.handle !== 'string' ||
    typeof kek.version !== 'number' ||
    !Number.isSafeInteger(kek.version)
  ) {
    throw malformed('its key reference is not { handle, version }');
  }
  return {
    kek: { handle: kek.handle, version: kek.version },
    wrappedKey: decodeField(candidate.wrappedKey, 'wrappedKey', WRAPPED_KEY_LENGTH_BYTES),
    iv: decodeField(candidate.iv, 'iv', IV_LENGTH_BYTES),
    ciphertext: decodeField(candidate.ciphertext, 'ciphertext', undefined),
    tag: decodeField(candidate.tag, 'tag', TAG_LENGTH_BYTES),
  };
}

function decodeField(value: unknown, name: string, lengthBytes: number | undefined): Buffer {
  if (typeof value !== 'string' || !/^[A-Za-z0-9_-]+$/.test(value)) {
    throw malformed(`${name} is not unpadded base64url`);
  }
  const bytes = Buffer.from(value, 'base64url');
  if (bytes.toString('base64url') !== value) {
    throw malformed(`${name} is not canonical base64url`);
  }
  if (lengthBytes !== undefined && bytes.length !== lengthBytes) {
    throw malformed(`${name} is ${bytes.length} bytes, expected ${lengthBytes}`);
  }
  return bytes;
}

function wrapDataKey(
  keyRing: KeyRing,
  kek: KeyReference,
  dataKey: Uint8Array,
  associated: Buffer,
  randomBytes: (size: number) => Uint8Array,
): Buffer {
  const wrappingKey = encryptionKey(keyRing, kek);
  try {
    const iv = takeRandom(randomBytes, IV_LENGTH_BYTES);
    const cipher = createCipheriv('aes-256-gcm', wrappingKey, iv, {
      authTagLength: TAG_LENGTH_BYTES,
    });
    cipher.setAAD(keyWrapAssociatedData(kek, associated));
    const wrapped = Buffer.concat([
      iv,
      cipher.update(dataKey),
      cipher.final(),
      cipher.getAuthTag(),
    ]);
    assert(wrapped.length === WRAPPED_KEY_LENGTH_BYTES, 'a wrapped data key has the wrong size');
    return wrapped;
  } finally {
    wrappingKey.fill(0);
  }
}

function unwrapDataKey(keyRing: KeyRing, parsed: ParsedEnvelope, associated: Buffer): Buffer {
  const wrappingKey = encryptionKey(keyRing, parsed.kek);
  try {
    const iv = parsed.wrappedKey.subarray(0, IV_LENGTH_BYTES);
    const encrypted = parsed.wrappedKey.subarray(IV_LENGTH_BYTES, -TAG_LENGTH_BYTES);
    const tag = parsed.wrappedKey.subarray(-TAG_LENGTH_BYTES);
    const decipher = createDecipheriv('aes-256-gcm', wrappingKey, iv, {
      authTagLength: TAG_LENGTH_BYTES,
    });
    decipher.setAAD(keyWrapAssociatedData(parsed.kek, associated));
    decipher.setAuthTag(tag);
    return Buffer.concat([decipher.update(encrypted), decipher.final()]);
  } catch (cause) {
    throw integrityFailed('its wrapped data key', cause);
  } finally {
    wrappingKey.fill(0);
  }
}

function decryptContent(dataKey: Buffer, parsed: ParsedEnvelope, associated: Buffer): Buffer {
  try {
    const decipher = createDecipheriv('aes-256-gcm', dataKey, parsed.iv, {
      authTagLength: TAG_LENGTH_BYTES,
    });
    decipher.setAAD(frame(CONTENT_TAG, [associated]));
    decipher.setAuthTag(parsed.tag);
    return Buffer.concat([decipher.update(parsed.ciphertext), decipher.final()]);
  } catch (cause) {
    throw integrityFailed('its content', cause);
  }
}

function encryptionKey(keyRing: KeyRing, kek: KeyReference): Uint8Array {
  const key = keyRing.deriveKey(kek, 'encryption');
  if (key === undefined) {
    const id = `${kek.handle}:${kek.version}`;
    throw new ConfigurationError(
      'envelope_key_unknown',
      `Cannot use the envelope: the key ring does not hold its key ${id}`,
      { data: { key: id } },
    );
  }
  return key;
}

function keyWrapAssociatedData(kek: KeyReference, associated: Buffer): Buffer {
  return frame(KEY_WRAP_TAG, [
    associated,
    Buffer.from(kek.handle, 'utf8'),
    Buffer.from(String(kek.version), 'ascii'),
  ]);
}

function frame(tag: string, parts: readonly Buffer[]): Buffer {
  const chunks: Buffer[] = [Buffer.from(tag, 'ascii')];
  for (const part of parts) {
    const length = Buffer.alloc(4);
    length.writeUInt32BE(part.length);
    chunks.push(length, part);
  }
  return Buffer.concat(chunks);
}

function associatedDataBytes(associatedData: unknown): Buffer {
  if (typeof associatedData !== 'string' || /[\uD800-\uDFFF]/u.test(associatedData)) {
    throw new ContractViolationError(
      'envelope_associated_data_invalid',
      'Cannot use the envelope: the associated data must be a well-formed string',
    );
  }
  return Buffer.from(associatedData, 'utf8');
}

function takeRandom(randomBytes: (size: number) => Uint8Array, size: number): Buffer {
  const bytes = randomBytes(size);
  assert(
    bytes instanceof Uint8Array && bytes.length === size,
    `randomBytes(${size}) must return exactly ${size} bytes`,
  );
  // A copy we own and may wipe, whatever the caller does with its buffer.
  return Buffer.from(bytes);
}

function encode(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString('base64url');
}

function malformed(detail: string): StoreInvariantError {
  return new StoreInvariantError('envelope_malformed', `Cannot open the envelope: ${detail}`);
}

function integrityFailed(part: string, cause: unknown): StoreInvariantError {
  return new StoreInvariantError(
    'envelope_integrity_failed',
    `Cannot open the envelope: ${part} failed its integrity check (tampered, damaged, or sealed with other associated data)`,
    { cause },
  );
}
