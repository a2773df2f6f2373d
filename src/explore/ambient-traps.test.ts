import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import {
  AmbientAccessError,
  activateTraps,
  deactivateTraps,
  installAmbientTraps,
  withoutTraps,
} from './ambient-traps.js';

describe('simulation mode traps', () => {
  installAmbientTraps();
  afterEach(() => {
    deactivateTraps();
  });

  it('throws on ambient time, randomness and timers while armed, and records each escape', () => {
    activateTraps();
    const attempts: (() => unknown)[] = [
      () => Date.now(),
      () => new Date(),
      () => Math.random(),
      () => performance.now(),
      () => setTimeout(() => undefined, 0),
      () => randomBytes(4),
    ];
    for (const attempt of attempts) {
      expect(attempt).toThrow(AmbientAccessError);
    }
    const escapes = deactivateTraps();
    expect(escapes).toEqual([
      'Date.now',
      'new Date()',
      'Math.random',
      'performance.now',
      'setTimeout',
      'crypto.randomBytes',
    ]);
  });

  it('lets explicit times through and does nothing while disarmed', () => {
    activateTraps();
    expect(new Date(0).toISOString()).toBe('1970-01-01T00:00:00.000Z');
    expect(Date.parse('2026-01-01T00:00:00.000Z')).toBe(1_767_225_600_000);
    expect(withoutTraps(() => typeof Date.now())).toBe('number');
    deactivateTraps();
    expect(typeof Date.now()).toBe('number');
    expect(new Date() instanceof Date).toBe(true);
  });

  it('traps Date called as a function, and keeps dates real Dates either way', () => {
    const before = new Date(0);
    activateTraps();
    expect(() => Date()).toThrow(AmbientAccessError);
    const explicit = new Date(Date.UTC(2026, 0, 1));
    expect(explicit instanceof Date).toBe(true);
    expect(before instanceof Date).toBe(true);
    expect(new Date(2026, 0, 1, 12).getHours()).toBe(12);
    class Stamp extends Date {}
    expect(Object.getPrototypeOf(new Stamp(0))).toBe(Stamp.prototype);
    expect(() => new Stamp()).toThrow(AmbientAccessError);
    expect(deactivateTraps()).toEqual(['Date()', 'new Date()']);
  });

  it('names what escaped and how to fix it, with a stable code', () => {
    activateTraps();
    try {
      Math.random();
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(AmbientAccessError);
      expect((error as AmbientAccessError).code).toBe('explore_ambient_access');
      expect((error as Error).message).toMatch(/Math\.random.*Inject time, ids and randomness/);
    }
  });
});
