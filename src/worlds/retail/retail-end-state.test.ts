import { describe, expect, it } from 'vitest';
import { changedRecords, compareChanges, firstDifference } from './retail-end-state.js';

describe('the end-state oracle', () => {
  it('compares numbers by value, ignores key order and keeps list order', () => {
    expect(firstDifference({ a: 9, b: [1, 2] }, { b: [1, 2], a: 9.0 })).toBeNull();
    expect(firstDifference({ b: [1, 2] }, { b: [2, 1] })).toBe('.b[0]: 1 ≠ 2');
    expect(firstDifference({ a: 1 }, { a: 1, c: 'x' })).toBe('.c: missing on the left');
  });

  it('finds changed records and names each difference from the expected changes', () => {
    const initial = { u1: { zip: '1' }, u2: { zip: '2' } };
    const changed = changedRecords(initial, { u1: { zip: '1' }, u2: { zip: '3' } });
    expect(changed).toEqual({ u2: { zip: '3' } });
    expect(compareChanges({ users: { u2: { zip: '3' } } }, { users: changed, orders: {} })).toEqual(
      {
        matches: true,
        differences: [],
      },
    );
    const wrong = compareChanges(
      { orders: { '#W1': { status: 'cancelled' } } },
      { users: changed, orders: {} },
    );
    expect(wrong.matches).toBe(false);
    expect(wrong.differences).toEqual([
      'users["u2"]: changed, expected unchanged',
      'orders["#W1"]: expected a change, none happened',
    ]);
  });
});
