/**
 * Deep freezing for values the guard and the memory store share instead of copying: a frozen
 * record cannot be changed in place by anyone holding it, so handing out the same object is as
 * safe as handing out a copy, and much cheaper.
 */

/**
 * Freezes `value` and every plain object and array reachable from it, and returns it. Already
 * frozen objects are walked too (`Object.freeze` is shallow). Records, events and evidence are
 * small JSON-shaped trees, so the walk is cheap; remembering what was frozen (a WeakSet, or a
 * mark on each object) measured slower than walking again.
 */
export function deepFreeze<T>(value: T): T {
  // A typed array cannot be frozen; JSON-shaped values never hold one.
  if (typeof value !== 'object' || value === null || ArrayBuffer.isView(value)) return value;
  if (Array.isArray(value)) {
    for (const item of value) deepFreeze(item);
  } else {
    for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key]);
  }
  return Object.freeze(value);
}
