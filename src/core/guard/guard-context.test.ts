import { describe, expect, it } from 'vitest';
import { createMemoryStore } from '../../stores/memory/memory-store.js';
import { createManualClock } from '../clock.js';
import { createDevelopmentKeyRing } from '../key-ring.js';
import { createGuardContext, iso } from './guard-context.js';
import { forgetSnapshotPlaintext, sealSnapshot } from './proposal-snapshot.js';

describe('iso', () => {
  it('answers each time exactly, however times alternate and repeat', () => {
    const times = [
      0, 1_700_000_000_000, 0, 1_700_000_000_000, 1_700_000_000_001, 0, 0, -1, 8.64e15,
    ];
    for (const ms of times) expect(iso(ms)).toBe(new Date(ms).toISOString());
  });

  it('throws for a time that is not one, also right after a valid time', () => {
    expect(iso(5)).toBe('1970-01-01T00:00:00.005Z');
    expect(() => iso(Number.NaN)).toThrow(RangeError);
    expect(() => iso(Number.NaN)).toThrow(RangeError);
    expect(() => iso(8.64e15 + 1)).toThrow(RangeError);
  });
});

describe('remembered snapshot plaintexts', () => {
  it('are dropped once the claim is committed', () => {
    const clock = createManualClock(1_700_000_000_000);
    const context = createGuardContext({
      store: createMemoryStore(),
      keyRing: createDevelopmentKeyRing(),
      clock,
      ids: { proposal: () => 'prop_1', lease: () => 'lease_1' },
      randomBytes: (size) => new Uint8Array(size).fill(7),
    });
    const snapshot = sealSnapshot(context, 't', 'prop_1', { input: { a: 1 } });
    expect(context.snapshotPlaintexts.get(snapshot)).toBe('{"input":{"a":1}}');
    forgetSnapshotPlaintext(context, { snapshot } as never);
    expect(context.snapshotPlaintexts.has(snapshot)).toBe(false);
  });
});
