/**
 * PostgreSQL group commit (decision 024): commits issued together share one transaction, each
 * decided in its own savepoint, and every caller gets its own definite answer — also when the
 * connection drops in the middle of the batch or around its COMMIT.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyLedgerChain } from '../../src/core/ledger.js';
import type {
  GuardStore,
  ProposalRecord,
  StoreCommit,
  StoreCommitResult,
} from '../../src/core/store.js';
import {
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
const record = sampleProposal;
const draft = (proposal: string, revision: number) =>
  sampleDraft(proposal, revision, { note: "it's a \\ backslash" });

function insert(value: ProposalRecord): StoreCommit {
  return {
    tenant: value.tenant,
    proposal: { kind: 'insert', record: value },
    events: [draft(value.proposal, 1)],
  };
}

/** authorized → executing, taking the effect claim. */
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
    events: [draft(current.proposal, current.revision + 1), draft(current.proposal, 0)],
  };
}

type Settled = { ok: true; result: StoreCommitResult } | { ok: false; error: unknown };
const settle = (promise: Promise<StoreCommitResult>): Promise<Settled> =>
  promise.then(
    (result) => ({ ok: true, result }),
    (error: unknown) => ({ ok: false, error }),
  );

function expectLost(settled: Settled | undefined, code = 'store_connection_lost'): void {
  expect(settled?.ok).toBe(false);
  const error = settled?.ok === false ? settled.error : undefined;
  expect(error).toBeInstanceOf(StoreUnavailableError);
  expect((error as StoreUnavailableError).code, String((error as Error).cause)).toBe(code);
  expect((error as StoreUnavailableError).data).toMatchObject({ applied: false });
}

async function expectChain(store: GuardStore, tenant: string, count: number): Promise<void> {
  const ledger = await store.readLedger({ tenant });
  expect(ledger.map((event) => event.sequence)).toEqual(
    Array.from({ length: count }, (_, index) => index + 1),
  );
  expect(verifyLedgerChain(ledger)).toMatchObject({ kind: 'valid', count });
  expect((await store.ledgerHead(tenant))?.sequence).toBe(count);
}

describe.skipIf(url === undefined)('PostgreSQL group commit', () => {
  let run: TestSchema;
  let admin: pg.Client;
  beforeAll(async () => {
    run = freshTestSchema(url as string, 'group');
    admin = await connectClient(url as string);
  });
  afterAll(async () => {
    await admin.end();
    await run.drop();
  });

  /** A store that counts its batch transactions that sealed events (beforeSeal runs once each). */
  const open = async (hooks: PostgresStoreHooks = {}) => {
    const counter = { batches: 0 };
    const store = await createPostgresStoreWithHooks(
      { connectionString: url as string, schema: run.schema, maxConnections: 4 },
      {
        ...hooks,
        beforeSeal: async (client, pid) => {
          counter.batches += 1;
          await hooks.beforeSeal?.(client, pid);
        },
      },
    );
    return { store, counter };
  };

  async function seed(store: GuardStore, tenant: string, ids: readonly string[]) {
    const values = ids.map((id) => record(tenant, id));
    const results = await Promise.all(values.map((value) => store.commit(insert(value))));
    expect(results.map((result) => result.kind)).toEqual(ids.map(() => 'committed'));
    return values;
  }

  it('commits issued together share one transaction; a refused compare-and-set rolls back alone and the others land', async () => {
    const { store, counter } = await open();
    try {
      const tenant = 'tenant-batch-refusal';
      const [p1, p2] = (await seed(store, tenant, ['p-1', 'p-2'])) as [
        ProposalRecord,
        ProposalRecord,
      ];
      expect(counter.batches).toBe(1);
      const winner = admission(p1);
      const [first, stale, other, fresh, bad] = await Promise.all([
        settle(store.commit(winner)),
        // From the same revision: decided after the first in the same batch, it must lose.
        settle(store.commit(admission(p1))),
        settle(store.commit(admission(p2))),
        settle(store.commit(insert(record(tenant, 'p-3')))),
        // PostgreSQL refuses 1.5 for a bigint column: this commit fails alone.
        settle(store.commit(insert(record(tenant, 'p-4', { createdAtMs: BASE_MS + 0.5 })))),
      ]);
      expect(counter.batches).toBe(2);
      expect(first).toMatchObject({ ok: true, result: { kind: 'committed' } });
      expect(stale).toStrictEqual({
        ok: true,
        result: { kind: 'revision_conflict', current: winner.proposal?.record },
      });
      expect(other).toMatchObject({ ok: true, result: { kind: 'committed' } });
      expect(fresh).toMatchObject({ ok: true, result: { kind: 'committed' } });
      expect(bad.ok).toBe(false);
      expect((bad as { error: StoreUnavailableError }).error).toBeInstanceOf(StoreUnavailableError);
      expect((bad as { error: StoreUnavailableError }).error.code).toBe('store_io_failed');
      expect((bad as { error: StoreUnavailableError }).error.data).toMatchObject({
        applied: false,
      });
      // Committed events are exactly what was stored, in the callers' order, gapless.
      const ledger = await store.readLedger({ tenant });
      const sealed = [first, other, fresh].flatMap((settled) =>
        settled.ok && settled.result.kind === 'committed' ? settled.result.events : [],
      );
      expect(ledger.slice(2)).toStrictEqual(sealed);
      await expectChain(store, tenant, 7);
      expect((await store.getProposal(tenant, 'p-1'))?.revision).toBe(2);
      expect((await store.getEffectClaim(tenant, p1.effectScope))?.proposal).toBe('p-1');
      expect((await store.getProposal(tenant, 'p-2'))?.status).toBe('executing');
      expect(await store.getProposal(tenant, 'p-4')).toBeUndefined();
    } finally {
      await store.close();
    }
  });

  it('a batch spanning two tenants seals each chain from its own head in one transaction', async () => {
    const { store, counter } = await open();
    try {
      await seed(store, 'tenant-span-b', ['b-0']);
      const before = counter.batches;
      const results = await Promise.all([
        store.commit(insert(record('tenant-span-b', 'b-1'))),
        store.commit(insert(record('tenant-span-a', 'a-1'))),
        store.commit(insert(record('tenant-span-b', 'b-2'))),
        store.commit(insert(record('tenant-span-a', 'a-2'))),
        store.commit(insert(record('tenant-span-a', 'a-1'))),
      ]);
      expect(counter.batches - before).toBe(1);
      expect(results.map((result) => result.kind)).toEqual([
        'committed',
        'committed',
        'committed',
        'committed',
        'proposal_exists',
      ]);
      const sequences = results.map((result) =>
        result.kind === 'committed' ? result.events.map((event) => event.sequence) : [],
      );
      expect(sequences).toEqual([[2], [1], [3], [2], []]);
      await expectChain(store, 'tenant-span-a', 2);
      await expectChain(store, 'tenant-span-b', 3);
    } finally {
      await store.close();
    }
  });

  it('a connection terminated mid-batch fails every caller definitely, stores nothing, and the retries land', async () => {
    let armed = false;
    const { store } = await open({
      beforeSeal: async (client, pid) => {
        if (!armed) return;
        armed = false;
        throw (await terminateWhileSleeping(admin, client, pid)).error;
      },
    });
    try {
      const tenant = 'tenant-batch-terminated';
      const [p1, p2] = (await seed(store, tenant, ['p-1', 'p-2'])) as [
        ProposalRecord,
        ProposalRecord,
      ];
      const batch = [admission(p1), admission(p1), admission(p2), insert(record(tenant, 'p-3'))];
      armed = true;
      const settled = await Promise.all(batch.map((write) => settle(store.commit(write))));
      // The refused one too: its refusal rested on a batch-mate's write that never landed.
      for (const outcome of settled) expectLost(outcome);
      expect((await store.getProposal(tenant, 'p-1'))?.revision).toBe(1);
      expect((await store.getProposal(tenant, 'p-2'))?.revision).toBe(1);
      expect(await store.getProposal(tenant, 'p-3')).toBeUndefined();
      expect(await store.getEffectClaim(tenant, p1.effectScope)).toBeUndefined();
      await expectChain(store, tenant, 2);
      const retried = await Promise.all(batch.map((write) => store.commit(write)));
      expect(retried.map((result) => result.kind)).toEqual([
        'committed',
        'revision_conflict',
        'committed',
        'committed',
      ]);
      await expectChain(store, tenant, 7);
    } finally {
      await store.close();
    }
  });

  it('a connection lost while the append and COMMIT are in flight is found not to have landed', async () => {
    // An uncommitted row at the batch's first sequence makes its append wait; the backend is
    // killed while it waits, inside the one round trip that carries the append and COMMIT.
    const blocker = new pg.Client({ connectionString: url });
    blocker.on('error', () => undefined);
    await blocker.connect();
    let armed = false;
    let killing: Promise<{ waited: boolean; killed: boolean | undefined }> = Promise.resolve({
      waited: false,
      killed: false,
    });
    const { store } = await open({
      beforeSeal: async (_client, pid) => {
        if (!armed) return;
        armed = false;
        await blocker.query('BEGIN');
        await blocker.query(
          `INSERT INTO "${run.schema}".ledger_events (tenant, sequence, proposal, hash, event)
           VALUES ('tenant-append-lost', 3, NULL, 'x', '{}')`,
        );
        killing = (async () => {
          let waited = false;
          for (let tries = 0; tries < 250 && !waited; tries += 1) {
            const state = await admin.query(
              `SELECT 1 FROM pg_stat_activity WHERE pid = $1 AND wait_event_type = 'Lock'`,
              [pid],
            );
            waited = state.rowCount === 1;
            if (!waited) await new Promise((resolve) => setTimeout(resolve, 20));
          }
          const killed = await admin.query<{ ok: boolean }>(
            'SELECT pg_terminate_backend($1) AS ok',
            [pid],
          );
          await blocker.query('ROLLBACK');
          return { waited, killed: killed.rows[0]?.ok };
        })();
      },
    });
    try {
      const tenant = 'tenant-append-lost';
      const [p1] = (await seed(store, tenant, ['p-1', 'p-2'])) as [ProposalRecord];
      armed = true;
      const settled = await Promise.all([
        settle(store.commit(admission(p1))),
        settle(store.commit(insert(record(tenant, 'p-3')))),
        settle(store.commit(insert(record(tenant, 'p-1')))),
      ]);
      expect(await killing).toStrictEqual({ waited: true, killed: true });
      for (const outcome of settled) expectLost(outcome);
      expect((await store.getProposal(tenant, 'p-1'))?.revision).toBe(1);
      expect(await store.getProposal(tenant, 'p-3')).toBeUndefined();
      await expectChain(store, tenant, 2);
    } finally {
      await store.close();
      await blocker.end();
    }
  });

  it('a connection lost just after a batch COMMIT landed gives every caller its own result', async () => {
    let armed = false;
    const { store } = await open({
      commit: async (client) => {
        await client.query('COMMIT');
        if (armed) {
          armed = false;
          throw new Error('Connection terminated unexpectedly');
        }
      },
    });
    try {
      const tenant = 'tenant-batch-landed';
      const [p1] = (await seed(store, tenant, ['p-1'])) as [ProposalRecord];
      armed = true;
      const [won, lost, fresh] = await Promise.all([
        store.commit(admission(p1)),
        store.commit(admission(p1)),
        store.commit(insert(record(tenant, 'p-2'))),
      ]);
      expect(won.kind).toBe('committed');
      expect(lost.kind).toBe('revision_conflict');
      expect(fresh.kind).toBe('committed');
      const ledger = await store.readLedger({ tenant });
      expect(ledger.slice(1)).toStrictEqual([
        ...(won.kind === 'committed' ? won.events : []),
        ...(fresh.kind === 'committed' ? fresh.events : []),
      ]);
      await expectChain(store, tenant, 4);
    } finally {
      await store.close();
    }
  });
});
