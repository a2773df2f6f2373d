/**
 * The store conformance suite: one set of behavioural tests (and fast-check properties against
 * the memory store as a model) that every `GuardStore` adapter must pass, third-party ones too.
 * It is framework-neutral: the caller passes its test framework's `describe` and `it`, and the
 * cases assert with `node:assert`.
 */
import type { GuardStore } from '../../core/store.js';
import { registerClaimedInsertCases } from './claimed-insert-cases.js';
import { registerConcurrencyCases } from './concurrency-cases.js';
import type { ConformanceTest } from './conformance-fixtures.js';
import { registerDurabilityCases } from './durability-cases.js';
import { registerEffectClaimCases } from './effect-claim-cases.js';
import { registerEnvelopeCases } from './envelope-cases.js';
import { registerEvidenceCases } from './evidence-cases.js';
import { registerLedgerCases } from './ledger-cases.js';
import { registerLifecycleCases } from './lifecycle-cases.js';
import { registerListingCases } from './listing-cases.js';
import { registerPropertyCases } from './property-cases.js';
import { registerProposalCases } from './proposal-cases.js';
import { registerQueryCases } from './query-cases.js';
import { registerUnlistedInsertCases } from './unlisted-insert-cases.js';

/** Tests an adapter may skip, each group with the reason it cannot pass them. */
export interface StoreConformanceSkip {
  /** Why these tests do not apply to the adapter; must not be empty. */
  readonly reason: string;
  /** Exact test names as registered by the suite. */
  readonly tests: readonly string[];
}

/**
 * A test framework's `it` (or `test`): vitest, jest and `node:test` all fit. The suite calls
 * `it(name, body, timeoutMs)`; frameworks that take no timeout argument ignore it. When the
 * function has an `it.skip`, skipped tests are registered through it.
 */
export interface ConformanceIt {
  (name: string, body: () => Promise<void>, timeoutMs?: number): unknown;
  readonly skip?: (name: string, body: () => void) => unknown;
}

/** Options of {@link runStoreConformance}. */
export interface StoreConformanceOptions {
  /** The adapter's name, used as the top-level `describe`. */
  readonly name: string;
  /**
   * Opens a store for one test. Stores may share data between calls (a database schema): every
   * test uses its own fresh tenant ids, so they never see each other.
   */
  readonly newStore: () => Promise<GuardStore>;
  /** The test framework's `describe` (vitest, jest, mocha or `node:test`). */
  readonly describe: (name: string, body: () => void) => unknown;
  /** The test framework's `it`; see {@link ConformanceIt}. */
  readonly it: ConformanceIt;
  /** Tests to skip, each with a reason. A skip without a reason, or naming no test, throws. */
  readonly skip?: readonly StoreConformanceSkip[];
  /**
   * fast-check runs per property. Each run opens no new store (it uses a fresh tenant). The
   * two property tests need the optional peer `fast-check`; without it they fail saying so.
   * @default 25
   */
  readonly propertyRuns?: number;
}

/** The default timeout of a case, and of a property case, in milliseconds. */
const TIMEOUT_MS = 30_000;
const PROPERTY_TIMEOUT_MS = 120_000;

function skipsByName(options: StoreConformanceOptions): Map<string, string> {
  const skipped = new Map<string, string>();
  for (const group of options.skip ?? []) {
    if (typeof group.reason !== 'string' || group.reason.trim() === '') {
      throw new Error(
        `runStoreConformance(${options.name}): every skip needs a reason; got none for ${JSON.stringify(group.tests)}`,
      );
    }
    if (group.tests.length === 0) {
      throw new Error(
        `runStoreConformance(${options.name}): skip "${group.reason}" names no tests`,
      );
    }
    for (const test of group.tests) skipped.set(test, group.reason);
  }
  return skipped;
}

/**
 * Registers the conformance suite for one adapter with the caller's test framework.
 * @throws Error when a skip has no reason or names a test the suite does not have, or when
 *   `describe`/`it` are missing.
 */
export function runStoreConformance(options: StoreConformanceOptions): void {
  if (typeof options.describe !== 'function' || typeof options.it !== 'function') {
    throw new Error(
      `runStoreConformance(${options.name}): pass your test framework's describe and it, e.g. import { describe, it } from 'node:test' (or 'vitest').`,
    );
  }
  const { describe, it } = options;
  const propertyRuns = options.propertyRuns ?? 25;
  const groups: readonly (readonly [string, (test: ConformanceTest) => void])[] = [
    ['proposals', registerProposalCases],
    ['effect claims', registerEffectClaimCases],
    ['insert and claim in one commit', registerClaimedInsertCases],
    ['insert only if the effect is unlisted', registerUnlistedInsertCases],
    ['authority evidence', registerEvidenceCases],
    ['concurrency', registerConcurrencyCases],
    ['sealed snapshots and outputs', registerEnvelopeCases],
    ['ledger', registerLedgerCases],
    ['durability', registerDurabilityCases],
    ['queries', registerQueryCases],
    ['listing', registerListingCases],
    ['lifecycle', registerLifecycleCases],
    [
      'properties (fast-check, memory store as the model)',
      (test) =>
        registerPropertyCases(
          (name, body, config) => test(name, body, { timeoutMs: PROPERTY_TIMEOUT_MS, ...config }),
          propertyRuns,
        ),
    ],
  ];
  // Collect every name first, so a skip naming an unknown test fails before anything runs,
  // whenever the framework runs describe bodies.
  const names = new Set<string>();
  for (const [, register] of groups) register((name) => names.add(name));
  const skipped = skipsByName(options);
  for (const name of skipped.keys()) {
    if (!names.has(name)) {
      throw new Error(
        `runStoreConformance(${options.name}): skip names an unknown test ${JSON.stringify(name)}`,
      );
    }
  }

  const test: ConformanceTest = (name, body, config = {}) => {
    const reason = skipped.get(name);
    // A store author may skip a named case only with a reason (`options.skip`, checked above to
    // name a real case); the reason stays in the reported title, so a skip is never silent. The
    // stores shipped here skip nothing.
    if (reason !== undefined) {
      const title = `${name} [skipped: ${reason}]`;
      if (typeof it.skip === 'function') it.skip(title, () => undefined);
      else it(title, async () => undefined);
      return;
    }
    const run = async () => {
      const store = await options.newStore();
      try {
        await body(store);
      } finally {
        if (config.closesStore !== true) await store.close();
      }
    };
    it(name, run, config.timeoutMs ?? TIMEOUT_MS);
  };

  describe(`${options.name} store conformance`, () => {
    for (const [group, register] of groups) describe(group, () => register(test));
  });
}
