/**
 * PostgreSQL connections that drop inside a commit: the caller gets a definite answer (an error
 * saying nothing was stored, or the committed result) and the store is consistent afterwards.
 */
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../src/core/errors.js';
import { verifyLedgerChain } from '../../src/core/ledger.js';
import type { GuardStore, ProposalRecord, StoreCommit } from '../../src/core/store.js';
import { POSTGRES_SCHEMA_VERSION } from '../../src/stores/postgres/postgres-migrations.js';
import {
  createPostgresStore,
  createPostgresStoreWithHooks,
  type PostgresStoreHooks,
} from '../../src/stores/postgres/postgres-store.js';
import { StoreUnavailableError } from '../../src/stores/store-errors.js';
import {
  connectClient,
  freshTestSchema,
  postgresTestUrl,
  type TestSchema,
  terminateWhileSleeping,
} from '../support/postgres.js';
import { BASE_MS, sampleDraft, sampleProposal } from '../support/store-records.js';

const url = await postgresTestUrl();
const record = (tenant: string, id: string) =>
  sampleProposal(tenant, id, { semanticEffectKey: 'sek-1' });
const draft = (proposal: string, revision: number) => sampleDraft(proposal, revision);

/** authorized → executing with the effect claim and one piece of evidence. */
function admission(current: ProposalRecord): StoreCommit {
  return {
    tenant: current.tenant,
    proposal: {
      kind: 'update',
      expectedRevision: current.revision,
      expectedStatus: current.status,
      record: { ...current, status: 'executing', revision: current.revision + 1 },
    },
    claim: { effectScope: current.effectScope, proposal: current.proposal, atMs: BASE_MS },
    evidence: [
      {
        tenant: current.tenant,
        proposal: current.proposal,
        evidenceDigest: 'digest-1',
        authority: 'a',
        decision: 'approve',
        channelAssurance: 'high',
        issuedAtMs: BASE_MS,
        expiresAtMs: BASE_MS + 1,
        recordedAtMs: BASE_MS,
        evidence: {},
      },
    ],
    events: [draft(current.proposal, current.revision + 1)],
  };
}

async function seed(store: GuardStore, tenant: string): Promise<ProposalRecord> {
  const value = record(tenant, 'p-1');
  const result = await store.commit({
    tenant,
    proposal: { kind: 'insert', record: value },
    events: [draft('p-1', 1)],
  });
  expect(result.kind).toBe('committed');
  return value;
}

async function expectUntouched(store: GuardStore, seeded: ProposalRecord): Promise<void> {
  expect(await store.getProposal(seeded.tenant, seeded.proposal)).toStrictEqual(seeded);
  expect(await store.getEffectClaim(seeded.tenant, seeded.effectScope)).toBeUndefined();
  expect(await store.listEvidence(seeded.tenant, seeded.proposal)).toStrictEqual([]);
  const ledger = await store.readLedger({ tenant: seeded.tenant });
  expect(ledger).toHaveLength(1);
  expect(verifyLedgerChain(ledger).kind).toBe('valid');
}

async function expectLost(promise: Promise<unknown>, code: string): Promise<void> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(StoreUnavailableError);
  expect((error as StoreUnavailableError).code, String((error as Error).cause)).toBe(code);
  expect((error as StoreUnavailableError).data).toMatchObject({ applied: false });
  expect((error as Error).message).not.toMatch(/password/i);
}

describe.skipIf(url === undefined)('PostgreSQL connection loss inside a commit', () => {
  let run: TestSchema;
  let admin: pg.Client;
  beforeAll(async () => {
    run = freshTestSchema(url as string, 'connloss');
    admin = await connectClient(url as string);
  });
  afterAll(async () => {
    await admin.end();
    await run.drop();
  });

  const open = (hooks: PostgresStoreHooks) =>
    createPostgresStoreWithHooks(
      { connectionString: url as string, schema: run.schema, maxConnections: 4 },
      hooks,
    );

  it('pg_terminate_backend during the transaction gives store_connection_lost, stores nothing, and the retry commits', async () => {
    let armed = false;
    const store = await open({
      beforeSeal: async (client, pid) => {
        if (!armed) return;
        armed = false;
        const { terminated, error } = await terminateWhileSleeping(admin, client, pid);
        expect(terminated).toBe(true);
        throw error;
      },
    });
    try {
      const seeded = await seed(store, 'tenant-terminate');
      armed = true;
      const started = Date.now();
      await expectLost(store.commit(admission(seeded)), 'store_connection_lost');
      expect(Date.now() - started).toBeLessThan(10_000);
      await expectUntouched(store, seeded);
      const retried = await store.commit(admission(seeded));
      expect(retried.kind).toBe('committed');
      expect((await store.getProposal(seeded.tenant, 'p-1'))?.status).toBe('executing');
      expect((await store.getEffectClaim(seeded.tenant, seeded.effectScope))?.proposal).toBe('p-1');
      const ledger = await store.readLedger({ tenant: seeded.tenant });
      expect(verifyLedgerChain(ledger)).toMatchObject({ kind: 'valid', count: 2 });
    } finally {
      await store.close();
    }
  });

  it('a backend killed while COMMIT is in flight, before it ran, is reported as not applied', async () => {
    let armed = false;
    const store = await open({
      commit: async (client) => {
        if (armed) {
          armed = false;
          await client.query('SELECT pg_terminate_backend(pg_backend_pid())');
        }
        await client.query('COMMIT');
      },
    });
    try {
      const seeded = await seed(store, 'tenant-commit-lost');
      armed = true;
      await expectLost(store.commit(admission(seeded)), 'store_connection_lost');
      await expectUntouched(store, seeded);
    } finally {
      await store.close();
    }
  });

  it('a connection lost right after COMMIT landed returns the committed result, not an error', async () => {
    let armed = false;
    const store = await open({
      commit: async (client) => {
        await client.query('COMMIT');
        if (armed) {
          armed = false;
          throw new Error('Connection terminated unexpectedly');
        }
      },
    });
    try {
      const seeded = await seed(store, 'tenant-commit-landed');
      armed = true;
      const result = await store.commit(admission(seeded));
      expect(result.kind).toBe('committed');
      const ledger = await store.readLedger({ tenant: seeded.tenant });
      expect(result.kind === 'committed' ? result.events : []).toStrictEqual(ledger.slice(1));
      expect((await store.getProposal(seeded.tenant, 'p-1'))?.revision).toBe(2);
    } finally {
      await store.close();
    }
  });

  it('several processes opening a fresh schema at once migrate it exactly once', async () => {
    const fresh = freshTestSchema(url as string, 'migrate');
    try {
      const stores = await Promise.all(
        Array.from({ length: 4 }, () =>
          createPostgresStore({ connectionString: url as string, schema: fresh.schema }),
        ),
      );
      await Promise.all(stores.map((store) => store.close()));
      const rows = await admin.query(
        `SELECT version FROM "${fresh.schema}".schema_migrations ORDER BY version`,
      );
      expect(rows.rows.map((row) => row.version)).toEqual(
        Array.from({ length: POSTGRES_SCHEMA_VERSION }, (_, index) => index + 1),
      );
    } finally {
      await fresh.drop();
    }
  });

  it('a schema written by a newer version is refused with a ConfigurationError naming both versions', async () => {
    const fresh = freshTestSchema(url as string, 'newer');
    try {
      const store = await createPostgresStore({
        connectionString: url as string,
        schema: fresh.schema,
      });
      await store.close();
      await admin.query(
        `INSERT INTO "${fresh.schema}".schema_migrations (version, name) VALUES ($1, 'future')`,
        [POSTGRES_SCHEMA_VERSION + 7],
      );
      const error = await createPostgresStore({
        connectionString: url as string,
        schema: fresh.schema,
      }).then(
        () => undefined,
        (caught: unknown) => caught,
      );
      expect(error).toBeInstanceOf(ConfigurationError);
      expect((error as ConfigurationError).code).toBe('store_schema_newer');
      expect((error as Error).message).toContain(`schema version ${POSTGRES_SCHEMA_VERSION + 7}`);
      expect((error as Error).message).toContain(`supports up to ${POSTGRES_SCHEMA_VERSION}`);
      expect((error as Error).message).toContain(fresh.schema);
    } finally {
      await fresh.drop();
    }
  });

  it('an unreachable database fails with store_unreachable and a URL without the password', async () => {
    const error = await createPostgresStore({
      connectionString: 'postgres://sideguard:secret-pw@127.0.0.1:1/none',
    }).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(StoreUnavailableError);
    expect((error as StoreUnavailableError).code).toBe('store_unreachable');
    expect((error as Error).message).toContain('127.0.0.1:1');
    expect((error as Error).message).not.toContain('secret-pw');
  });
});
