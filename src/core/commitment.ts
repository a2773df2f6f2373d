/**
 * Keyed commitments and digests over Canonical JSON v1: a proposal commitment proves later that
 * exactly this payload was proposed, and names its key so keys can rotate (DESIGN.md).
 */

import { Buffer } from 'node:buffer';
import { createHmac, hash, timingSafeEqual } from 'node:crypto';
import { canonicalize } from './canonical-json.js';
import { assert, ConfigurationError, ContractViolationError } from './errors.js';
import type { KeyPurpose, KeyReference, KeyRing } from './key-ring.js';

/** An HMAC-SHA-256 commitment and the key that made it; `value` is unpadded base64url. */
export interface Commitment {
  readonly algorithm: 'hmac-sha256';
  readonly keyHandle: string;
  readonly keyVersion: number;
  readonly value: string;
}

const COMMITMENT_TAG = 'sideguard/commitment/v1';
const KEYED_DIGEST_TAG = 'sideguard/keyed-digest/v1';
const KEYED_MAC_TAG = 'sideguard/keyed-mac/v1';
const HMAC_LENGTH_BYTES = 32;

/**
 * Commit to `payload` under `domain` with the `commitment` subkey of `key` (default
 * `keyRing.current`).
 *
 * The HMAC-SHA-256 message is the ASCII tag `sideguard/commitment/v1` followed, for each part
 * (the domain as UTF-8, then `canonicalBytes(payload)`), by a 4-byte big-endian length and the
 * bytes. The domain is not normalised; it must be a non-empty, well-formed string.
 *
 * @throws ContractViolationError `canonical_json_invalid` for a payload Canonical JSON v1 rejects,
 *   `commitment_domain_invalid` for a bad domain; ConfigurationError `commitment_key_unknown`
 *   when the ring does not hold `key`.
 */
export function computeCommitment(
  keyRing: KeyRing,
  domain: string,
  payload: unknown,
  key?: KeyReference,
): Commitment {
  const reference = key ?? keyRing.current;
  const value = mac(
    keyRing,
    'commitment',
    reference,
    framedMessage(COMMITMENT_TAG, domain, payload),
    'commitment_key_unknown',
  );
  return {
    algorithm: 'hmac-sha256',
    keyHandle: reference.handle,
    keyVersion: reference.version,
    value: Buffer.from(value).toString('base64url'),
  };
}

/**
 * Whether `commitment` commits to `payload` under `domain`. Recomputes with the commitment's own
 * key (so commitments made before a rotation still verify) and compares in constant time. A
 * commitment with another algorithm or a value that is not 32 bytes of unpadded base64url does
 * not verify (`false`).
 *
 * @throws ConfigurationError `commitment_key_unknown` naming `handle:version` when the ring does
 *   not hold the commitment's key: a missing key is a deployment error, not a mismatch.
 *   ContractViolationError as {@link computeCommitment} for a bad payload or domain.
 */
export function verifyCommitment(
  keyRing: KeyRing,
  domain: string,
  payload: unknown,
  commitment: Commitment,
): boolean {
  const reference = { handle: commitment.keyHandle, version: commitment.keyVersion };
  const expected = mac(
    keyRing,
    'commitment',
    reference,
    framedMessage(COMMITMENT_TAG, domain, payload),
    'commitment_key_unknown',
  );
  if (commitment.algorithm !== 'hmac-sha256') return false;
  const actual = decodeDigest(commitment.value);
  if (actual === undefined) return false;
  return timingSafeEqual(expected, actual);
}

/**
 * A keyed digest (unpadded base64url HMAC-SHA-256, 43 characters) of `payload` under `domain`
 * with the `purpose` subkey of `key`; framed like {@link computeCommitment} but with the tag
 * `sideguard/keyed-digest/v1`, so a digest never equals a commitment. The runtime derives
 * semantic effect keys with `keyRing.effectKey` and purpose `effect`.
 *
 * @throws ConfigurationError `keyed_digest_key_unknown` when the ring does not hold `key`;
 *   ContractViolationError as {@link computeCommitment}.
 */
export function keyedDigest(
  keyRing: KeyRing,
  purpose: KeyPurpose,
  key: KeyReference,
  domain: string,
  payload: unknown,
): string {
  const value = mac(
    keyRing,
    purpose,
    key,
    framedMessage(KEYED_DIGEST_TAG, domain, payload),
    'keyed_digest_key_unknown',
  );
  return Buffer.from(value).toString('base64url');
}

/**
 * A keyed MAC (unpadded base64url HMAC-SHA-256, 43 characters) of exact `bytes` under `domain`
 * with the `purpose` subkey of `key`. Framed like {@link keyedDigest} (a 4-byte big-endian
 * length before the domain and before the bytes) but with the tag `sideguard/keyed-mac/v1` and
 * no Canonical JSON step, so nothing is normalised: two byte strings that differ get different
 * MACs. Text is taken as its UTF-8 bytes (as `TextEncoder` writes them), without a copy of its
 * own. Record MACs use it (decision 045).
 *
 * @throws ConfigurationError `keyed_mac_key_unknown` when the ring does not hold `key`;
 *   ContractViolationError `commitment_domain_invalid` for a bad domain.
 */
export function keyedMac(
  keyRing: KeyRing,
  purpose: KeyPurpose,
  key: KeyReference,
  domain: string,
  bytes: Uint8Array | string,
): string {
  checkDomain(domain);
  const message = frame(KEYED_MAC_TAG, domain, bytes);
  return mac(keyRing, purpose, key, message, 'keyed_mac_key_unknown').toString('base64url');
}

/**
 * Whether `value` is the {@link keyedMac} of `bytes`, compared in constant time. A value that is
 * not 32 bytes of unpadded base64url does not match (`false`).
 * @throws as {@link keyedMac}: a missing key is a deployment error, not a mismatch.
 */
export function keyedMacMatches(
  keyRing: KeyRing,
  purpose: KeyPurpose,
  key: KeyReference,
  domain: string,
  bytes: Uint8Array | string,
  value: unknown,
): boolean {
  checkDomain(domain);
  const expected = mac(
    keyRing,
    purpose,
    key,
    frame(KEYED_MAC_TAG, domain, bytes),
    'keyed_mac_key_unknown',
  );
  const actual = decodeDigest(value);
  return actual !== undefined && timingSafeEqual(expected, actual);
}

/** Lower-case hex SHA-256 of `bytes`; a string is hashed as its UTF-8 bytes (not normalised). */
export function sha256Hex(bytes: Uint8Array | string): string {
  // The one-shot form (Node ≥ 20.12): no Hash object per call; strings are hashed as UTF-8.
  return hash('sha256', bytes, 'hex');
}

function mac(
  keyRing: KeyRing,
  purpose: KeyPurpose,
  reference: KeyReference,
  message: Buffer,
  unknownKeyCode: string,
): Buffer {
  const subkey = keyRing.deriveKey(reference, purpose);
  if (subkey === undefined) {
    const id = `${reference.handle}:${reference.version}`;
    const what = purpose === 'commitment' ? 'a commitment' : 'a keyed digest';
    throw new ConfigurationError(
      unknownKeyCode,
      `Cannot compute ${what}: the key ring does not hold key ${id} (a missing key is a deployment error)`,
      { data: { key: id } },
    );
  }
  try {
    return createHmac('sha256', subkey).update(message).digest();
  } finally {
    subkey.fill(0);
  }
}

/** `tag` then, for the domain and the canonical payload, a u32 big-endian length and the bytes. */
function framedMessage(tag: string, domain: string, payload: unknown): Buffer {
  checkDomain(domain);
  // The canonical text is written into the message as UTF-8 directly: no separate byte copy.
  return frame(tag, domain, canonicalize(payload));
}

function checkDomain(domain: string): void {
  if (typeof domain !== 'string' || domain === '' || /[\uD800-\uDFFF]/u.test(domain)) {
    throw new ContractViolationError(
      'commitment_domain_invalid',
      'Cannot compute a commitment: the domain must be a non-empty, well-formed string',
    );
  }
}

/**
 * `tag` then, for the (checked) domain and `body` (bytes, or text taken as UTF-8), a u32
 * big-endian length and the bytes — written into one buffer.
 */
function frame(tag: string, domain: string, body: Uint8Array | string): Buffer {
  const tagLength = Buffer.byteLength(tag, 'ascii');
  const domainLength = Buffer.byteLength(domain, 'utf8');
  const bodyLength = typeof body === 'string' ? Buffer.byteLength(body, 'utf8') : body.length;
  const message = Buffer.allocUnsafe(tagLength + 4 + domainLength + 4 + bodyLength);
  let at = message.write(tag, 0, 'ascii');
  at = message.writeUInt32BE(domainLength, at);
  at += message.write(domain, at, 'utf8');
  at = message.writeUInt32BE(bodyLength, at);
  if (typeof body === 'string') at += message.write(body, at, 'utf8');
  else {
    message.set(body, at);
    at += bodyLength;
  }
  assert(at === message.length, 'a framed message was not filled exactly');
  return message;
}

function decodeDigest(text: unknown): Buffer | undefined {
  if (typeof text !== 'string' || !/^[A-Za-z0-9_-]{43}$/.test(text)) return undefined;
  const bytes = Buffer.from(text, 'base64url');
  if (bytes.length !== HMAC_LENGTH_BYTES || bytes.toString('base64url') !== text) return undefined;
  return bytes;
}
