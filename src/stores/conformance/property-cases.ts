/**
 * Properties (fast-check, the memory store as the model): random commit sequences decide
 * exactly as the model, and random concurrent commits keep every invariant. fast-check is an
 * optional peer dependency, loaded only when these tests run.
 */
import { strict as assert } from 'node:assert';
import type { StoreCommit } from '../../core/store.js';
import { createMemoryStore } from '../memory/memory-store.js';
import { assertValidChain } from './conformance-assert.js';
import { type ConformanceTest, freshTenant } from './conformance-fixtures.js';
import {
  buildWrite,
  commandArbitraries,
  type FastCheck,
  SCOPES,
  SLOTS,
  settle,
} from './property-model.js';

/** Loads fast-check, or says exactly what to install. */
async function loadFastCheck(): Promise<FastCheck> {
  try {
    return await import('fast-check');
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code !== 'ERR_MODULE_NOT_FOUND' && code !== 'MODULE_NOT_FOUND') throw error;
    throw new Error(
      'The store conformance properties need fast-check, an optional peer dependency of sideguard: run `npm install --save-dev fast-check@^4`, or skip the two property tests with a reason (runStoreConformance({ skip })).',
      { cause: error },
    );
  }
}

/** Registers the property cases; each run uses `propertyRuns` fast-check runs. */
export function registerPropertyCases(test: ConformanceTest, propertyRuns: number): void {
  test(
    'a random sequence of commits decides exactly as the memory model, the chain verifies and revisions count applied writes',
    async (store) => {
      const fc = await loadFastCheck();
      const arbitraries = commandArbitraries(fc);
      await fc.assert(
        fc.asyncProperty(arbitraries.commands, async (commands) => {
          const tenant = freshTenant('prop');
          const model = createMemoryStore();
          const applied = new Map<string, number>();
          for (const command of commands) {
            const write = await buildWrite(model, tenant, command);
            const [actual, expected] = await Promise.all([
              settle(store.commit(write)),
              settle(model.commit(write)),
            ]);
            assert.deepStrictEqual(actual, expected);
            if (actual.kind === 'committed' && write.proposal !== undefined) {
              const id = write.proposal.record.proposal;
              applied.set(id, (applied.get(id) ?? 0) + 1);
            }
          }
          for (const slot of SLOTS) {
            const stored = await store.getProposal(tenant, slot);
            assert.deepStrictEqual(stored, await model.getProposal(tenant, slot));
            assert.strictEqual(stored?.revision ?? 0, applied.get(slot) ?? 0);
            assert.deepStrictEqual(
              await store.listEvidence(tenant, slot),
              await model.listEvidence(tenant, slot),
            );
          }
          for (const scope of SCOPES) {
            assert.deepStrictEqual(
              await store.getEffectClaim(tenant, scope),
              await model.getEffectClaim(tenant, scope),
            );
          }
          const ledger = await store.readLedger({ tenant });
          assert.deepStrictEqual(ledger, await model.readLedger({ tenant }));
          assertValidChain(ledger);
        }),
        { numRuns: propertyRuns },
      );
    },
    { timeoutMs: 120_000 },
  );

  test(
    'random commits issued concurrently keep the chain valid, revisions equal to applied writes and at most one claim holder',
    async (store) => {
      const fc = await loadFastCheck();
      const arbitraries = commandArbitraries(fc);
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.array(arbitraries.command, { minLength: 1, maxLength: 8 }), {
            minLength: 1,
            maxLength: 5,
          }),
          async (rounds) => {
            const tenant = freshTenant('prop-concurrent');
            const applied = new Map<string, number>();
            let events = 0;
            for (const round of rounds) {
              const writes = await Promise.all(
                round.map((command) => buildWrite(store, tenant, command)),
              );
              const results = await Promise.all(writes.map((write) => settle(store.commit(write))));
              for (const [index, result] of results.entries()) {
                const write = writes[index] as StoreCommit;
                if (result.kind !== 'committed') continue;
                events += result.events.length;
                if (write.proposal !== undefined) {
                  const id = write.proposal.record.proposal;
                  applied.set(id, (applied.get(id) ?? 0) + 1);
                }
              }
            }
            for (const slot of SLOTS) {
              assert.strictEqual(
                (await store.getProposal(tenant, slot))?.revision ?? 0,
                applied.get(slot) ?? 0,
              );
            }
            const ledger = await store.readLedger({ tenant });
            assert.strictEqual(ledger.length, events);
            assertValidChain(ledger);
            for (const scope of SCOPES) {
              const claim = await store.getEffectClaim(tenant, scope);
              if (claim !== undefined) {
                assert.strictEqual(
                  (await store.getProposal(tenant, claim.proposal))?.effectScope,
                  scope,
                );
              }
            }
          },
        ),
        { numRuns: Math.max(1, Math.floor(propertyRuns / 2)) },
      );
    },
    { timeoutMs: 120_000 },
  );
}
