/**
 * Erasure leaves nothing recoverable in the PostgreSQL table files once the documented
 * maintenance step ran (issue 8, window 8b; decision 025). The test reads the tables' files
 * (heap and TOAST, after a CHECKPOINT) with `pg_read_binary_file`: before the purge the erased
 * envelope is still there (a dead row version), after `purgeErased()` it is in no
 * file of the schema's tables, while the other snapshots read back intact. What it does not
 * prove: WAL segments, archives, backups and replicas (see the README) are not searched.
 */
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ProposalRecord } from '../../src/core/store.js';
import {
  POSTGRES_MIGRATIONS,
  POSTGRES_SCHEMA_VERSION,
} from '../../src/stores/postgres/postgres-migrations.js';
import { createPostgresStore } from '../../src/stores/postgres/postgres-store.js';
import {
  addOutput,
  eraseProposal,
  expectEachFound,
  expectSnapshots,
  randomEnvelope,
  seedWithSnapshots,
} from '../support/erasure.js';
import {
  connectClient,
  freshTestSchema,
  postgresTestUrl,
  type TestSchema,
} from '../support/postgres.js';
import { sampleProposal } from '../support/store-records.js';

const url = await postgresTestUrl();
const TENANT = 'tenant-erasure';

describe.skipIf(url === undefined)('PostgreSQL erasure and the purge', () => {
  let admin: pg.Client;
  const schemas: TestSchema[] = [];
  beforeAll(async () => {
    admin = await connectClient(url as string);
  });
  afterAll(async () => {
    await Promise.all(schemas.map((schema) => schema.drop()));
    await admin.end();
  });

  const fresh = (label: string): TestSchema => {
    const schema = freshTestSchema(url as string, label);
    schemas.push(schema);
    return schema;
  };

  /** The files of every table of `schema` (heap and TOAST), as paths in the data directory. */
  const tableFiles = async (schema: string): Promise<string[]> => {
    const rows = await admin.query<{ heap: string; toast: string | null }>(
      `SELECT pg_relation_filepath(c.oid) AS heap,
              CASE WHEN c.reltoastrelid = 0 THEN NULL ELSE pg_relation_filepath(c.reltoastrelid) END AS toast
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname = $1 AND c.relkind = 'r'`,
      [schema],
    );
    return rows.rows.flatMap((row) => (row.toast === null ? [row.heap] : [row.heap, row.toast]));
  };

  /** Which of `paths` hold any needle, read from disk after a CHECKPOINT. */
  const holding = async (paths: readonly string[], searched: readonly Buffer[]) => {
    await admin.query('CHECKPOINT');
    const hits: string[] = [];
    for (const path of paths) {
      const file = await admin.query<{ bytes: Buffer | null }>(
        `SELECT pg_read_binary_file($1::text, 0, (pg_stat_file($1::text, true)).size, true) AS bytes`,
        [path],
      );
      const bytes = file.rows[0]?.bytes ?? Buffer.alloc(0);
      if (searched.some((needle) => bytes.includes(needle))) hits.push(path);
    }
    return hits;
  };

  it('an erased envelope stays in a dead row version until the purge, and in no table file after it', async () => {
    const run = fresh('stores_erase');
    const store = await createPostgresStore({
      connectionString: url as string,
      schema: run.schema,
    });
    try {
      const records = await seedWithSnapshots(
        store,
        TENANT,
        Array.from({ length: 30 }, (_, index) => (index === 0 ? 12_000 : 96)),
      );
      for (const index of [0, 5, 11]) {
        records[index] = await addOutput(store, records[index] as ProposalRecord);
      }
      const victims = [records[0], records[11]] as ProposalRecord[];
      const before = await tableFiles(run.schema);
      for (const victim of victims) await eraseProposal(store, victim);
      // Deleted, but each dead row version (and so its wrapped key) is still in a file.
      const searched = await expectEachFound(
        victims,
        async (own) => (await holding(before, own)).length,
      );

      const purge = await store.purgeErased();
      expect(purge.complete).toBe(true);
      expect(purge.detail).toContain('WAL');
      const after = await tableFiles(run.schema);
      expect(await holding([...new Set([...before, ...after])], searched)).toEqual([]);
      await expectSnapshots(store, records, victims);
    } finally {
      await store.close();
    }
  });

  it('migrates a schema-1 schema (snapshots and outputs inside the records); the purge then also rewrites the old record versions', async () => {
    const run = fresh('stores_erase_v1');
    const q = `"${run.schema}"`;
    const records = Array.from({ length: 8 }, (_, index) =>
      sampleProposal(TENANT, `old-${index}`, {
        snapshot: randomEnvelope(index === 2 ? 6_000 : 80),
        // Records written before schema 2 may hold a sealed output too.
        ...(index % 2 === 0 ? { output: randomEnvelope(150) } : {}),
      }),
    );
    await admin.query(`CREATE SCHEMA ${q}`);
    await admin.query((POSTGRES_MIGRATIONS[0] as { sql: (s: string) => string }).sql(q));
    await admin.query(`CREATE TABLE ${q}.schema_migrations (
      version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`);
    await admin.query(`INSERT INTO ${q}.schema_migrations (version, name) VALUES (1, 'v1')`);
    for (const record of records) {
      await admin.query(
        `INSERT INTO ${q}.proposals (tenant, proposal, revision, status, effect_scope, created_at_ms, due_at_ms, record)
         VALUES ($1, $2, 1, 'authorized', $3, $4, NULL, $5)`,
        [TENANT, record.proposal, record.effectScope, record.createdAtMs, JSON.stringify(record)],
      );
    }
    const victims = [records[2], records[5]] as ProposalRecord[];

    const store = await createPostgresStore({
      connectionString: url as string,
      schema: run.schema,
    });
    try {
      const versions = await admin.query(`SELECT max(version) AS v FROM ${q}.schema_migrations`);
      expect(versions.rows[0]).toEqual({ v: POSTGRES_SCHEMA_VERSION });
      await expectSnapshots(store, records, []);
      // The listing columns (schema 3) were filled from the old records.
      const listed = await store.listProposals({ statuses: ['authorized'], tenant: TENANT });
      expect(listed.map((value) => value.proposal)).toEqual(
        records.map((value) => value.proposal).sort(),
      );
      for (const victim of victims) await eraseProposal(store, victim);
      const before = await tableFiles(run.schema);
      const searched = await expectEachFound(
        victims,
        async (own) => (await holding(before, own)).length,
      );
      const purge = await store.purgeErased();
      expect(purge.detail).toContain('proposals');
      const after = await tableFiles(run.schema);
      expect(await holding([...new Set([...before, ...after])], searched)).toEqual([]);
      await expectSnapshots(store, records, victims);
      const flags = await admin.query(`SELECT name FROM ${q}.maintenance`);
      expect(flags.rows).toEqual([]);
    } finally {
      await store.close();
    }
  });
});
