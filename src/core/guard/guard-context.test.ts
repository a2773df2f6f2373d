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

  it('writes times of the day it wrote last without a Date, exactly as toISOString does', () => {
    const midnight = Date.UTC(2026, 0, 2);
    const times = [
      midnight - 1, // the day before, then across midnight both ways
      midnight,
      midnight + 1,
      midnight - 1,
      midnight + 86_399_999, // the last millisecond of the day, then the next day's first
      midnight + 86_400_000,
      midnight + 3_723_456, // 01:02:03.456
      midnight + 3_723_456.7, // a fraction: Date truncates it
      -0,
      -1,
      -86_400_001,
      253_402_300_799_999, // 9999-12-31T23:59:59.999Z, then year 10000's six-digit form
      253_402_300_800_000,
      253_402_300_800_001,
      0.5,
    ];
    for (const ms of times) expect(iso(ms)).toBe(new Date(ms).toISOString());
    // A seeded walk of small and large steps within and across days.
    let ms = Date.UTC(2025, 11, 31, 23, 0, 0);
    let state = 7;
    for (let step = 0; step < 5_000; step++) {
      state = (state * 1_103_515_245 + 12_345) % 2_147_483_648;
      ms += state % 7 === 0 ? state % 90_000_000 : state % 2_000;
      expect(iso(ms)).toBe(new Date(ms).toISOString());
    }
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
