import { describe, expect, it } from 'vitest';
import { deepFreeze } from './deep-freeze.js';

describe('deepFreeze', () => {
  it('freezes every object and array reachable from the root and returns the root', () => {
    const tree = { a: { b: [1, { c: 'x' }] }, d: null, e: 'text' };
    expect(deepFreeze(tree)).toBe(tree);
    expect(Object.isFrozen(tree)).toBe(true);
    expect(Object.isFrozen(tree.a)).toBe(true);
    expect(Object.isFrozen(tree.a.b)).toBe(true);
    expect(Object.isFrozen(tree.a.b[1])).toBe(true);
  });

  it('walks into a root that was frozen shallowly (not by deepFreeze)', () => {
    const child = { open: true };
    const root = Object.freeze({ child });
    deepFreeze(root);
    expect(Object.isFrozen(child)).toBe(true);
  });

  it('walks a new root that shares frozen parts with an earlier one, freezing its own parts', () => {
    const shared = deepFreeze({ commitment: { value: 'v' } });
    const successor = { ...shared, lease: { owner: 'o' } };
    deepFreeze(successor);
    expect(Object.isFrozen(successor)).toBe(true);
    expect(Object.isFrozen(successor.lease)).toBe(true);
  });

  it('leaves a tree it froze before frozen and unchanged when asked again', () => {
    const tree = deepFreeze({ list: [{ at: 1 }] });
    expect(deepFreeze(tree)).toBe(tree);
    expect(() => {
      (tree.list[0] as { at: number }).at = 2;
    }).toThrow(TypeError);
    expect(tree.list[0]?.at).toBe(1);
  });

  it('returns scalars and typed arrays as they are (a typed array cannot be frozen)', () => {
    const bytes = new Uint8Array([1, 2]);
    expect(deepFreeze(bytes)).toBe(bytes);
    expect(Object.isFrozen(bytes)).toBe(false);
    expect(deepFreeze('text')).toBe('text');
    expect(deepFreeze(null)).toBe(null);
  });
});
