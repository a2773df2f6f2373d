/**
 * A frozen or wrong server ends in a definite `StoreUnavailableError`, never in a call that
 * does not return (issue 8, window 6): a port that accepts and never answers, one that answers
 * in another protocol, a server that freezes after the store connected (a partition), a lock
 * held past the statement timeout, and the gate CLI pointed at a port that is not PostgreSQL.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createPostgresStore,
  createPostgresStoreWithHooks,
  type PostgresStoreHooks,
} from '../../src/stores/postgres/postgres-store.js';
import { StoreUnavailableError } from '../../src/stores/store-errors.js';
import { cliPath } from '../support/cli.js';
import {
  type PostgresProxy,
  startBytesServer,
  startHttpServer,
  startPostgresProxy,
  startSilentServer,
  type TestServer,
} from '../support/fake-postgres.js';
import {
  connectClient,
  freshTestSchema,
  postgresTestUrl,
  type TestSchema,
  withHeadLocked,
} from '../support/postgres.js';
import { sampleDraft, sampleProposal } from '../support/store-records.js';

const url = await postgresTestUrl();

async function failure(promise: Promise<unknown>): Promise<StoreUnavailableError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error, String(error)).toBeInstanceOf(StoreUnavailableError);
  return error as StoreUnavailableError;
}

describe('a port that is not a working PostgreSQL', () => {
  const servers: TestServer[] = [];
  afterAll(async () => {
    await Promise.all(servers.map((server) => server.close()));
  });

  it('accepts and never answers: store_unreachable once the connect timeout passes', async () => {
    const silent = await startSilentServer();
    servers.push(silent);
    const error = await failure(
      createPostgresStore({
        connectionString: `postgres://sideguard:pw-secret@127.0.0.1:${silent.port}/x`,
        connectTimeoutMs: 300,
      }),
    );
    expect(error.code).toBe('store_unreachable');
    expect(error.data).toMatchObject({ applied: false });
    expect(error.message).toMatch(/timeout/i);
    expect(error.message).not.toContain('pw-secret');
  });

  it('answers in another protocol and keeps the connection open: store_unreachable naming what it said', async () => {
    const redisLike = await startBytesServer('-ERR unknown command\r\n');
    servers.push(redisLike);
    const error = await failure(
      createPostgresStore({ connectionString: `postgres://127.0.0.1:${redisLike.port}/x` }),
    );
    expect(error.code).toBe('store_unreachable');
    expect(error.message).toContain(`127.0.0.1:${redisLike.port}`);
    expect(error.message).toMatch(/not (a )?PostgreSQL/);
  });

  it('is an HTTP server: store_unreachable', async () => {
    const http = await startHttpServer();
    servers.push(http);
    const error = await failure(
      createPostgresStore({ connectionString: `postgres://127.0.0.1:${http.port}/x` }),
    );
    expect(error.code).toBe('store_unreachable');
  });

  it('sideguard gate --store at that port exits 1 or 2 with one clear line and creates no report', async () => {
    const other = await startBytesServer('HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n');
    servers.push(other);
    const outputDir = mkdtempSync(join(tmpdir(), 'sideguard-gate-unreachable-'));
    try {
      const child = spawn(
        process.execPath,
        [
          cliPath,
          'gate',
          '--store',
          `postgres://127.0.0.1:${other.port}/x`,
          '--output-dir',
          outputDir,
        ],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
      });
      const [code] = (await once(child, 'exit')) as [number | null];
      expect([1, 2]).toContain(code);
      const lines = stderr.trim().split('\n');
      expect(lines, stderr).toHaveLength(1);
      expect(lines[0]).toContain(`127.0.0.1:${other.port}`);
      expect(lines[0]).toMatch(/not (a )?PostgreSQL/);
      expect(existsSync(join(outputDir, 'reports', 'gate.json'))).toBe(false);
    } finally {
      rmSync(outputDir, { recursive: true, force: true });
    }
  });
});

describe.skipIf(url === undefined)('a PostgreSQL that stops answering', () => {
  let run: TestSchema;
  let admin: pg.Client;
  beforeAll(async () => {
    run = freshTestSchema(url as string, 'stores_frozen');
    admin = await connectClient(url as string);
  });
  afterAll(async () => {
    await admin.end();
    await run.drop();
  });

  const seed = (tenant: string, id = 'p-1') => ({
    tenant,
    proposal: { kind: 'insert' as const, record: sampleProposal(tenant, id) },
    events: [sampleDraft(id, 1)],
  });

  /** A store through `proxy`, with short timeouts, whose connections carry `application`. */
  const openThrough = (
    proxy: PostgresProxy,
    application: string,
    hooks: PostgresStoreHooks = {},
  ) => {
    const proxied = new URL(proxy.url);
    proxied.searchParams.set('application_name', application);
    return createPostgresStoreWithHooks(
      {
        connectionString: proxied.toString(),
        schema: run.schema,
        connectTimeoutMs: 2_000,
        queryTimeoutMs: 2_000,
        idleInTransactionTimeoutMs: 2_000,
      },
      hooks,
    );
  };

  /** Waits (bounded by the test timeout) until no backend of `application` is in a transaction. */
  const transactionEnded = async (application: string) => {
    for (;;) {
      const stuck = await admin.query(
        `SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND state LIKE 'idle in transaction%'`,
        [application],
      );
      if (stuck.rows.length === 0) return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };

  it('freezes between commits (a partition): the commit is not applied, a read fails definitely, and after the thaw both work', async () => {
    const proxy = await startPostgresProxy(url as string, admin);
    const store = await openThrough(proxy, `stores_frozen_a_${process.pid}`);
    try {
      expect((await store.commit(seed('tenant-before'))).kind).toBe('committed');
      proxy.freeze();
      const commit = await failure(store.commit(seed('tenant-frozen')));
      expect(commit.code).toBe('store_connection_lost');
      expect(commit.data).toMatchObject({ applied: false });
      const read = await failure(store.getProposal('tenant-before', 'p-1'));
      expect(['store_connection_lost', 'store_unreachable']).toContain(read.code);
      proxy.thaw();
      expect(await store.getProposal('tenant-frozen', 'p-1')).toBeUndefined();
      expect((await store.commit(seed('tenant-frozen'))).kind).toBe('committed');
    } finally {
      proxy.thaw();
      await store.close();
      await proxy.close();
    }
  });

  it('freezes while a batch holds the chain head: outcome unknown, the server ends the stuck transaction, and a re-read shows it did not land', async () => {
    const proxy = await startPostgresProxy(url as string, admin);
    const application = `stores_frozen_b_${process.pid}`;
    let armed = false;
    const store = await openThrough(proxy, application, {
      beforeSeal: async () => {
        if (!armed) return;
        armed = false;
        proxy.freeze();
      },
    });
    try {
      expect((await store.commit(seed('tenant-held'))).kind).toBe('committed');
      armed = true;
      const commit = await failure(store.commit(seed('tenant-held', 'p-2')));
      expect(commit.code).toBe('store_commit_outcome_unknown');
      expect(commit.data).toMatchObject({ applied: 'unknown' });
      // COMMIT never reached the server; its idle-in-transaction timeout rolls the batch back
      // and frees the chain head, so the partition does not block other processes for good.
      await transactionEnded(application);
      proxy.thaw();
      expect(await store.getProposal('tenant-held', 'p-2')).toBeUndefined();
      expect((await store.commit(seed('tenant-held', 'p-2'))).kind).toBe('committed');
    } finally {
      proxy.thaw();
      await store.close();
      await proxy.close();
    }
  });

  it('holds a lock past the statement timeout: store_busy, nothing stored, the commit lands once it is free', async () => {
    const store = await createPostgresStore({
      connectionString: url as string,
      schema: run.schema,
      statementTimeoutMs: 300,
    });
    try {
      expect((await store.commit(seed('tenant-locked'))).kind).toBe('committed');
      const error = await withHeadLocked(url as string, run.schema, 'tenant-locked', () =>
        failure(store.commit(seed('tenant-locked', 'p-2'))),
      );
      expect(error.code).toBe('store_busy');
      expect(error.data).toMatchObject({ applied: false });
      expect(await store.getProposal('tenant-locked', 'p-2')).toBeUndefined();
      expect((await store.commit(seed('tenant-locked', 'p-2'))).kind).toBe('committed');
    } finally {
      await store.close();
    }
  });
});
