/**
 * The PostgreSQL store's reads as prepared statements (decision 120): the same answers with
 * `preparedStatements` on and off, and a connection replaced after its backend was terminated
 * prepares them again; the durable head read (decision 124) writes no row.
 */

import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  connectClient,
  freshTestSchema,
  postgresTestUrl,
  type TestSchema,
} from '../../../test/support/postgres.js';
import type { GuardStore } from '../../core/store.js';
import { insertCommit, record, seed, updateCommit } from '../conformance/conformance-fixtures.js';
import { createPostgresStore } from './postgres-store.js';

const url = await postgresTestUrl();

/** Every read the prepared statements serve, for one proposal that took its effect claim. */
async function readAll(store: GuardStore, tenant: string) {
  return {
    proposal: await store.getProposal(tenant, 'p-1'),
    byEffect: await store.listProposalsByEffect(tenant, 'support.refund@1#sek-p-1'),
    claim: await store.getEffectClaim(tenant, 'support.refund@1#sek-p-1'),
    evidence: await store.listEvidence(tenant, 'p-1'),
    ledger: await store.readLedger({ tenant }),
    proposalLedger: await store.readLedger({ tenant, proposal: 'p-1', afterSequence: 1 }),
    head: await store.ledgerHead(tenant),
    checkpoint: await store.ledgerCheckpoint(tenant),
  };
}

describe.skipIf(url === undefined)('PostgreSQL prepared reads', () => {
  let run: TestSchema;
  let admin: pg.Client;
  beforeAll(async () => {
    run = freshTestSchema(url as string, 'reads');
    admin = await connectClient(url as string);
  });
  afterAll(async () => {
    await admin.end();
    await run.drop();
  });

  it('answers every read the same with prepared statements on and off, also after its connection was terminated', async () => {
    const open = (preparedStatements: boolean) =>
      createPostgresStore({
        connectionString: url as string,
        schema: run.schema,
        maxConnections: 1,
        applicationName: `sg_reads_${preparedStatements}_${process.pid}`,
        preparedStatements,
      });
    const prepared = await open(true);
    const unnamed = await open(false);
    try {
      const tenant = 'tenant-reads';
      const stored = await seed(prepared, record(tenant, 'p-1'));
      await prepared.commit(updateCommit(stored, { status: 'executing' }));
      await prepared.commit(insertCommit(record(tenant, 'p-2')));
      const expected = await readAll(unnamed, tenant);
      expect(expected.proposal?.status).toBe('executing');
      expect(expected.claim?.proposal).toBe('p-1');
      expect(expected.ledger.map((event) => event.sequence)).toEqual([1, 2, 3]);
      expect(expected.proposalLedger.map((event) => event.sequence)).toEqual([2]);
      expect(await readAll(prepared, tenant)).toStrictEqual(expected);
      await admin.query(
        'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1',
        [`sg_reads_true_${process.pid}`],
      );
      // The first read on the dead connection fails definitely; the next connection prepares
      // the statements again.
      await prepared.getProposal(tenant, 'p-1').catch(() => undefined);
      expect(await readAll(prepared, tenant)).toStrictEqual(expected);
    } finally {
      await prepared.close();
      await unnamed.close();
    }
  });

  it('answers a durable head without writing the head row or taking its lock', async () => {
    const store = await createPostgresStore({
      connectionString: url as string,
      schema: run.schema,
    });
    try {
      const tenant = 'tenant-durable-head';
      expect(await store.ledgerHead(tenant)).toBeUndefined();
      await seed(store, record(tenant, 'p-1'));
      const version = async () =>
        (
          await admin.query<{ xmin: string; sequence: string }>(
            `SELECT xmin::text, sequence::text FROM "${run.schema}".ledger_heads WHERE tenant = $1`,
            [tenant],
          )
        ).rows[0];
      const before = await version();
      // A batch holding the head's lock must not stop the read: hold it from another session.
      await admin.query('BEGIN');
      await admin.query(`SELECT 1 FROM "${run.schema}".ledger_heads WHERE tenant = $1 FOR UPDATE`, [
        tenant,
      ]);
      let head: Awaited<ReturnType<GuardStore['ledgerHead']>>;
      try {
        head = await store.ledgerHead(tenant);
      } finally {
        await admin.query('ROLLBACK');
      }
      expect(head).toMatchObject({ sequence: Number(before?.sequence) });
      // The same row version: nothing was written (a no-op UPDATE would leave a new xmin).
      expect(await version()).toStrictEqual(before);
    } finally {
      await store.close();
    }
  });
});
