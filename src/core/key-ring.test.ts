import { Buffer } from 'node:buffer';
import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { ConfigurationError } from './errors.js';
import {
  createDevelopmentKeyRing,
  createKeyRing,
  KeyPurpose,
  type KeyRingConfig,
  keyRingFromEnvironmentValue,
} from './key-ring.js';

const secretA = Uint8Array.from({ length: 32 }, (_, index) => index + 1);
const secretB = Uint8Array.from({ length: 32 }, (_, index) => 200 - index);
const k1v1 = { handle: 'k1', version: 1 };
const k1v2 = { handle: 'k1', version: 2 };

function configurationFailure(run: () => unknown): ConfigurationError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigurationError);
    return error as ConfigurationError;
  }
  throw new Error('expected a ConfigurationError, but nothing was thrown');
}

function expectConfigurationCode(run: () => unknown, code: string): ConfigurationError {
  const error = configurationFailure(run);
  expect(error.code).toBe(code);
  return error;
}

const hex = (bytes: Uint8Array | undefined): string => Buffer.from(bytes ?? []).toString('hex');

describe('createKeyRing', () => {
  it('defaults the effect key to the only key of a single-key ring', () => {
    const ring = createKeyRing({ keys: [{ ...k1v1, secret: secretA }], current: k1v1 });
    expect(ring.current).toEqual(k1v1);
    expect(ring.effectKey).toEqual(k1v1);
    expect(ring.references()).toEqual([k1v1]);
  });

  it('keeps an explicitly named effect key while current moves to a newer version', () => {
    const ring = createKeyRing({
      keys: [
        { ...k1v1, secret: secretA },
        { ...k1v2, secret: secretB },
      ],
      current: k1v2,
      effectKey: k1v1,
    });
    expect(ring.current).toEqual(k1v2);
    expect(ring.effectKey).toEqual(k1v1);
    expect(ring.references()).toEqual([k1v1, k1v2]);
    expect(ring.has(k1v1)).toBe(true);
    expect(ring.has({ handle: 'k1', version: 3 })).toBe(false);
    expect(ring.has({ handle: 'k2', version: 1 })).toBe(false);
  });

  it('rejects an empty ring', () => {
    expectConfigurationCode(() => createKeyRing({ keys: [], current: k1v1 }), 'key_ring_empty');
  });

  it('rejects the same handle and version twice', () => {
    const error = expectConfigurationCode(
      () =>
        createKeyRing({
          keys: [
            { ...k1v1, secret: secretA },
            { ...k1v1, secret: secretB },
          ],
          current: k1v1,
          effectKey: k1v1,
        }),
      'key_duplicate',
    );
    expect(error.message).toContain('k1:1');
  });

  it.each([
    ['16 bytes', new Uint8Array(16)],
    ['33 bytes', new Uint8Array(33)],
    ['no bytes', new Uint8Array(0)],
  ])('rejects a secret of %s', (_name, secret) => {
    const error = expectConfigurationCode(
      () => createKeyRing({ keys: [{ ...k1v1, secret }], current: k1v1 }),
      'key_secret_invalid',
    );
    expect(error.message).toContain('exactly 32 bytes');
    expect(error.data).toEqual({ key: 'k1:1' });
  });

  it('rejects a secret that is not bytes', () => {
    expectConfigurationCode(
      () =>
        createKeyRing({
          keys: [{ ...k1v1, secret: 'x'.repeat(32) as unknown as Uint8Array }],
          current: k1v1,
        }),
      'key_secret_invalid',
    );
  });

  it.each([
    ['upper case', 'K1'],
    ['empty', ''],
    ['a leading dash', '-k1'],
    ['a colon', 'k1:2'],
    ['65 characters', `k${'1'.repeat(64)}`],
  ])('rejects a handle with %s', (_name, handle) => {
    expectConfigurationCode(
      () => createKeyRing({ keys: [{ handle, version: 1, secret: secretA }], current: k1v1 }),
      'key_handle_invalid',
    );
  });

  it('accepts a 64-character handle with digits, dashes and underscores', () => {
    const handle = `0${'a_-'.repeat(21)}`;
    expect(handle).toHaveLength(64);
    const reference = { handle, version: 1 };
    expect(
      createKeyRing({ keys: [{ ...reference, secret: secretA }], current: reference }).current,
    ).toEqual(reference);
  });

  it.each([0, -1, 1.5, Number.NaN, 2 ** 53])('rejects version %s', (version) => {
    expectConfigurationCode(
      () => createKeyRing({ keys: [{ handle: 'k1', version, secret: secretA }], current: k1v1 }),
      'key_version_invalid',
    );
  });

  it('rejects a current key that the ring does not hold', () => {
    const error = expectConfigurationCode(
      () => createKeyRing({ keys: [{ ...k1v1, secret: secretA }], current: k1v2 }),
      'key_current_unknown',
    );
    expect(error.message).toContain('k1:2');
  });

  it('requires an explicit effect key when the ring holds more than one key, and says why', () => {
    const error = expectConfigurationCode(
      () =>
        createKeyRing({
          keys: [
            { ...k1v1, secret: secretA },
            { ...k1v2, secret: secretB },
          ],
          current: k1v2,
        }),
      'key_effect_unspecified',
    );
    expect(error.message).toMatch(/must not change when commitment or encryption keys rotate/);
    expect(error.message).toMatch(/retry after a rotation maps to a new effect/);
  });

  it('rejects an effect key that the ring does not hold', () => {
    expectConfigurationCode(
      () =>
        createKeyRing({
          keys: [{ ...k1v1, secret: secretA }],
          current: k1v1,
          effectKey: { handle: 'k9', version: 1 },
        }),
      'key_effect_unknown',
    );
  });

  it('copies secrets, so changing the caller’s buffer later changes nothing', () => {
    const secret = Uint8Array.from(secretA);
    const ring = createKeyRing({ keys: [{ ...k1v1, secret }], current: k1v1 });
    const before = hex(ring.deriveKey(k1v1, 'commitment'));
    secret.fill(0);
    expect(hex(ring.deriveKey(k1v1, 'commitment'))).toBe(before);
  });

  it('is frozen, and so are its references', () => {
    const ring = createKeyRing({ keys: [{ ...k1v1, secret: secretA }], current: k1v1 });
    expect(Object.isFrozen(ring)).toBe(true);
    expect(Object.isFrozen(ring.current)).toBe(true);
    expect(Object.isFrozen(ring.references())).toBe(true);
  });

  it('never shows a secret through toString, JSON.stringify, util.inspect or its own keys', () => {
    const config: KeyRingConfig = {
      keys: [
        { ...k1v1, secret: secretA },
        { ...k1v2, secret: secretB },
      ],
      current: k1v2,
      effectKey: k1v1,
    };
    const ring = createKeyRing(config);
    const renderings = [
      String(ring),
      `${ring}`,
      JSON.stringify(ring),
      inspect(ring, { depth: 10, showHidden: true }),
      JSON.stringify(Object.entries(ring)),
    ];
    for (const secret of [secretA, secretB]) {
      const spellings = [
        Buffer.from(secret).toString('hex'),
        Buffer.from(secret).toString('base64'),
        Buffer.from(secret).toString('base64url'),
        [...secret].join(','),
        [...secret].join(', '),
      ];
      for (const rendering of renderings) {
        for (const spelling of spellings) expect(rendering).not.toContain(spelling);
      }
    }
    expect(String(ring)).toBe('KeyRing(current=k1:2, effect=k1:1, keys=[k1:1, k1:2])');
    expect(JSON.parse(JSON.stringify(ring))).toEqual({
      current: k1v2,
      effectKey: k1v1,
      references: [k1v1, k1v2],
    });
  });
});

describe('KeyRing.deriveKey', () => {
  const ring = createKeyRing({
    keys: [
      { ...k1v1, secret: secretA },
      { ...k1v2, secret: secretB },
    ],
    current: k1v2,
    effectKey: k1v1,
  });

  it('derives a distinct 32-byte subkey per purpose and per key, none equal to the secret', () => {
    const subkeys = [k1v1, k1v2].flatMap((reference) =>
      Object.values(KeyPurpose).map((purpose) => hex(ring.deriveKey(reference, purpose))),
    );
    for (const subkey of subkeys) expect(subkey).toHaveLength(64);
    expect(new Set(subkeys).size).toBe(2 * Object.values(KeyPurpose).length);
    expect(subkeys).not.toContain(hex(secretA));
    expect(subkeys).not.toContain(hex(secretB));
  });

  it('derives the same subkey from the same secret in another ring, whatever the handle', () => {
    const other = createKeyRing({
      keys: [{ handle: 'elsewhere', version: 7, secret: secretA }],
      current: { handle: 'elsewhere', version: 7 },
    });
    expect(hex(other.deriveKey({ handle: 'elsewhere', version: 7 }, 'ledger'))).toBe(
      hex(ring.deriveKey(k1v1, 'ledger')),
    );
  });

  it('returns undefined for a key the ring does not hold', () => {
    expect(ring.deriveKey({ handle: 'k1', version: 3 }, 'commitment')).toBeUndefined();
    expect(ring.deriveKey({ handle: 'zz', version: 1 }, 'encryption')).toBeUndefined();
  });

  it('returns a fresh copy each time, so a caller that wipes it harms no one', () => {
    const first = ring.deriveKey(k1v1, 'effect')!;
    const expected = hex(first);
    first.fill(0);
    expect(hex(ring.deriveKey(k1v1, 'effect'))).toBe(expected);
  });

  it('rejects an unknown purpose as a configuration error', () => {
    expectConfigurationCode(
      () => ring.deriveKey(k1v1, 'signing' as KeyPurpose),
      'key_purpose_unknown',
    );
  });
});

describe('createDevelopmentKeyRing', () => {
  it('is deterministic for a label and differs between labels', () => {
    const first = createDevelopmentKeyRing('demo');
    const second = createDevelopmentKeyRing('demo');
    const other = createDevelopmentKeyRing('other-demo');
    const reference = first.current;
    expect(reference).toEqual({ handle: 'development', version: 1 });
    expect(first.effectKey).toEqual(reference);
    expect(hex(first.deriveKey(reference, 'commitment'))).toBe(
      hex(second.deriveKey(reference, 'commitment')),
    );
    expect(hex(first.deriveKey(reference, 'commitment'))).not.toBe(
      hex(other.deriveKey(reference, 'commitment')),
    );
  });

  it("defaults the label to 'sideguard-development'", () => {
    const reference = { handle: 'development', version: 1 };
    expect(hex(createDevelopmentKeyRing().deriveKey(reference, 'encryption'))).toBe(
      hex(createDevelopmentKeyRing('sideguard-development').deriveKey(reference, 'encryption')),
    );
  });
});

describe('keyRingFromEnvironmentValue', () => {
  const textA = Buffer.from(secretA).toString('base64url');
  const textB = Buffer.from(secretB).toString('base64url');

  it('parses current, effect and keys into the same ring as createKeyRing', () => {
    const ring = keyRingFromEnvironmentValue(
      `current=k1:2;effect=k1:1;k1:1=${textA};k1:2=${textB}`,
    );
    const direct = createKeyRing({
      keys: [
        { ...k1v1, secret: secretA },
        { ...k1v2, secret: secretB },
      ],
      current: k1v2,
      effectKey: k1v1,
    });
    expect(ring.current).toEqual(k1v2);
    expect(ring.effectKey).toEqual(k1v1);
    expect(ring.references()).toEqual([k1v1, k1v2]);
    for (const reference of [k1v1, k1v2]) {
      expect(hex(ring.deriveKey(reference, 'commitment'))).toBe(
        hex(direct.deriveKey(reference, 'commitment')),
      );
    }
  });

  it('ignores surrounding whitespace, newlines and empty entries', () => {
    const ring = keyRingFromEnvironmentValue(
      `\n  k1:1 = ${textA} ;\n k1:2=${textB};; current = k1:2\neffect=k1:1;\n`,
    );
    expect(ring.current).toEqual(k1v2);
    expect(ring.effectKey).toEqual(k1v1);
  });

  it('defaults current and effect to the only key', () => {
    const ring = keyRingFromEnvironmentValue(`k1:1=${textA}`);
    expect(ring.current).toEqual(k1v1);
    expect(ring.effectKey).toEqual(k1v1);
  });

  it('requires the effect key to be named when there are several keys', () => {
    expectConfigurationCode(
      () => keyRingFromEnvironmentValue(`current=k1:2;k1:1=${textA};k1:2=${textB}`),
      'key_effect_unspecified',
    );
  });

  it.each([
    ['an unset value (undefined)', undefined, /it is not set\. Run `sideguard keys generate`/],
    ['an empty value', '', /it is not set\. Run `sideguard keys generate`/],
    ['a blank value', ' \n ', /it is not set/],
    ['only separators', ';;', /no keys are given/],
    ['a missing current with several keys', `k1:1=${textA};k1:2=${textB}`, /current=/],
    ['an entry without "="', `k1:1${textA}`, /entry 1 is not of the form name=value/],
    ['an unknown name', `currant=k1:1;k1:1=${textA}`, /entry 1 has a name/],
    ['a malformed reference', `current=k1;k1:1=${textA}`, /entry 1 \(current\)/],
    ['version zero', `k1:0=${textA}`, /entry 1 has a name/],
    ['current named twice', `current=k1:1;current=k1:1;k1:1=${textA}`, /second time/],
    ['a 16-byte secret', `k1:1=${Buffer.alloc(16, 7).toString('base64url')}`, /entry 1 \(k1:1\)/],
    ['a padded secret', `k1:1=${textA}=`, /entry 1 \(k1:1\)/],
    [
      'standard base64',
      `k1:1=${Buffer.alloc(32, 0xfb).toString('base64').replace(/=+$/, '')}`,
      /unpadded base64url/,
    ],
  ])('rejects %s with a clear key_ring_environment_invalid error', (_name, value, message) => {
    const error = expectConfigurationCode(
      () => keyRingFromEnvironmentValue(value),
      'key_ring_environment_invalid',
    );
    expect(error.message).toMatch(message);
  });

  it('never echoes secret text in its errors, even when the "=" is missing', () => {
    const secretText = Buffer.from(secretB).toString('base64url');
    const attempts = [
      `k1:1${secretText}`,
      `${secretText}`,
      `k1:1=${secretText.slice(0, 40)}`,
      `k1:1=${secretText}x`,
      `current=k1:9;k1:1=${secretText};k1:2=${textA}`,
      `k1:1=${secretText};k1:1=${secretText};current=k1:1;effect=k1:1`,
    ];
    for (const attempt of attempts) {
      const error = configurationFailure(() => keyRingFromEnvironmentValue(attempt));
      expect(error.message).not.toContain(secretText.slice(0, 12));
      expect(JSON.stringify(error.data ?? {})).not.toContain(secretText.slice(0, 12));
    }
  });
});
