#!/usr/bin/env node
/**
 * Where a PostgreSQL action's time goes (issue 14): round trips, transactions and statements per
 * `guard.run` on the PostgreSQL store at concurrency 1, CPU and wall time per action, and the
 * bare single-row INSERT transaction rate measured in the same run; then concurrency 64
 * (4 processes × 16 callers, one tenant and eight tenants) against 64 connections doing bare
 * INSERT transactions. Imports the built package (dist/); a measurement, never a test.
 *
 *   node bench/pg-round-trips.mjs [--seconds 2] [--runs 3] [--no-c64] [--no-c1]
 *
 * Counting wraps `pg.Client.prototype.query` in this process: one call is one round trip; its
 * statements are counted by the `;\n` separators the store joins them with; a transaction is a
 * `BEGIN` … `COMMIT`/`ROLLBACK` or a round trip outside one (an implicit transaction).
 */
import { fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { z } from 'zod';
import { createDevelopmentKeyRing, createGuard, defineAction } from '../dist/index.js';
import { createPostgresStore } from '../dist/stores/postgres/index.js';

const here = fileURLToPath(import.meta.url);
const URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const PROCESSES = 4;
const CALLERS_PER_PROCESS = 16;

const args = process.argv.slice(2);
const option = (name, fallback) => {
  const at = args.indexOf(`--${name}`);
  return at === -1 ? fallback : Number(args[at + 1]);
};
const SECONDS = option('seconds', 2);
const RUNS = option('runs', 3);

// ------------------------------------------------------------------ counting

const counts = { roundTrips: 0, transactions: 0, statements: 0, byKind: {} };
const inTransaction = new WeakSet();

function countQuery(client, text) {
  counts.roundTrips += 1;
  const statements = text.split(';\n').map((part) => part.trim());
  counts.statements += statements.length;
  const kind = statements
    .map((part) => part.split(/\s/, 1)[0].toUpperCase())
    .join('+')
    .replace(/(SAVEPOINT\+(INSERT|WITH|UPDATE)(\+INSERT)*\+?)+/g, 'SAVEPOINT+writes+')
    .concat(statements.length === 1 ? ` ${/FROM\s+(\S+)/i.exec(text)?.[1] ?? ''}` : '');
  counts.byKind[kind] = (counts.byKind[kind] ?? 0) + 1;
  const first = statements[0].toUpperCase();
  const last = statements.at(-1).toUpperCase();
  const opens = first.startsWith('BEGIN');
  const ends = last === 'COMMIT' || (last.startsWith('ROLLBACK') && !last.includes(' TO '));
  if (opens || !inTransaction.has(client)) counts.transactions += 1;
  if (opens) inTransaction.add(client);
  if (ends) inTransaction.delete(client);
}

function installCounter() {
  const original = pg.Client.prototype.query;
  pg.Client.prototype.query = function counted(config, ...rest) {
    const text = typeof config === 'string' ? config : config?.text;
    if (typeof text === 'string') countQuery(this, text);
    return original.call(this, config, ...rest);
  };
}

function snapshotCounts() {
  return { ...counts, byKind: { ...counts.byKind } };
}

function perAction(before, after, actions) {
  const per = (key) => (after[key] - before[key]) / actions;
  const byKind = {};
  for (const [kind, value] of Object.entries(after.byKind)) {
    const delta = value - (before.byKind[kind] ?? 0);
    if (delta > 0) byKind[kind] = Number((delta / actions).toFixed(2));
  }
  return {
    roundTrips: per('roundTrips'),
    transactions: per('transactions'),
    statements: per('statements'),
    byKind,
  };
}

// ------------------------------------------------------------------ workloads

function noopAction() {
  const receipt = (context) => ({
    id: `noop_${context.providerIdempotencyKey.slice(3, 27)}`,
    provider: 'noop',
  });
  return defineAction({
    type: { namespace: 'bench', name: 'noop', version: 1 },
    input: z.object({ effect: z.string(), requestId: z.string() }),
    protectedFields: ['effect'],
    policy: () => ({ decision: 'allow', reason: 'bench_allows' }),
    async execute(_input, context) {
      return { kind: 'accepted', receipt: receipt(context) };
    },
    async verify(_input, context) {
      return { kind: 'present', receipt: receipt(context) };
    },
  });
}

/** `callers` loops calling `call()` for `durationMs`; the rate and CPU per completed call. */
async function drive(callers, durationMs, call) {
  let completed = 0;
  let failed = 0;
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  const deadline = started + durationMs;
  const loop = async () => {
    while (performance.now() < deadline) {
      try {
        if (await call()) completed += 1;
        else failed += 1;
      } catch {
        failed += 1;
      }
    }
  };
  await Promise.all(Array.from({ length: callers }, loop));
  const elapsedMs = performance.now() - started;
  const cpu = process.cpuUsage(cpuBefore);
  return {
    completed,
    failed,
    elapsedMs,
    perSecond: (completed / elapsedMs) * 1000,
    cpuMicrosPerCall: completed === 0 ? 0 : (cpu.user + cpu.system) / completed,
  };
}

async function openGuard(schema, connections) {
  const store = await createPostgresStore({
    connectionString: URL,
    schema,
    maxConnections: connections,
  });
  return { store, guard: createGuard({ store, keyRing: createDevelopmentKeyRing() }) };
}

function actionCall(guard, action, tenants, label) {
  let sequence = 0;
  return async () => {
    const id = `${label}-${sequence}`;
    const tenant = `rt-tenant-${sequence % tenants}`;
    sequence += 1;
    const outcome = await guard.run(action, {
      tenant,
      principal: 'bench',
      input: { effect: id, requestId: id },
    });
    return outcome.outcome === 'verified';
  };
}

/** One single-row INSERT transaction (autocommit), the same row size every time. */
function bareCall(pool, schema) {
  const payload = 'x'.repeat(100);
  return async () => {
    await pool.query(`INSERT INTO ${schema}.bare_inserts (payload) VALUES ($1)`, [payload]);
    return true;
  };
}

// ------------------------------------------------------------------ child processes (c64)

async function childMain() {
  const spec = JSON.parse(process.argv[3]);
  let call;
  let close;
  if (spec.kind === 'bare') {
    const pool = new pg.Pool({ connectionString: URL, max: CALLERS_PER_PROCESS });
    call = bareCall(pool, spec.schema);
    close = () => pool.end();
  } else {
    const { store, guard } = await openGuard(spec.schema, CALLERS_PER_PROCESS);
    call = actionCall(guard, noopAction(), spec.tenants, `${spec.label}-${process.pid}`);
    close = () => store.close();
  }
  // Warm up, then wait for the parent's start so all processes measure the same interval.
  await drive(CALLERS_PER_PROCESS, 300, call);
  process.send({ kind: 'ready' });
  process.once('message', async () => {
    const result = await drive(CALLERS_PER_PROCESS, spec.durationMs, call);
    await close();
    process.send({ kind: 'done', result }, () => process.exit(0));
  });
}

async function measureProcesses(spec) {
  const children = Array.from({ length: PROCESSES }, () =>
    fork(here, ['--child', JSON.stringify(spec)], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    }),
  );
  const next = (child, kind) =>
    new Promise((resolve, reject) => {
      child.once('message', (message) =>
        message.kind === kind ? resolve(message) : reject(new Error(JSON.stringify(message))),
      );
      child.once('exit', (code) => code !== 0 && reject(new Error(`child exited ${code}`)));
    });
  await Promise.all(children.map((child) => next(child, 'ready')));
  const done = children.map((child) => next(child, 'done'));
  for (const child of children) child.send({ kind: 'start' });
  const results = (await Promise.all(done)).map((message) => message.result);
  return {
    perSecond: results.reduce((sum, result) => sum + result.perSecond, 0),
    failed: results.reduce((sum, result) => sum + result.failed, 0),
    cpuMicrosPerCall: median(results.map((result) => result.cpuMicrosPerCall)),
  };
}

// ------------------------------------------------------------------ parent

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

const round = (value, digits = 0) => Number(value.toFixed(digits));

async function measureC1(schema, durationMs) {
  installCounter();
  const pool = new pg.Pool({ connectionString: URL, max: 1 });
  const bare = bareCall(pool, schema);
  const { store, guard } = await openGuard(schema, 10);
  const action = noopAction();
  const call = actionCall(guard, action, 1, `c1-${randomBytes(3).toString('hex')}`);
  await drive(1, 300, call);
  await drive(1, 300, bare);
  const bareRuns = [];
  const actionRuns = [];
  let totals;
  for (let run = 0; run < RUNS; run += 1) {
    bareRuns.push(await drive(1, durationMs, bare));
    const before = snapshotCounts();
    const result = await drive(1, durationMs, call);
    actionRuns.push({ ...result, ...perAction(before, snapshotCounts(), result.completed) });
    totals = actionRuns.at(-1);
  }
  await store.close();
  await pool.end();
  const bareRate = median(bareRuns.map((run) => run.perSecond));
  const actionRate = median(actionRuns.map((run) => run.perSecond));
  return {
    bareInsertsPerSecond: round(bareRate),
    actionsPerSecond: round(actionRate),
    ratio: round(actionRate / bareRate, 3),
    msPerAction: round(1000 / actionRate, 2),
    cpuMicrosPerAction: round(median(actionRuns.map((run) => run.cpuMicrosPerCall))),
    bareCpuMicrosPerInsert: round(median(bareRuns.map((run) => run.cpuMicrosPerCall))),
    roundTripsPerAction: round(totals.roundTrips, 2),
    transactionsPerAction: round(totals.transactions, 2),
    statementsPerAction: round(totals.statements, 2),
    roundTripsByKind: totals.byKind,
    runs: {
      bare: bareRuns.map((run) => round(run.perSecond)),
      actions: actionRuns.map((run) => round(run.perSecond)),
    },
  };
}

async function measureC64(schema, durationMs) {
  const rows = { bare: [], oneTenant: [], eightTenants: [] };
  for (let run = 0; run < RUNS; run += 1) {
    rows.bare.push(await measureProcesses({ kind: 'bare', schema, durationMs }));
    for (const [name, tenants] of [
      ['oneTenant', 1],
      ['eightTenants', 8],
    ]) {
      const label = `c64-${name}-${run}`;
      rows[name].push(
        await measureProcesses({ kind: 'actions', schema, durationMs, tenants, label }),
      );
    }
  }
  const rate = (name) => median(rows[name].map((row) => row.perSecond));
  const bare = rate('bare');
  return {
    bareInsertsPerSecond: round(bare),
    oneTenant: {
      actionsPerSecond: round(rate('oneTenant')),
      ratio: round(rate('oneTenant') / bare, 3),
    },
    eightTenants: {
      actionsPerSecond: round(rate('eightTenants')),
      ratio: round(rate('eightTenants') / bare, 3),
    },
    cpuMicrosPerAction: round(median(rows.oneTenant.map((row) => row.cpuMicrosPerCall))),
    failed: rows.oneTenant.concat(rows.eightTenants).reduce((sum, row) => sum + row.failed, 0),
    runs: Object.fromEntries(
      Object.entries(rows).map(([name, list]) => [name, list.map((row) => round(row.perSecond))]),
    ),
  };
}

async function main() {
  const schema = `sg_rt_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: URL });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  await admin.query(
    `CREATE TABLE ${schema}.bare_inserts (id bigserial PRIMARY KEY, payload text NOT NULL)`,
  );
  const report = {
    date: new Date().toISOString(),
    loadAverageStart: loadavg().map((v) => round(v, 2)),
  };
  try {
    if (!args.includes('--no-c1')) report.c1 = await measureC1(schema, SECONDS * 1000);
    if (!args.includes('--no-c64')) report.c64 = await measureC64(schema, SECONDS * 1000);
  } finally {
    await admin.query(`DROP SCHEMA ${schema} CASCADE`);
    await admin.end();
  }
  report.loadAverageEnd = loadavg().map((v) => round(v, 2));
  console.log(JSON.stringify(report, null, 2));
}

if (args[0] === '--child') await childMain();
else await main();
