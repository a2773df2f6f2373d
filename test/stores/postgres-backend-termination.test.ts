/**
 * A PostgreSQL backend terminated at any moment never takes the host process down (issue 8,
 * window 6): the store runs in a forked victim process, the test terminates its backends with
 * `pg_terminate_backend` while idle in the pool, while the pool hands a new connection over,
 * and mid-transaction, then checks the victim is alive and every answer is definite.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { POSTGRES_SCHEMA_VERSION } from '../../src/stores/postgres/postgres-migrations.js';
import { type PostgresProxy, startPostgresProxy } from '../support/fake-postgres.js';
import {
  connectClient,
  freshTestSchema,
  postgresTestUrl,
  type TestSchema,
  withHeadLocked,
} from '../support/postgres.js';
import { buildWorker } from './fixtures/build-worker.js';
import type { VictimReply, VictimRequest } from './fixtures/store-victim.js';

const url = await postgresTestUrl();
const victimPath = url === undefined ? '' : buildWorker('store-victim');

type Operation = VictimRequest extends infer R
  ? R extends { id: number }
    ? Omit<R, 'id'>
    : never
  : never;

/** A forked process holding a store; `ask` runs one operation there. */
interface Victim {
  readonly application: string;
  ask(operation: Operation): Promise<VictimReply>;
  /** Resolves with the exit code if the process died (it should not). */
  readonly died: Promise<number | null>;
  alive(): boolean;
  stop(): Promise<void>;
}

async function startVictim(): Promise<Victim> {
  const child: ChildProcess = fork(victimPath, [], { stdio: ['ignore', 'inherit', 'pipe', 'ipc'] });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  let exited = false;
  const died = new Promise<number | null>((resolve) => {
    child.once('exit', (code) => {
      exited = true;
      resolve(code);
    });
  });
  const waiting = new Map<number, (reply: VictimReply) => void>();
  child.on('message', (reply: VictimReply) => waiting.get(reply.id)?.(reply));
  let next = 0;
  const ask = (operation: Operation): Promise<VictimReply> => {
    next += 1;
    const id = next;
    return new Promise<VictimReply>((resolve, reject) => {
      waiting.set(id, resolve);
      void died.then((code) =>
        reject(
          new Error(`the victim process died (exit ${code}) during ${operation.op}:\n${stderr}`),
        ),
      );
      child.send({ ...operation, id });
    });
  };
  await new Promise<void>((resolve) => waiting.set(0, () => resolve()));
  return {
    application: `victim_${randomBytes(5).toString('hex')}`,
    ask,
    died,
    alive: () => !exited,
    async stop() {
      if (exited) return;
      child.kill('SIGKILL');
      await died;
    },
  };
}

function withApplication(base: string, application: string): string {
  const target = new URL(base);
  target.searchParams.set('application_name', application);
  return target.toString();
}

function expectDefinite(reply: VictimReply, codes: readonly string[]): void {
  if (reply.ok) return;
  expect(reply.error.name, reply.error.message).toBe('StoreUnavailableError');
  expect(codes).toContain(reply.error.code);
  expect(reply.error.applied).toBe(false);
}

describe.skipIf(url === undefined)('a terminated PostgreSQL backend never crashes the host', () => {
  let run: TestSchema;
  let admin: pg.Client;
  const victims: Victim[] = [];
  beforeAll(async () => {
    run = freshTestSchema(url as string, 'stores_kill');
    admin = await connectClient(url as string);
  });
  afterAll(async () => {
    await Promise.all(victims.map((victim) => victim.stop()));
    await admin.end();
    await run.drop();
  });

  const open = async (schema = run.schema, base = url as string): Promise<Victim> => {
    const victim = await startVictim();
    victims.push(victim);
    const reply = await victim.ask({
      op: 'open',
      config: { connectionString: withApplication(base, victim.application), schema },
    });
    expect(reply).toMatchObject({ ok: true, result: 'opened' });
    return victim;
  };

  /** Backends of the victim, optionally only those waiting on a lock. */
  const backends = async (victim: Victim, waitingOnLock = false): Promise<number[]> => {
    const rows = await admin.query<{ pid: number }>(
      `SELECT pid FROM pg_stat_activity WHERE application_name = $1
       AND ($2::boolean IS FALSE OR wait_event_type = 'Lock')`,
      [victim.application, waitingOnLock],
    );
    return rows.rows.map((row) => row.pid);
  };

  /** Waits (bounded by the test timeout) until the victim has a backend waiting on a lock. */
  const lockWaiter = async (victim: Victim): Promise<number> => {
    for (;;) {
      const [pid] = await backends(victim, true);
      if (pid !== undefined) return pid;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };

  const terminate = (pid: number) => admin.query('SELECT pg_terminate_backend($1)', [pid]);

  /** Runs `operation` while the tenant's chain head is locked and terminates its backend. */
  const terminatedWhileLocked = (victim: Victim, tenant: string, operation: Operation) =>
    withHeadLocked(url as string, run.schema, tenant, async () => {
      const answer = victim.ask(operation);
      await terminate(await lockWaiter(victim));
      return answer;
    });

  it('terminated while idle in the pool: the process lives, the next commit is definite and the one after lands', async () => {
    const victim = await open();
    const tenant = 'tenant-idle';
    expect(await victim.ask({ op: 'seed', tenant })).toMatchObject({ result: 'committed' });
    const idle = await backends(victim);
    expect(idle.length).toBeGreaterThan(0);
    for (const pid of idle) await terminate(pid);
    const first = await victim.ask({ op: 'read', tenant });
    expectDefinite(first, ['store_connection_lost']);
    const admitted = await victim.ask({ op: 'admit', tenant });
    expectDefinite(admitted, ['store_connection_lost']);
    if (!admitted.ok) {
      expect(await victim.ask({ op: 'admit', tenant })).toMatchObject({ result: 'committed' });
    }
    expect(await victim.ask({ op: 'read', tenant })).toMatchObject({ result: 'executing' });
    expect(victim.alive()).toBe(true);
  });

  it('terminated while the pool hands a new connection over: the process lives and the commit answers definitely', async () => {
    const proxy: PostgresProxy = await startPostgresProxy(url as string, admin);
    try {
      const victim = await open(run.schema, proxy.url);
      const tenant = 'tenant-handover';
      expect(await victim.ask({ op: 'seed', tenant })).toMatchObject({ result: 'committed' });
      // Drop the idle connection, so a commit soon has to open (and be handed) a new one.
      for (const pid of await backends(victim)) await terminate(pid);
      let handedOver = false;
      const delivered = proxy.terminateNextAtHandOver().then(() => {
        handedOver = true;
      });
      // The first commit may still meet the dead idle connection (a definite error); the
      // one after it opens the new connection the proxy terminates during the hand-over.
      let admitted = await victim.ask({ op: 'admit', tenant });
      if (!handedOver) {
        expectDefinite(admitted, ['store_connection_lost']);
        admitted = await victim.ask({ op: 'admit', tenant });
      }
      await delivered;
      expectDefinite(admitted, ['store_connection_lost', 'store_unreachable']);
      const again = admitted.ok ? admitted : await victim.ask({ op: 'admit', tenant });
      expect(again).toMatchObject({ ok: true, result: 'committed' });
      expect(await victim.ask({ op: 'read', tenant })).toMatchObject({ result: 'executing' });
      expect(victim.alive()).toBe(true);
    } finally {
      await proxy.close();
    }
  });

  it('terminated mid-transaction while a commit waits on the chain head: not applied, nothing stored, the retry lands', async () => {
    const victim = await open();
    const tenant = 'tenant-mid-commit';
    expect(await victim.ask({ op: 'seed', tenant })).toMatchObject({ result: 'committed' });
    const admitted = await terminatedWhileLocked(victim, tenant, { op: 'admit', tenant });
    expect(admitted.ok).toBe(false);
    expectDefinite(admitted, ['store_connection_lost']);
    expect(await victim.ask({ op: 'read', tenant })).toMatchObject({ result: 'authorized' });
    expect(await victim.ask({ op: 'admit', tenant })).toMatchObject({ result: 'committed' });
    expect(victim.alive()).toBe(true);
  });

  it('terminated mid-transaction in truncateLedger: the process lives, the call is definite, the store works on', async () => {
    const victim = await open();
    const tenant = 'tenant-mid-truncate';
    expect(await victim.ask({ op: 'seed', tenant })).toMatchObject({ result: 'committed' });
    const truncated = await terminatedWhileLocked(victim, tenant, { op: 'truncate', tenant });
    expect(truncated.ok).toBe(false);
    expectDefinite(truncated, ['store_connection_lost']);
    expect(await victim.ask({ op: 'admit', tenant })).toMatchObject({ result: 'committed' });
    expect(victim.alive()).toBe(true);
  });

  it('terminated while migrating a fresh schema: store_unreachable, the process lives, opening again migrates once', async () => {
    const fresh = freshTestSchema(url as string, 'stores_kill_migrate');
    const locker = await connectClient(url as string);
    try {
      const victim = await startVictim();
      victims.push(victim);
      await locker.query('BEGIN');
      await locker.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [
        `sideguard.migrate.${fresh.schema}`,
      ]);
      const opening = victim.ask({
        op: 'open',
        config: {
          connectionString: withApplication(url as string, victim.application),
          schema: fresh.schema,
        },
      });
      await terminate(await lockWaiter(victim));
      const opened = await opening;
      expect(opened.ok).toBe(false);
      expectDefinite(opened, ['store_unreachable', 'store_connection_lost']);
      await locker.query('ROLLBACK');
      const reopened = await victim.ask({
        op: 'open',
        config: { connectionString: url as string, schema: fresh.schema },
      });
      expect(reopened).toMatchObject({ ok: true, result: 'opened' });
      const versions = await admin.query(
        `SELECT version FROM "${fresh.schema}".schema_migrations ORDER BY version`,
      );
      expect(versions.rows.map((row) => row.version)).toEqual(
        Array.from({ length: POSTGRES_SCHEMA_VERSION }, (_, index) => index + 1),
      );
      expect(victim.alive()).toBe(true);
    } finally {
      await locker.end();
      await fresh.drop();
    }
  });
});
