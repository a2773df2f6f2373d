/**
 * `sideguard/testing`: what adapter authors and applications need to test against Sideguard —
 * the store conformance suite (run it on your own `GuardStore` under any test framework) and
 * the in-memory store. It imports no test framework; its property tests load the optional peer
 * `fast-check` when they run.
 */
export {
  type ConformanceIt,
  runStoreConformance,
  type StoreConformanceOptions,
  type StoreConformanceSkip,
} from './stores/conformance/store-conformance.js';
export { createMemoryStore } from './stores/memory/memory-store.js';
