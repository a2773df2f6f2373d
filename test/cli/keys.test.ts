import { describe, expect, it } from 'vitest';
import { generateKeyRingValue, rotateKeyRingValue } from '../../src/cli/keys-command.js';
import { createGuard, createMemoryStore, keyRingFromEnvironmentValue } from '../../src/index.js';
import { runCli } from '../support/cli.js';
import { createFakeProvider, refundAction, refundArgs } from '../support/guard-harness.js';

describe('sideguard keys', () => {
  it('generates a one-key ring that parses, with a fresh secret each time', () => {
    const a = runCli(['keys', 'generate']);
    const b = runCli(['keys', 'generate']);
    expect(a.status).toBe(0);
    expect(a.stdout.trim()).toMatch(/^current=k1:1;effect=k1:1;k1:1=[A-Za-z0-9_-]{43}$/);
    expect(a.stdout).not.toBe(b.stdout);
    expect(keyRingFromEnvironmentValue(a.stdout.trim()).current).toEqual({
      handle: 'k1',
      version: 1,
    });
  });

  it('rotates to a new current key, keeps the old one, and pins the effect key', () => {
    const rotated = keyRingFromEnvironmentValue(rotateKeyRingValue(generateKeyRingValue('k1')));
    expect(rotated.current).toEqual({ handle: 'k1', version: 2 });
    expect(rotated.effectKey).toEqual({ handle: 'k1', version: 1 });
    expect(rotated.references()).toHaveLength(2);
  });

  it('keeps a retry after rotation the same semantic effect, and old proposals executable', async () => {
    const before = generateKeyRingValue('k1');
    const after = rotateKeyRingValue(before);
    const store = createMemoryStore();
    const provider = createFakeProvider();
    const refund = refundAction(provider);
    const oldGuard = createGuard({ store, keyRing: keyRingFromEnvironmentValue(before) });
    const prepared = await oldGuard.prepare(refund, {
      tenant: 't',
      input: refundArgs(),
      principal: 'p',
    });
    const newGuard = createGuard({ store, keyRing: keyRingFromEnvironmentValue(after) });
    const retry = await newGuard.run(refund, {
      tenant: 't',
      input: refundArgs({ requestId: 'after-rotation' }),
      principal: 'p',
    });
    expect(retry.semanticEffectKey).toBe(prepared.semanticEffectKey);
    expect(retry.proposal).toBe(prepared.proposal);
    expect(retry.outcome).toBe('verified');
    expect(provider.calls.execute).toBe(1);
  });

  it('refuses to rotate without SIDEGUARD_KEYS, and never echoes a malformed secret', () => {
    const missing = runCli(['keys', 'rotate'], { env: { SIDEGUARD_KEYS: '' } });
    expect(missing.status).toBe(2);
    expect(missing.stderr.trim()).toBe(
      'sideguard: SIDEGUARD_KEYS is not set: run `sideguard keys generate` first',
    );
    const secret = 'not-a-real-secret-but-still-private';
    const malformed = runCli(['keys', 'rotate'], { env: { SIDEGUARD_KEYS: `k1:1=${secret}` } });
    expect(malformed.status).toBe(2);
    expect(malformed.stderr).not.toContain(secret);
  });
});
