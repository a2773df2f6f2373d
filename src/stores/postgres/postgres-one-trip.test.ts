/**
 * The one-round-trip batch (decision 119): a batch on chains this process wrote last goes as one
 * round trip (one implicit transaction; a lone commit as one statement with parameters, decision
 * 135); a head another process moved, a write that touched no row, a lost connection, a claim
 * another process takes or a lock past the statement timeout each end with exactly the answers
 * the two-round-trip batch (decision 024) gives.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  connectClient,
  freshTestSchema,
  postgresTestUrl,
  type TestSchema,
  withHeadLocked,
} from '../../../test/support/postgres.js';
import { verifyLedgerChain } from '../../core/ledger.js';
import type { GuardStore, ProposalRecord } from '../../core/store.js';
import {
  claimedInsert,
  evidence,
  insertCommit,
  record,
  seed,
  updateCommit,
} from '../conformance/conformance-fixtures.js';
import { StoreUnavailableError } from '../store-errors.js';
import {
  createPostgresStoreWithHooks,
  type PostgresStore,
  type PostgresStoreHooks,
} from './postgres-store.js';

const url = await postgresTestUrl();
/** The test stores' `application_name`, to find their backends in `pg_stat_activity`. */
const APPLICATION = `sg_one_trip_${process.pid}`;
const insert = (value: ProposalRecord) => insertCommit(value);
/** authorized → executing, taking the effect claim. */
const admission = (current: ProposalRecord) => updateCommit(current, { status: 'executing' });

/** A one-round-trip batch: no BEGIN, its first statement moves or locks the chain heads. */
const ONE_TRIP = /^(EXECUTE sg_|WITH (moved|locked) AS)/;
/** A lone commit's one statement (decision 135): a one-round-trip batch of no other statement. */
const ONE_STATEMENT = /^(EXECUTE sg_|WITH moved AS \(UPDATE )(?:(?!;\n)[\s\S])*$/;

/** The tenant's chain is gapless from 1, verifies, and ends at the head the store records. */
async function expectValidChain(store: GuardStore, tenant: string, count: number) {
  const ledger = await store.readLedger({ tenant });
  expect(ledger.map((event) => event.sequence)).toEqual(
    Array.from({ length: count }, (_, index) => index + 1),
  );
  expect(verifyLedgerChain(ledger)).toMatchObject({ kind: 'valid', count });
  expect((await store.ledgerHead(tenant))?.sequence).toBe(count);
}

describe.skipIf(url === undefined)('PostgreSQL one-round-trip batch', () => {
  let run: TestSchema;
  let admin: pg.Client;
  const opened: { store: PostgresStore; pool: pg.Pool }[] = [];
  beforeAll(async () => {
    run = freshTestSchema(url as string, 'one_trip');
    admin = await connectClient(url as string);
  });
  afterAll(async () => {
    for (const { store, pool } of opened) {
      await store.close();
      await pool.end();
    }
    await admin.end();
    await run.drop();
  });

  /**
   * A store on its own pool whose round trips that open a transaction are recorded: the first
   * of a two-round-trip batch (`BEGIN` …) and every one-round-trip batch.
   */
  const open = async (
    statementTimeoutMs = 30_000,
    connections = 4,
    hooks: PostgresStoreHooks = {},
  ) => {
    const pool = new pg.Pool({
      connectionString: url as string,
      max: connections,
      statement_timeout: statementTimeoutMs,
      application_name: APPLICATION,
    });
    pool.on('error', () => undefined);
    const transactions: string[] = [];
    /** Every round trip that commits (one-trip batches and two-trip seals alike). */
    const commits: string[] = [];
    const patched = new WeakSet<pg.PoolClient>();
    pool.on('acquire', (client) => {
      if (patched.has(client)) return;
      patched.add(client);
      const query = client.query.bind(client) as (...args: unknown[]) => unknown;
      (client as { query: unknown }).query = (...args: unknown[]) => {
        const [first] = args as [unknown];
        const config = first as { text?: unknown } | undefined;
        const text =
          typeof first === 'string' ? first : typeof config?.text === 'string' ? config.text : '';
        if (/^BEGIN/.test(text) || ONE_TRIP.test(text)) transactions.push(text);
        if (/COMMIT$/.test(text) || ONE_TRIP.test(text)) commits.push(text);
        return query(...args);
      };
    });
    const store = await createPostgresStoreWithHooks({ pool, schema: run.schema }, hooks);
    opened.push({ store, pool });
    return { store, transactions, commits, pool };
  };

  /** The statements a one-connection pool prepared with SQL, optionally dropped (as a pooler). */
  const preparedBySql = async (pool: pg.Pool, deallocate: boolean) => {
    const client = await pool.connect();
    try {
      const rows = await client.query<{ name: string }>(
        'SELECT name FROM pg_prepared_statements WHERE from_sql',
      );
      const names = rows.rows.map((row) => row.name);
      for (const name of deallocate ? names : []) await client.query(`DEALLOCATE ${name}`);
      return names;
    } finally {
      client.release();
    }
  };

  /** The texts a one-connection pool prepared with SQL, by name (without `PREPARE … AS`). */
  const preparedTexts = async (pool: pg.Pool) => {
    const client = await pool.connect();
    try {
      const rows = await client.query<{ name: string; statement: string }>(
        'SELECT name, statement FROM pg_prepared_statements WHERE from_sql',
      );
      return new Map(
        rows.rows.map((row) => [row.name, row.statement.replace(/^PREPARE \w+ AS /, '')]),
      );
    } finally {
      client.release();
    }
  };

  /** Waits until one of the test stores' backends waits on a lock; false after ~5 s. */
  const untilWaitingOnLock = async () => {
    for (let tries = 0; tries < 250; tries += 1) {
      const waiting = await admin.query(
        `SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND application_name = $1`,
        [APPLICATION],
      );
      if (waiting.rows.length > 0) return true;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return false;
  };

  /** Inserts one proposal per batch, so the process trusts the tenant's head after two. */
  async function trusted(store: GuardStore, tenant: string, ids: readonly string[]) {
    const values: ProposalRecord[] = [];
    for (const id of ids) values.push(await seed(store, record(tenant, id)));
    return values;
  }

  it('a batch on a chain this process wrote last is one round trip, one implicit transaction without BEGIN or COMMIT', async () => {
    const { store, transactions } = await open();
    const tenant = 'tenant-one-trip';
    const [p1] = (await trusted(store, tenant, ['p-1', 'p-2'])) as [ProposalRecord];
    transactions.length = 0;
    const results = await Promise.all([
      store.commit(admission(p1)),
      store.commit(insert(record(tenant, 'p-3'))),
    ]);
    expect(results.map((result) => result.kind)).toEqual(['committed', 'committed']);
    expect(transactions).toHaveLength(1);
    expect(transactions[0]).toMatch(/^EXECUTE sg_/);
    expect(transactions[0]).not.toMatch(/BEGIN|COMMIT/);
    const ledger = await store.readLedger({ tenant });
    expect(ledger.slice(2)).toStrictEqual(
      results.flatMap((result) => (result.kind === 'committed' ? result.events : [])),
    );
    await expectValidChain(store, tenant, 4);
    expect((await store.getEffectClaim(tenant, p1.effectScope))?.proposal).toBe('p-1');
  });

  it('an all-deferred batch commits with synchronous_commit off, one or two round trips, one statement or several alike; a batch with a synced commit does not (decision 124)', async () => {
    const { store, commits, pool } = await open(30_000, 1);
    const tenant = 'tenant-deferred';
    const deferred = { durability: 'deferred' } as const;
    const OFF = /SET LOCAL synchronous_commit = off;\nCOMMIT$/;
    const OFF_ONE_TRIP = /;\nSET LOCAL synchronous_commit = off$/;
    const OFF_ONE_STATEMENT = /set_config\('synchronous_commit', 'off', true\)$/;
    // Not yet trusted: the two-round-trip batch.
    await store.commit({ ...insert(record(tenant, 'p-1')), ...deferred });
    expect(commits.at(-1)).toMatch(OFF);
    await store.commit(insert(record(tenant, 'p-2')));
    expect(commits.at(-1)).not.toMatch(/synchronous_commit/);
    await trusted(store, tenant, ['p-3', 'p-4']);
    commits.length = 0;
    // Trusted: one round trip; a lone commit as one statement.
    await store.commit({ ...insert(record(tenant, 'p-5')), ...deferred });
    expect(commits).toHaveLength(1);
    expect(commits[0]).toMatch(ONE_STATEMENT);
    await store.commit(insert(record(tenant, 'p-6')));
    expect(commits[1]).toMatch(ONE_STATEMENT);
    // The one statement runs prepared: its text (with set_config or without) is on the server.
    const prepared = await preparedTexts(pool);
    const nameOf = (text: string | undefined) => /^EXECUTE (sg_\w+)/.exec(text ?? '')?.[1];
    expect(prepared.get(nameOf(commits[0]) ?? '')).toMatch(OFF_ONE_STATEMENT);
    expect(prepared.get(nameOf(commits[1]) ?? '')).not.toMatch(/synchronous_commit/);
    const both = await Promise.all([
      store.commit({ ...insert(record(tenant, 'p-7')), ...deferred }),
      store.commit({ ...insert(record(tenant, 'p-8')), ...deferred }),
    ]);
    expect(both.map((result) => result.kind)).toEqual(['committed', 'committed']);
    expect(commits).toHaveLength(3);
    expect(commits[2]).toMatch(ONE_TRIP);
    expect(commits[2]).toMatch(OFF_ONE_TRIP);
    const mixed = await Promise.all([
      store.commit({ ...insert(record(tenant, 'p-9')), ...deferred }),
      store.commit(insert(record(tenant, 'p-10'))),
    ]);
    expect(mixed.map((result) => result.kind)).toEqual(['committed', 'committed']);
    expect(commits).toHaveLength(4);
    expect(commits[3]).not.toMatch(/synchronous_commit/);
    await expectValidChain(store, tenant, 10);
  });

  it('a batch over two trusted tenants is one round trip and seals each chain from its own head', async () => {
    const { store, transactions } = await open();
    await trusted(store, 'tenant-pair-a', ['a-1', 'a-2']);
    await trusted(store, 'tenant-pair-b', ['b-1', 'b-2', 'b-3']);
    transactions.length = 0;
    const results = await Promise.all([
      store.commit(insert(record('tenant-pair-b', 'b-4'))),
      store.commit(insert(record('tenant-pair-a', 'a-3'))),
      store.commit(insert(record('tenant-pair-b', 'b-5'))),
    ]);
    expect(transactions).toHaveLength(1);
    expect(
      results.map((result) =>
        result.kind === 'committed' ? result.events.map((event) => event.sequence) : [],
      ),
    ).toEqual([[4], [3], [5]]);
    await expectValidChain(store, 'tenant-pair-a', 3);
    await expectValidChain(store, 'tenant-pair-b', 5);
  });

  it('a lone commit travels as one statement: an unlisted claimed insert with two evidence items is one round trip of one statement; a listed effect or a held claim refuses its commit alone, decided in two (decisions 131, 135)', async () => {
    const { store, transactions } = await open();
    const tenant = 'tenant-one-statement';
    await trusted(store, tenant, ['p-1', 'p-2']);
    transactions.length = 0;
    const value = record(tenant, 'p-3', { semanticEffectKey: 'e-3' });
    const items = [evidence(tenant, 'p-3', 'd-1'), evidence(tenant, 'p-3', 'd-2', 'authority:b')];
    const landed = await store.commit({
      ...claimedInsert(value),
      evidence: items,
      onlyIfEffectUnlisted: true,
    });
    expect(landed.kind).toBe('committed');
    expect(transactions).toHaveLength(1);
    // The head move, the commit's five writes and the append as one statement, no BEGIN.
    expect(transactions[0]).toMatch(ONE_STATEMENT);
    expect(await store.listEvidence(tenant, 'p-3')).toStrictEqual(items);
    expect((await store.getEffectClaim(tenant, value.effectScope))?.proposal).toBe('p-3');
    expect((await store.getProposal(tenant, 'p-3'))?.status).toBe('executing');
    await expectValidChain(store, tenant, 4);
    transactions.length = 0;
    const results = await Promise.all([
      store.commit({
        ...insertCommit(record(tenant, 'p-4', { semanticEffectKey: 'e-3' })),
        onlyIfEffectUnlisted: true,
      }),
      store.commit(claimedInsert(record(tenant, 'p-5', { semanticEffectKey: 'e-3' }))),
      store.commit(insert(record(tenant, 'p-6'))),
    ]);
    expect(results).toStrictEqual([
      { kind: 'effect_listed' },
      { kind: 'effect_claimed', owner: 'p-3' },
      expect.objectContaining({ kind: 'committed' }),
    ]);
    expect(transactions).toHaveLength(2);
    expect(transactions[0]).toMatch(ONE_TRIP);
    expect(transactions[1]).toMatch(/^BEGIN/);
    expect(await store.getProposal(tenant, 'p-4')).toBeUndefined();
    expect(await store.getProposal(tenant, 'p-5')).toBeUndefined();
    await expectValidChain(store, tenant, 5);
  });

  it('the two-round-trip batch sends each commit’s writes as one counted statement: a held claim and a listed effect are refused alone, a clean commit with two evidence items lands (decision 131)', async () => {
    // A hook between the round trips keeps every batch on the two-round-trip path.
    const { store, transactions } = await open(30_000, 4, { beforeSeal: async () => undefined });
    const tenant = 'tenant-two-trip-counted';
    const held = record(tenant, 'p-1', { semanticEffectKey: 'e-1' });
    expect((await store.commit(claimedInsert(held))).kind).toBe('committed');
    transactions.length = 0;
    const items = [evidence(tenant, 'p-4', 'd-1'), evidence(tenant, 'p-4', 'd-2', 'authority:b')];
    const results = await Promise.all([
      store.commit(claimedInsert(record(tenant, 'p-2', { semanticEffectKey: 'e-1' }))),
      store.commit({
        ...insertCommit(record(tenant, 'p-3', { semanticEffectKey: 'e-1' })),
        onlyIfEffectUnlisted: true,
      }),
      store.commit({
        ...claimedInsert(record(tenant, 'p-4', { semanticEffectKey: 'e-4' })),
        evidence: items,
        onlyIfEffectUnlisted: true,
      }),
    ]);
    expect(results).toStrictEqual([
      { kind: 'effect_claimed', owner: 'p-1' },
      { kind: 'effect_listed' },
      expect.objectContaining({ kind: 'committed' }),
    ]);
    // BEGIN, the head lock, then a savepoint and one statement per commit.
    expect(transactions[0]?.split(';\n')).toHaveLength(2 + 2 * 3);
    expect(await store.getProposal(tenant, 'p-2')).toBeUndefined();
    expect(await store.getProposal(tenant, 'p-3')).toBeUndefined();
    expect(await store.listEvidence(tenant, 'p-4')).toStrictEqual(items);
    await expectValidChain(store, tenant, 4);
  });

  it('a head whose hash was edited behind the store aborts the round trip (the head is moved only from the exact remembered head); the two-round-trip batch seals onto what it locks (decision 131)', async () => {
    const { store, transactions } = await open();
    const tenant = 'tenant-edited-head';
    await trusted(store, tenant, ['p-1', 'p-2']);
    const edited = 'e'.repeat(64);
    await admin.query(`UPDATE ${run.schema}.ledger_heads SET hash = $2 WHERE tenant = $1`, [
      tenant,
      edited,
    ]);
    transactions.length = 0;
    const result = await store.commit(insert(record(tenant, 'p-3')));
    expect(transactions).toHaveLength(2);
    expect(transactions[1]).toMatch(/^BEGIN/);
    expect(result.kind === 'committed' && result.events[0]?.previousHash).toBe(edited);
    // The edit is evident: the chain breaks where the head was rewritten.
    expect(verifyLedgerChain(await store.readLedger({ tenant })).kind).not.toBe('valid');
  });

  it('statements the connection lost (a pooler deallocated them) fail the round trip alone: the batch lands in two, and they are prepared again', async () => {
    const { store, transactions, pool } = await open(30_000, 1);
    const tenant = 'tenant-deallocated';
    const [p1] = (await trusted(store, tenant, ['p-1', 'p-2'])) as [ProposalRecord];
    // A lone insert goes as one prepared statement, an update as several.
    expect((await store.commit(admission(p1))).kind).toBe('committed');
    expect((await store.commit(insert(record(tenant, 'p-3')))).kind).toBe('committed');
    expect((await preparedBySql(pool, true)).length).toBeGreaterThan(0);
    transactions.length = 0;
    expect((await store.commit(insert(record(tenant, 'p-4')))).kind).toBe('committed');
    expect(transactions).toHaveLength(2);
    expect(transactions[0]).toMatch(ONE_STATEMENT);
    expect(transactions[1]).toMatch(/^BEGIN/);
    // Trusted again after a two-round-trip batch finds the head unmoved; then one round trip,
    // the statement prepared again.
    expect((await store.commit(insert(record(tenant, 'p-5')))).kind).toBe('committed');
    transactions.length = 0;
    expect((await store.commit(insert(record(tenant, 'p-6')))).kind).toBe('committed');
    expect(transactions).toHaveLength(1);
    expect(transactions[0]).toMatch(ONE_STATEMENT);
    expect((await preparedBySql(pool, false)).length).toBeGreaterThan(0);
    // The update's statements, prepared again since, dropped again: EXECUTE fails alone.
    const p3 = (await store.getProposal(tenant, 'p-3')) as ProposalRecord;
    expect((await store.commit(admission(p3))).kind).toBe('committed');
    expect((await preparedBySql(pool, true)).length).toBeGreaterThan(0);
    transactions.length = 0;
    const p4 = (await store.getProposal(tenant, 'p-4')) as ProposalRecord;
    expect((await store.commit(admission(p4))).kind).toBe('committed');
    expect(transactions).toHaveLength(2);
    expect(transactions[0]).toMatch(/^EXECUTE sg_/);
    expect(transactions[1]).toMatch(/^BEGIN/);
    await expectValidChain(store, tenant, 9);
  });

  it('the two-round-trip batch executes prepared writes too, and sends text when they were dropped', async () => {
    // A hook between the round trips keeps every batch on the two-round-trip path.
    const { store, pool } = await open(30_000, 1, { beforeSeal: async () => undefined });
    const tenant = 'tenant-deallocated-two';
    const [p1] = (await trusted(store, tenant, ['p-1', 'p-2'])) as [ProposalRecord];
    expect((await preparedBySql(pool, true)).length).toBeGreaterThan(0);
    const results = await Promise.all([
      store.commit(admission(p1)),
      store.commit(insert(record(tenant, 'p-3'))),
      store.commit(insert(record(tenant, 'p-2'))),
    ]);
    expect(results.map((result) => result.kind)).toEqual([
      'committed',
      'committed',
      'proposal_exists',
    ]);
    await expectValidChain(store, tenant, 4);
    expect((await store.getProposal(tenant, 'p-1'))?.status).toBe('executing');
  });

  it('a head another process moved aborts the round trip whole; the batch lands in two, after the other process’s events', async () => {
    const { store, transactions } = await open();
    const other = await open();
    const tenant = 'tenant-moved-head';
    await trusted(store, tenant, ['p-1', 'p-2']);
    expect((await other.store.commit(insert(record(tenant, 'o-1')))).kind).toBe('committed');
    transactions.length = 0;
    const result = await store.commit(insert(record(tenant, 'p-3')));
    expect(result.kind === 'committed' && result.events.map((event) => event.sequence)).toEqual([
      4,
    ]);
    expect(transactions).toHaveLength(2);
    expect(transactions[1]).toMatch(/^BEGIN/);
    await expectValidChain(store, tenant, 4);
  });

  it('writes that touch no row abort the round trip; each caller gets its own answer, decided in two', async () => {
    const { store, transactions } = await open();
    const tenant = 'tenant-refusals';
    const [p1] = (await trusted(store, tenant, ['p-1', 'p-2'])) as [ProposalRecord];
    transactions.length = 0;
    const winner = admission(p1);
    const results = await Promise.all([
      store.commit(winner),
      store.commit(admission(p1)),
      store.commit(insert(record(tenant, 'p-2'))),
      store.commit(insert(record(tenant, 'p-3'))),
    ]);
    expect(results).toStrictEqual([
      expect.objectContaining({ kind: 'committed' }),
      { kind: 'revision_conflict', current: winner.proposal?.record },
      { kind: 'proposal_exists' },
      expect.objectContaining({ kind: 'committed' }),
    ]);
    expect(transactions[0]).toMatch(/^EXECUTE sg_/);
    expect(transactions.at(-1)).toMatch(/^BEGIN/);
    await expectValidChain(store, tenant, 4);
    expect((await store.getProposal(tenant, 'p-1'))?.revision).toBe(2);
  });

  it('a connection lost while the round trip waits on the chain head is found not to have landed; the retry lands', async () => {
    const { store, transactions } = await open();
    const tenant = 'tenant-lost-one-trip';
    const [p1] = (await trusted(store, tenant, ['p-1', 'p-2'])) as [ProposalRecord];
    transactions.length = 0;
    const settled = await withHeadLocked(url as string, run.schema, tenant, async () => {
      const pending = Promise.allSettled([
        store.commit(admission(p1)),
        store.commit(insert(record(tenant, 'p-3'))),
      ]);
      let killed = false;
      for (let tries = 0; tries < 250 && !killed; tries += 1) {
        const waiting = await admin.query<{ ok: boolean }>(
          `SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity
           WHERE wait_event_type = 'Lock' AND application_name = $1`,
          [APPLICATION],
        );
        killed = waiting.rows.some((row) => row.ok);
        if (!killed) await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(killed).toBe(true);
      return pending;
    });
    expect(transactions[0]).toMatch(/^EXECUTE sg_/);
    for (const outcome of settled) {
      expect(outcome.status).toBe('rejected');
      const error = (outcome as PromiseRejectedResult).reason;
      expect(error).toBeInstanceOf(StoreUnavailableError);
      expect((error as StoreUnavailableError).code).toBe('store_connection_lost');
      expect((error as StoreUnavailableError).data).toMatchObject({ applied: false });
    }
    expect((await store.getProposal(tenant, 'p-1'))?.revision).toBe(1);
    expect(await store.getProposal(tenant, 'p-3')).toBeUndefined();
    await expectValidChain(store, tenant, 2);
    expect((await store.commit(admission(p1))).kind).toBe('committed');
    await expectValidChain(store, tenant, 3);
  });

  it('a chain head held past the statement timeout: store_busy, nothing stored, and the commit lands once it is free', async () => {
    const { store, transactions } = await open(300);
    const tenant = 'tenant-busy-one-trip';
    await trusted(store, tenant, ['p-1', 'p-2']);
    transactions.length = 0;
    const error = await withHeadLocked(url as string, run.schema, tenant, () =>
      store.commit(insert(record(tenant, 'p-3'))).then(
        () => undefined,
        (failure: unknown) => failure,
      ),
    );
    expect(transactions).toHaveLength(1);
    expect(error).toBeInstanceOf(StoreUnavailableError);
    expect((error as StoreUnavailableError).code).toBe('store_busy');
    expect((error as StoreUnavailableError).data).toMatchObject({ applied: false });
    expect(await store.getProposal(tenant, 'p-3')).toBeUndefined();
    expect((await store.commit(insert(record(tenant, 'p-3')))).kind).toBe('committed');
    await expectValidChain(store, tenant, 3);
  });

  it('a backend terminated while a lone commit’s one statement waits on the chain head: found not landed, nothing of it stored; the retry lands (decision 135)', async () => {
    const { store, transactions } = await open();
    const tenant = 'tenant-lost-one-statement';
    await trusted(store, tenant, ['p-1', 'p-2']);
    const value = record(tenant, 'p-3', { semanticEffectKey: 'e-lost' });
    transactions.length = 0;
    const error = await withHeadLocked(url as string, run.schema, tenant, async () => {
      const pending = store.commit(claimedInsert(value)).then(
        () => undefined,
        (failure: unknown) => failure,
      );
      expect(await untilWaitingOnLock()).toBe(true);
      await admin.query(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
         WHERE wait_event_type = 'Lock' AND application_name = $1`,
        [APPLICATION],
      );
      return pending;
    });
    expect(transactions).toHaveLength(1);
    expect(transactions[0]).toMatch(ONE_STATEMENT);
    expect(error).toBeInstanceOf(StoreUnavailableError);
    expect((error as StoreUnavailableError).code).toBe('store_connection_lost');
    expect((error as StoreUnavailableError).data).toMatchObject({ applied: false });
    expect(await store.getProposal(tenant, 'p-3')).toBeUndefined();
    expect(await store.getEffectClaim(tenant, value.effectScope)).toBeUndefined();
    await expectValidChain(store, tenant, 2);
    const retried = await store.commit(claimedInsert(value));
    expect(retried.kind).toBe('committed');
    await expectValidChain(
      store,
      tenant,
      2 + (retried.kind === 'committed' ? retried.events.length : 0),
    );
    expect((await store.getEffectClaim(tenant, value.effectScope))?.proposal).toBe('p-3');
  });

  it('a claim another process takes while a lone claimed insert’s statement waits on it: the statement fails whole and the batch answers effect_claimed in two; a racer that rolls back lets it land in one (decision 135)', async () => {
    const { store, transactions } = await open();
    const tenant = 'tenant-racing-claim';
    await trusted(store, tenant, ['p-1', 'p-2']);
    const race = async (id: string, effect: string, end: 'COMMIT' | 'ROLLBACK') => {
      const value = record(tenant, id, { semanticEffectKey: effect });
      const racer = await connectClient(url as string);
      try {
        await racer.query('BEGIN');
        await racer.query(
          `INSERT INTO ${run.schema}.effect_claims (tenant, effect_scope, proposal, claimed_at_ms)
           VALUES ($1, $2, 'p-racer', 1)`,
          [tenant, value.effectScope],
        );
        transactions.length = 0;
        const pending = store.commit(claimedInsert(value));
        expect(await untilWaitingOnLock()).toBe(true);
        await racer.query(end);
        return { value, result: await pending };
      } finally {
        await racer.end();
      }
    };
    const lost = await race('p-3', 'e-raced', 'COMMIT');
    expect(lost.result).toStrictEqual({ kind: 'effect_claimed', owner: 'p-racer' });
    expect(transactions).toHaveLength(2);
    expect(transactions[0]).toMatch(ONE_STATEMENT);
    expect(transactions[1]).toMatch(/^BEGIN/);
    expect(await store.getProposal(tenant, 'p-3')).toBeUndefined();
    expect((await store.getEffectClaim(tenant, lost.value.effectScope))?.proposal).toBe('p-racer');
    await expectValidChain(store, tenant, 2);
    // Trusted again once the two-round-trip batch found the head unmoved.
    const won = await race('p-4', 'e-free', 'ROLLBACK');
    expect(won.result.kind).toBe('committed');
    expect(transactions).toHaveLength(1);
    expect(transactions[0]).toMatch(ONE_STATEMENT);
    expect((await store.getEffectClaim(tenant, won.value.effectScope))?.proposal).toBe('p-4');
    await expectValidChain(
      store,
      tenant,
      2 + (won.result.kind === 'committed' ? won.result.events.length : 0),
    );
  });
});
