/**
 * The PostgreSQL store against the store conformance suite, in a fresh schema per run. Skips
 * with a printed reason when no database answers, unless SIDEGUARD_REQUIRE_POSTGRES=1.
 */
import { afterAll, describe, it } from 'vitest';
import { freshTestSchema, postgresTestUrl } from '../../../test/support/postgres.js';
import { runStoreConformance } from '../conformance/store-conformance.js';
import { createPostgresStore } from './postgres-store.js';

const url = await postgresTestUrl();

if (url === undefined) {
  describe.skip('postgres store conformance (no PostgreSQL answering; see the printed reason)', () => {
    it('needs PostgreSQL', () => {});
  });
} else {
  const run = freshTestSchema(url, 'case');
  afterAll(() => run.drop());
  runStoreConformance({
    describe,
    it,
    name: 'postgres',
    newStore: () =>
      createPostgresStore({ connectionString: url, schema: run.schema, maxConnections: 8 }),
  });
}
