/** The memory store against the store conformance suite. */
import { describe, it } from 'vitest';
import { runStoreConformance } from '../conformance/store-conformance.js';
import { createMemoryStore } from './memory-store.js';

runStoreConformance({
  describe,
  it,
  name: 'memory',
  newStore: async () => createMemoryStore(),
  propertyRuns: 60,
});
