/**
 * `sideguard/testing`: what adapter authors and applications need to test against Sideguard —
 * the store conformance suite (run it on your own `GuardStore`) and the in-memory store.
 */
export {
  runStoreConformance,
  type StoreConformanceOptions,
  type StoreConformanceSkip,
} from './stores/conformance/store-conformance.js';
export { createMemoryStore } from './stores/memory/memory-store.js';
