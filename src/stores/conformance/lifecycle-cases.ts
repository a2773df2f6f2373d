/** Lifecycle: close() drains what was issued and refuses what comes after. */
import { strict as assert } from 'node:assert';
import {
  type ConformanceTest,
  freshTenant,
  insertCommit,
  record,
  seed,
} from './conformance-fixtures.js';

/** Registers the cases of this concern. */
export function registerLifecycleCases(test: ConformanceTest): void {
  test(
    'close() releases the store and later calls fail',
    async (store) => {
      const tenant = freshTenant('close');
      await seed(store, record(tenant, 'p-1'));
      await store.close();
      await assert.rejects(store.getProposal(tenant, 'p-1'));
      await assert.rejects(store.commit(insertCommit(record(tenant, 'p-2'))));
    },
    { closesStore: true },
  );

  test(
    'commits issued just before close() still settle',
    async (store) => {
      const tenant = freshTenant('close-drain');
      const pending = Array.from({ length: 8 }, (_, index) =>
        store.commit(insertCommit(record(tenant, `p-${index}`))),
      );
      const closing = store.close();
      const results = await Promise.allSettled(pending);
      await closing;
      for (const result of results) {
        assert.match(
          result.status === 'fulfilled' ? result.value.kind : 'rejected',
          /^(committed|rejected)$/,
        );
      }
    },
    { closesStore: true },
  );
}
