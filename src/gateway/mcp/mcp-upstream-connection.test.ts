import { describe, expect, it } from 'vitest';
import { freshListings } from './mcp-upstream-connection.js';

/** A listing the test finishes by hand, numbered in the order they started. */
function manualListings() {
  const started: { number: number; finish: () => void }[] = [];
  const list = () =>
    new Promise<number>((resolve) => {
      const number = started.length + 1;
      started.push({ number, finish: () => resolve(number) });
    });
  return { started, list };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('fresh, shared tool listings', () => {
  it('gives callers who arrive during a listing the next one, started after it, all sharing it', async () => {
    const { started, list } = manualListings();
    const listings = freshListings(list);
    const first = listings.fresh();
    const second = listings.fresh();
    const third = listings.fresh();
    expect(started).toHaveLength(1);
    started[0]?.finish();
    expect(await first).toBe(1);
    await settle();
    // Nobody who arrived during listing 1 gets it: it may predate them.
    expect(started).toHaveLength(2);
    started[1]?.finish();
    expect(await second).toBe(2);
    expect(await third).toBe(2);
  });

  it('starts a new listing for a caller arriving when none runs', async () => {
    const { started, list } = manualListings();
    const listings = freshListings(list);
    const first = listings.fresh();
    started[0]?.finish();
    await first;
    await settle();
    const later = listings.fresh();
    expect(started).toHaveLength(2);
    started[1]?.finish();
    expect(await later).toBe(2);
  });
});
