/**
 * The key ring: versioned 32-byte master secrets, named by handle and version so commitments and
 * envelopes name the key they used and keys can rotate without losing what came before.
 */

import { Buffer } from 'node:buffer';
import { createHash, hkdfSync } from 'node:crypto';
import { ConfigurationError } from './errors.js';

/**
 * One master secret of the ring. `handle` matches `/^[a-z0-9][a-z0-9_-]{0,63}$/`, `version` is a
 * positive safe integer, and `secret` is exactly 32 bytes (it is copied when the ring is built).
 */
export interface KeyMaterial {
  readonly handle: string;
  readonly version: number;
  readonly secret: Uint8Array;
}

/** Names one key of the ring without revealing it; stored next to commitments and envelopes. */
export interface KeyReference {
  readonly handle: string;
  readonly version: number;
}

/**
 * What a subkey is for. Each purpose gets its own HKDF-SHA-256 subkey of a master secret, so a
 * key used for commitments is never also used to encrypt.
 */
export const KeyPurpose = {
  commitment: 'commitment',
  encryption: 'encryption',
  effect: 'effect',
  ledger: 'ledger',
  /** The MAC on every stored proposal record (decision 045). */
  record: 'record',
  /** The keyed digest of the policy facts in the ledger, so small facts cannot be guessed. */
  facts: 'facts',
} as const;
/** What a subkey is for; see {@link KeyPurpose}. */
export type KeyPurpose = (typeof KeyPurpose)[keyof typeof KeyPurpose];

/**
 * A set of master secrets with two designated keys. Secrets never leave the ring: only derived
 * subkeys do, and the ring prints (`toString`, `JSON.stringify`, `util.inspect`) as references
 * only.
 */
export interface KeyRing {
  /** The key new commitments and envelopes use; rotate by adding a version and moving this. */
  readonly current: KeyReference;
  /**
   * The key semantic effect keys are derived with. It stays fixed across rotations of `current`:
   * if it changed, a retry after a rotation would map to a new effect and could run twice.
   */
  readonly effectKey: KeyReference;
  /**
   * A fresh copy of the 32-byte HKDF-SHA-256 subkey of `reference` for `purpose`, or `undefined`
   * when the ring holds no such key. The caller may overwrite the copy when done.
   */
  deriveKey(reference: KeyReference, purpose: KeyPurpose): Uint8Array | undefined;
  /** Whether the ring holds the key `reference` names. */
  has(reference: KeyReference): boolean;
  /** Every key the ring holds, in configuration order. */
  references(): readonly KeyReference[];
}

/** How to build a {@link KeyRing}; see {@link createKeyRing}. */
export interface KeyRingConfig {
  readonly keys: readonly KeyMaterial[];
  readonly current: KeyReference;
  /** Required when `keys` holds more than one key; defaults to the only key otherwise. */
  readonly effectKey?: KeyReference;
}

/** Bytes in every master secret and in every derived subkey. */
export const KEY_SECRET_LENGTH_BYTES = 32;

const HANDLE_PATTERN = /^[a-z0-9][a-z0-9_-]{0,63}$/;
const HKDF_SALT = Buffer.from('sideguard/key-ring/v1', 'utf8');
const DEFAULT_DEVELOPMENT_LABEL = 'sideguard-development';

/**
 * Build a key ring from explicit key material.
 *
 * Subkeys are `HKDF-SHA-256(ikm = secret, salt = "sideguard/key-ring/v1",
 * info = "sideguard/subkey/v1/" + purpose, length = 32)`; changing that changes every commitment.
 *
 * @throws ConfigurationError with code `key_ring_empty` (no keys), `key_handle_invalid`,
 *   `key_version_invalid`, `key_secret_invalid` (not exactly 32 bytes), `key_duplicate` (same
 *   handle and version twice), `key_current_unknown`, `key_effect_unspecified` (more than one
 *   key and no `effectKey`) or `key_effect_unknown`. Messages name handles and versions, never
 *   secret bytes.
 */
export function createKeyRing(config: KeyRingConfig): KeyRing {
  if (config.keys.length === 0) {
    throw new ConfigurationError('key_ring_empty', 'Cannot build the key ring: it has no keys');
  }
  const secrets = new Map<string, Uint8Array>();
  const references: KeyReference[] = [];
  for (const material of config.keys) {
    const reference = checkReference(material, 'a key');
    const id = referenceId(reference);
    const secret: unknown = material.secret;
    if (!(secret instanceof Uint8Array) || secret.length !== KEY_SECRET_LENGTH_BYTES) {
      const length = secret instanceof Uint8Array ? `${secret.length}-byte` : 'non-binary';
      throw new ConfigurationError(
        'key_secret_invalid',
        `Cannot build the key ring: key ${id} has a ${length} secret; every secret must be exactly ${KEY_SECRET_LENGTH_BYTES} bytes`,
        { data: { key: id } },
      );
    }
    if (secrets.has(id)) {
      throw new ConfigurationError(
        'key_duplicate',
        `Cannot build the key ring: key ${id} appears more than once`,
        { data: { key: id } },
      );
    }
    secrets.set(id, Uint8Array.from(secret));
    references.push(reference);
  }

  const current = checkReference(config.current, 'the current key');
  if (!secrets.has(referenceId(current))) {
    throw new ConfigurationError(
      'key_current_unknown',
      `Cannot build the key ring: the current key ${referenceId(current)} is not one of its keys`,
      { data: { key: referenceId(current) } },
    );
  }

  let effectKey: KeyReference;
  if (config.effectKey === undefined) {
    const only = references[0];
    if (references.length !== 1 || only === undefined) {
      throw new ConfigurationError(
        'key_effect_unspecified',
        'Cannot build the key ring: it holds more than one key, so the effect key must be named ' +
          'explicitly. Semantic effect keys must not change when commitment or encryption keys ' +
          'rotate; otherwise a retry after a rotation maps to a new effect and could run twice',
      );
    }
    effectKey = only;
  } else {
    effectKey = checkReference(config.effectKey, 'the effect key');
    if (!secrets.has(referenceId(effectKey))) {
      throw new ConfigurationError(
        'key_effect_unknown',
        `Cannot build the key ring: the effect key ${referenceId(effectKey)} is not one of its keys`,
        { data: { key: referenceId(effectKey) } },
      );
    }
  }

  const purposes = new Set<string>(Object.values(KeyPurpose));
  const derived = new Map<string, Uint8Array>();
  const frozenReferences = Object.freeze([...references]);
  const describe = (): string =>
    `KeyRing(current=${referenceId(current)}, effect=${referenceId(effectKey)}, keys=[${references
      .map(referenceId)
      .join(', ')}])`;
  const publicView = () => ({ current, effectKey, references: frozenReferences });

  const ring: KeyRing = {
    current,
    effectKey,
    deriveKey(reference, purpose) {
      if (!purposes.has(purpose)) {
        throw new ConfigurationError(
          'key_purpose_unknown',
          `Cannot derive a key: ${JSON.stringify(String(purpose))} is not a key purpose`,
        );
      }
      if (!isReference(reference)) return undefined;
      const id = referenceId(reference);
      const secret = secrets.get(id);
      if (secret === undefined) return undefined;
      const cacheId = `${id}/${purpose}`;
      let subkey = derived.get(cacheId);
      if (subkey === undefined) {
        subkey = new Uint8Array(
          hkdfSync(
            'sha256',
            secret,
            HKDF_SALT,
            Buffer.from(`sideguard/subkey/v1/${purpose}`, 'utf8'),
            KEY_SECRET_LENGTH_BYTES,
          ),
        );
        derived.set(cacheId, subkey);
      }
      return Uint8Array.from(subkey);
    },
    has(reference) {
      return isReference(reference) && secrets.has(referenceId(reference));
    },
    references() {
      return frozenReferences;
    },
  };
  Object.defineProperties(ring, {
    toString: { value: describe },
    toJSON: { value: publicView },
    [Symbol.for('nodejs.util.inspect.custom')]: { value: describe },
  });
  return Object.freeze(ring);
}

/**
 * A single-key ring whose secret is derived from `label` (SHA-256 of a fixed prefix and the
 * label), with handle `development` and version 1.
 *
 * **FOR DEMOS AND TESTS ONLY. NEVER USE IN PRODUCTION.** Anyone who knows the label (and the
 * default label is public) can forge every commitment and decrypt every snapshot.
 *
 * @default label `'sideguard-development'`
 */
export function createDevelopmentKeyRing(label: string = DEFAULT_DEVELOPMENT_LABEL): KeyRing {
  const secret = createHash('sha256')
    .update(`sideguard/development-key/v1\u0000${label}`, 'utf8')
    .digest();
  const reference = { handle: 'development', version: 1 };
  return createKeyRing({ keys: [{ ...reference, secret }], current: reference });
}

/**
 * Parse the compact text form of a key ring (what the CLI reads from `SIDEGUARD_KEYS`):
 * entries separated by `;` (or newlines), surrounding whitespace ignored, e.g.
 * `current=k1:2;effect=k1:1;k1:1=<base64url>;k1:2=<base64url>`.
 *
 * - `<handle>:<version>=<secret>` adds a key; the secret is 32 bytes in unpadded base64url
 *   (43 characters).
 * - `current=<handle>:<version>` and `effect=<handle>:<version>` name the designated keys. Both
 *   default to the only key when there is exactly one; with more keys both are required.
 *
 * @throws ConfigurationError code `key_ring_environment_invalid` when `value` is undefined or
 *   blank (saying how to make one), or naming the entry by position (and by key name when it
 *   parsed), never echoing secret text; or any error of
 *   {@link createKeyRing}.
 */
export function keyRingFromEnvironmentValue(value: string | undefined): KeyRing {
  if (typeof value !== 'string' || value.trim() === '') {
    throw new ConfigurationError(
      'key_ring_environment_invalid',
      'Cannot read the key ring text (SIDEGUARD_KEYS): it is not set. Run `sideguard keys generate` and put its output in SIDEGUARD_KEYS (keep it secret, like a password)',
    );
  }
  const keys: KeyMaterial[] = [];
  let current: KeyReference | undefined;
  let effectKey: KeyReference | undefined;
  const entries = value
    .split(/[;\n]/)
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  entries.forEach((entry, index) => {
    const position = `entry ${index + 1}`;
    const equals = entry.indexOf('=');
    if (equals <= 0) {
      throw environmentError(`${position} is not of the form name=value`);
    }
    const name = entry.slice(0, equals).trim();
    const text = entry.slice(equals + 1).trim();
    if (name === 'current' || name === 'effect') {
      const reference = parseReferenceText(text);
      if (reference === undefined) {
        throw environmentError(`${position} (${name}) is not of the form <handle>:<version>`);
      }
      if ((name === 'current' ? current : effectKey) !== undefined) {
        throw environmentError(`${position} names ${name} a second time`);
      }
      if (name === 'current') current = reference;
      else effectKey = reference;
      return;
    }
    const reference = parseReferenceText(name);
    if (reference === undefined) {
      throw environmentError(
        `${position} has a name that is neither current, effect nor <handle>:<version>`,
      );
    }
    const secret = decodeSecret(text);
    if (secret === undefined) {
      throw environmentError(
        `${position} (${referenceId(reference)}) does not hold exactly ${KEY_SECRET_LENGTH_BYTES} bytes of unpadded base64url`,
      );
    }
    keys.push({ ...reference, secret });
  });
  const only = keys.length === 1 ? keys[0] : undefined;
  const fallback = only === undefined ? undefined : { handle: only.handle, version: only.version };
  const resolvedCurrent = current ?? fallback;
  if (resolvedCurrent === undefined) {
    throw environmentError(
      keys.length === 0 ? 'no keys are given' : 'current=<handle>:<version> is required',
    );
  }
  const resolvedEffect = effectKey ?? fallback;
  try {
    return createKeyRing(
      resolvedEffect === undefined
        ? { keys, current: resolvedCurrent }
        : { keys, current: resolvedCurrent, effectKey: resolvedEffect },
    );
  } finally {
    // The ring holds its own copies; do not leave decoded secrets lying around.
    for (const material of keys) material.secret.fill(0);
  }
}

function environmentError(detail: string): ConfigurationError {
  return new ConfigurationError(
    'key_ring_environment_invalid',
    `Cannot read the key ring text (SIDEGUARD_KEYS): ${detail}`,
  );
}

function parseReferenceText(text: string): KeyReference | undefined {
  const match = /^([a-z0-9][a-z0-9_-]{0,63}):([1-9][0-9]{0,15})$/.exec(text);
  if (match === null) return undefined;
  const version = Number(match[2]);
  if (!Number.isSafeInteger(version)) return undefined;
  return { handle: match[1]!, version };
}

function decodeSecret(text: string): Uint8Array | undefined {
  if (!/^[A-Za-z0-9_-]{43}$/.test(text)) return undefined;
  const bytes = Buffer.from(text, 'base64url');
  // Reject non-canonical spellings (stray low bits in the last character).
  if (bytes.length !== KEY_SECRET_LENGTH_BYTES || bytes.toString('base64url') !== text) {
    bytes.fill(0);
    return undefined;
  }
  // Small Buffers live in a shared pool: copy out, then wipe our slice of the pool.
  const secret = Uint8Array.from(bytes);
  bytes.fill(0);
  return secret;
}

function checkReference(reference: KeyReference, what: string): KeyReference {
  const handle: unknown = reference?.handle;
  const version: unknown = reference?.version;
  if (typeof handle !== 'string' || !HANDLE_PATTERN.test(handle)) {
    throw new ConfigurationError(
      'key_handle_invalid',
      `Cannot build the key ring: ${what} has a handle that does not match ${HANDLE_PATTERN}`,
      typeof handle === 'string' && handle.length <= 64 ? { data: { handle } } : {},
    );
  }
  if (typeof version !== 'number' || !Number.isSafeInteger(version) || version < 1) {
    throw new ConfigurationError(
      'key_version_invalid',
      `Cannot build the key ring: key ${handle} has version ${String(version)}; versions are positive integers`,
      { data: { handle } },
    );
  }
  return Object.freeze({ handle, version });
}

function isReference(reference: unknown): reference is KeyReference {
  if (typeof reference !== 'object' || reference === null) return false;
  const { handle, version } = reference as { handle?: unknown; version?: unknown };
  return typeof handle === 'string' && typeof version === 'number';
}

/** `handle:version`, the spelling used in messages, the text form and internal maps. */
function referenceId(reference: KeyReference): string {
  return `${reference.handle}:${reference.version}`;
}
