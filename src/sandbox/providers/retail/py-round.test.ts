import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { pyFloatString, pyRound2 } from './py-round.js';

const golden = JSON.parse(
  readFileSync(new URL('../../../../fixtures/golden/python-round-2.json', import.meta.url), 'utf8'),
) as { cases: [string, string][] };

describe('pyRound2', () => {
  it('matches CPython round(x, 2) on every golden case, sign of zero included', () => {
    const wrong = golden.cases.filter(([x, want]) => !Object.is(pyRound2(Number(x)), Number(want)));
    expect(golden.cases.length).toBeGreaterThan(400);
    expect(wrong).toEqual([]);
  });

  it('differs from Math.round(x * 100) / 100 where Python does (the cases have teeth)', () => {
    const naive = golden.cases.filter(
      ([x, want]) => Math.round(Number(x) * 100) / 100 !== Number(want),
    );
    expect(naive.length).toBeGreaterThan(0);
  });

  it('rounds exact half cents to even and inexact ones by their binary value', () => {
    expect(pyRound2(0.125)).toBe(0.12);
    expect(pyRound2(0.375)).toBe(0.38);
    expect(pyRound2(-0.125)).toBe(-0.12);
    expect(pyRound2(2.675)).toBe(2.67);
    expect(pyRound2(1.005)).toBe(1);
    expect(pyRound2(41.91999999999999)).toBe(41.92);
    expect(Object.is(pyRound2(-0.001), -0)).toBe(true);
  });
});

describe('pyFloatString', () => {
  it('prints floats as Python str() does', () => {
    expect(pyFloatString(4)).toBe('4.0');
    expect(pyFloatString(0.1 + 0.2)).toBe('0.30000000000000004');
    expect(pyFloatString(1e16)).toBe('1e+16');
    expect(pyFloatString(-2.5)).toBe('-2.5');
    expect(pyFloatString(0.00001)).toBe('1e-05');
  });
});
