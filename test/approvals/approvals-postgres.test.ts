/**
 * The approvals service on the PostgreSQL store: the decisive rules (M-of-N with server-built
 * evidence, approving twice, a deny racing an approve, operator resolution) hold on it as on
 * SQLite. Skips with a printed reason without PostgreSQL; CI requires it.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { ApprovalsError } from '../../src/approvals/index.js';
import { createPostgresStore } from '../../src/stores/postgres/postgres-store.js';
import { freshTestSchema, postgresTestUrl, type TestSchema } from '../support/postgres.js';
import { createApprovalsFixture, TENANT } from './approvals-fixture.js';

const url = await postgresTestUrl();

describe.skipIf(url === undefined)('approvals service on PostgreSQL', () => {
  const schemas: TestSchema[] = [];
  afterAll(async () => {
    await Promise.all(schemas.map((schema) => schema.drop()));
  });

  async function fixture() {
    const schema = freshTestSchema(url as string, 'approvals');
    schemas.push(schema);
    const store = await createPostgresStore({
      connectionString: schema.url,
      schema: schema.schema,
    });
    return createApprovalsFixture({ store });
  }

  it('authorizes with two approvals, refuses a second decision and lets one of a race win', async () => {
    const f = await fixture();
    try {
      const proposal = await f.propose();
      await f.service.approve({ proposal }, await f.login('finance-a'), { reason: 'ok' });
      const twice = await f.service
        .approve({ proposal }, await f.login('finance-a'))
        .catch((e: unknown) => e);
      expect(twice).toBeInstanceOf(ApprovalsError);
      expect((twice as ApprovalsError).code).toBe('already_decided');
      const [approve, deny] = await Promise.allSettled([
        f.service.approve({ proposal }, await f.login('finance-b')),
        f.service.deny({ proposal }, await f.login('finance-c'), { reason: 'no' }),
      ]);
      expect([approve.status, deny.status].sort()).toEqual(['fulfilled', 'rejected']);
      const status = (await f.store.getProposal(TENANT, proposal))?.status;
      expect(status).toBe(approve.status === 'fulfilled' ? 'authorized' : 'denied');
      const recorded = (await f.ledger(proposal)).filter((e) => e.type === 'authority_recorded');
      expect(recorded).toHaveLength(2);
      expect((await f.service.timeline({ proposal }, await f.login('finance-a'))).chain.kind).toBe(
        'valid',
      );
    } finally {
      await f.close();
    }
  });
});
