/** The memory store against the store conformance suite. */
import { runStoreConformance } from '../conformance/store-conformance.js';
import { createMemoryStore } from './memory-store.js';

runStoreConformance({
  name: 'memory',
  newStore: async () => createMemoryStore(),
  propertyRuns: 60,
});
