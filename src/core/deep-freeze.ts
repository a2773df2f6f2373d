/**
 * Deep freezing for values the guard and the memory store share instead of copying: a frozen
 * record cannot be changed in place by anyone holding it, so handing out the same object is as
 * safe as handing out a copy, and much cheaper.
 */

/**
 * The roots {@link deepFreeze} finished walking. Freezing cannot be undone, so such a tree stays
 * frozen for good, and freezing it again (the guard seals a record deep-frozen, then the memory
 * store freezes what it keeps) need not walk it again. Only roots are remembered: remembering
 * every object measured slower than walking again.
 */
const frozenTrees = new WeakSet<object>();

/**
 * Freezes `value` and every plain object and array reachable from it, and returns it. Already
 * frozen objects are walked too (`Object.freeze` is shallow), unless `value` itself was
 * deep-frozen here before. Records, events and evidence are small JSON-shaped trees, so the walk
 * is cheap.
 */
export function deepFreeze<T>(value: T): T {
  // A typed array cannot be frozen; JSON-shaped values never hold one.
  if (typeof value !== 'object' || value === null || ArrayBuffer.isView(value)) return value;
  if (frozenTrees.has(value)) return value;
  freezeTree(value);
  frozenTrees.add(value);
  return value;
}

function freezeTree(value: unknown): void {
  if (typeof value !== 'object' || value === null || ArrayBuffer.isView(value)) return;
  if (Array.isArray(value)) {
    for (const item of value) freezeTree(item);
  } else {
    for (const key of Object.keys(value)) freezeTree((value as Record<string, unknown>)[key]);
  }
  Object.freeze(value);
}
