#!/usr/bin/env node
/**
 * Where a PostgreSQL action's time goes (issue 14): round trips, transactions and statements per
 * `guard.run` on the PostgreSQL store at concurrency 1, CPU and wall time per action, and the
 * bare single-row INSERT transaction rate measured in the same run; then concurrency 64
 * (4 processes × 16 callers, one tenant and eight tenants) against 64 connections doing bare
 * INSERT transactions. Imports the built package (dist/); a measurement, never a test.
 *
 *   node bench/pg-round-trips.mjs [--seconds 2] [--runs 3] [--no-c64] [--no-c1]
 *     [--compare <other dist/>] [--server-pid <postmaster pid>]
 *
 * `--compare` measures a second build (e.g. the commit before a change) interleaved with this
 * one, run by run, every other run in reverse order (a contender measured right after another
 * one ran differently: the one measured second was favoured), so both see the same machine.
 * The bare baseline is the stores suite's: `BEGIN; INSERT; COMMIT` of one row (text key, small
 * jsonb) on a connection held for the transaction. `--server-pid` adds the CPU time PostgreSQL's
 * processes (the postmaster's children, from /proc) spent per action: on a shared machine CPU
 * per action is steadier than a rate. Only meaningful when nothing else uses that server.
 *
 * Counting wraps `pg.Client.prototype.query` in this process: one call is one round trip; its
 * statements are counted by the `;\n` separators the store joins them with; a transaction is a
 * `BEGIN` … `COMMIT`/`ROLLBACK` or a round trip outside one (an implicit transaction).
 */
import { fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import pg from 'pg';
import { z } from 'zod';
import { bareInsertTransaction } from './suites/kit/postgres-bare.mjs';

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
const SERVER_PID = option('server-pid', 0);
const textOption = (name) => {
  const at = args.indexOf(`--${name}`);
  return at === -1 ? undefined : resolve(args[at + 1]);
};
const DISTS = {
  current: resolve(here, '..', '..', 'dist'),
  ...(textOption('compare') === undefined ? {} : { compared: textOption('compare') }),
};

/** The guard and the PostgreSQL store from one build. */
async function loadBuild(dist) {
  const root = await import(pathToFileURL(`${dist}/index.js`).href);
  const postgres = await import(pathToFileURL(`${dist}/stores/postgres/index.js`).href);
  return { ...root, createPostgresStore: postgres.createPostgresStore };
}

/** CPU seconds the children of the postmaster `pid` have used (0 without one). */
function serverCpuSeconds(pid) {
  if (pid === 0) return 0;
  let ticks = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[1]) !== pid && Number(entry) !== pid) continue;
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // The process ended while we listed it.
    }
  }
  return ticks / 100;
}

// ------------------------------------------------------------------ counting

const counts = {
  roundTrips: 0,
  transactions: 0,
  statements: 0,
  writeTransactions: 0,
  /** From sending BEGIN to COMMIT's answer: how long a write transaction holds its locks. */
  writeTransactionMs: 0,
  byKind: {},
};
const inTransaction = new WeakSet();
const openedAt = new WeakMap();

/** Counts a round trip; returns a callback for its answer when it ends a write transaction. */
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
  if (opens) {
    inTransaction.add(client);
    openedAt.set(client, performance.now());
  }
  if (ends) inTransaction.delete(client);
  const started = openedAt.get(client);
  if (!ends || started === undefined) return undefined;
  openedAt.delete(client);
  return () => {
    counts.writeTransactions += 1;
    counts.writeTransactionMs += performance.now() - started;
  };
}

function installCounter() {
  const original = pg.Client.prototype.query;
  pg.Client.prototype.query = function counted(config, ...rest) {
    const text = typeof config === 'string' ? config : config?.text;
    const answered = typeof text === 'string' ? countQuery(this, text) : undefined;
    const result = original.call(this, config, ...rest);
    if (answered !== undefined) result?.then?.(answered, answered);
    return result;
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
  const writes = after.writeTransactions - before.writeTransactions;
  return {
    roundTrips: per('roundTrips'),
    transactions: per('transactions'),
    statements: per('statements'),
    writeTransactions: per('writeTransactions'),
    writeTransactionMs:
      writes === 0 ? 0 : (after.writeTransactionMs - before.writeTransactionMs) / writes,
    byKind,
  };
}

// ------------------------------------------------------------------ workloads

function noopAction({ defineAction }) {
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

/**
 * Warm-up per process, counted in calls (capped in time): V8 optimises by work done, and a guard
 * process's CPU per action falls for its first ~800 actions; 300 ms at ~150 actions/s left it cold.
 */
const WARMUP_CALLS = 1_500;
const WARMUP_MAX_MS = 20_000;

/**
 * `callers` loops calling `call()` for `durationMs` (or until `maxCalls` calls were made); the
 * rate and CPU per completed call.
 */
async function drive(callers, durationMs, call, maxCalls = Number.POSITIVE_INFINITY) {
  let completed = 0;
  let failed = 0;
  const serverBefore = serverCpuSeconds(SERVER_PID);
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  const deadline = started + durationMs;
  let issued = 0;
  const loop = async () => {
    while (performance.now() < deadline && issued < maxCalls) {
      issued += 1;
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
  const serverMicros = (serverCpuSeconds(SERVER_PID) - serverBefore) * 1e6;
  return {
    completed,
    failed,
    elapsedMs,
    perSecond: (completed / elapsedMs) * 1000,
    cpuMicrosPerCall: completed === 0 ? 0 : (cpu.user + cpu.system) / completed,
    serverCpuMicrosPerCall: completed === 0 ? 0 : serverMicros / completed,
  };
}

async function openGuard(build, schema, connections) {
  const store = await build.createPostgresStore({
    connectionString: URL,
    schema,
    maxConnections: connections,
  });
  const keyRing = build.createDevelopmentKeyRing();
  return { store, guard: build.createGuard({ store, keyRing }) };
}

/**
 * `guard.run` of a new effect on one of `tenants` tenants named `<label>-tenant-<i>` (processes
 * given the same label share them); effect ids are unique per process.
 */
function actionCall(guard, action, tenants, label) {
  let sequence = 0;
  const nonce = `${process.pid}-${randomBytes(3).toString('hex')}`;
  return async () => {
    const id = `${label}-${nonce}-${sequence}`;
    const tenant = `${label}-tenant-${sequence % tenants}`;
    sequence += 1;
    const outcome = await guard.run(action, {
      tenant,
      principal: 'bench',
      input: { effect: id, requestId: id },
    });
    return outcome.outcome === 'verified';
  };
}

/**
 * The stores suite's baseline (`bench/suites/kit/postgres-bare.mjs`): `BEGIN; INSERT` one row
 * (text key, small jsonb) `; COMMIT` on a connection held for the transaction.
 */
function bareCall(pool, schema) {
  const nonce = `${process.pid}-${randomBytes(3).toString('hex')}`;
  let sequence = 0;
  return async () => {
    const id = `bare-${nonce}-${sequence}`;
    sequence += 1;
    const client = await pool.connect();
    try {
      await bareInsertTransaction(client, schema, id);
      return true;
    } finally {
      client.release();
    }
  };
}

// ------------------------------------------------------------------ child processes (c64)

async function childMain() {
  const spec = JSON.parse(process.argv[3]);
  installCounter();
  let call;
  let close;
  if (spec.kind === 'bare') {
    const pool = new pg.Pool({ connectionString: URL, max: CALLERS_PER_PROCESS });
    call = bareCall(pool, spec.schema);
    close = () => pool.end();
  } else {
    const build = await loadBuild(spec.dist);
    const { store, guard } = await openGuard(build, spec.schema, CALLERS_PER_PROCESS);
    call = actionCall(guard, noopAction(build), spec.tenants, spec.label);
    close = () => store.close();
  }
  // Warm up, then wait for the parent's start so all processes measure the same interval.
  await drive(CALLERS_PER_PROCESS, WARMUP_MAX_MS, call, WARMUP_CALLS);
  process.send({ kind: 'ready' });
  process.once('message', async () => {
    const before = snapshotCounts();
    const driven = await drive(CALLERS_PER_PROCESS, spec.durationMs, call);
    const result = { ...driven, ...perAction(before, snapshotCounts(), driven.completed) };
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
  const completed = results.reduce((sum, result) => sum + result.completed, 0);
  const cpu = results.reduce((sum, result) => sum + result.cpuMicrosPerCall * result.completed, 0);
  const mean = (key) => results.reduce((sum, result) => sum + result[key], 0) / results.length;
  return {
    perSecond: results.reduce((sum, result) => sum + result.perSecond, 0),
    failed: results.reduce((sum, result) => sum + result.failed, 0),
    cpuMicrosPerCall: completed === 0 ? 0 : cpu / completed,
    roundTrips: mean('roundTrips'),
    writeTransactions: mean('writeTransactions'),
    writeTransactionMs: mean('writeTransactionMs'),
  };
}

// ------------------------------------------------------------------ parent

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

const round = (value, digits = 0) => Number(value.toFixed(digits));

/** One build's guard at concurrency 1, its round trips counted. */
async function c1Contender(name, dist, schema) {
  const build = await loadBuild(dist);
  const { store, guard } = await openGuard(build, schema, 10);
  const call = actionCall(guard, noopAction(build), 1, `c1-${name}`);
  await drive(1, WARMUP_MAX_MS, call, WARMUP_CALLS);
  const runs = [];
  return {
    name,
    runs,
    async measure(durationMs) {
      const before = snapshotCounts();
      const result = await drive(1, durationMs, call);
      runs.push({ ...result, ...perAction(before, snapshotCounts(), result.completed) });
    },
    close: () => store.close(),
  };
}

function summariseC1(contender, bareRate) {
  const { runs } = contender;
  const rate = median(runs.map((run) => run.perSecond));
  const last = runs.at(-1);
  return {
    actionsPerSecond: round(rate),
    ratio: round(rate / bareRate, 3),
    msPerAction: round(1000 / rate, 2),
    cpuMicrosPerAction: round(median(runs.map((run) => run.cpuMicrosPerCall))),
    serverCpuMicrosPerAction: round(median(runs.map((run) => run.serverCpuMicrosPerCall))),
    roundTripsPerAction: round(last.roundTrips, 2),
    transactionsPerAction: round(last.transactions, 2),
    writeTransactionMs: round(median(runs.map((run) => run.writeTransactionMs)), 2),
    statementsPerAction: round(last.statements, 2),
    roundTripsByKind: last.byKind,
    runs: runs.map((run) => round(run.perSecond)),
  };
}

async function measureC1(schema, durationMs) {
  installCounter();
  const pool = new pg.Pool({ connectionString: URL, max: 1 });
  const bare = bareCall(pool, schema);
  await drive(1, WARMUP_MAX_MS, bare, WARMUP_CALLS);
  const contenders = [];
  for (const [name, dist] of Object.entries(DISTS)) {
    contenders.push(await c1Contender(name, dist, schema));
  }
  const bareRuns = [];
  for (let run = 0; run < RUNS; run += 1) {
    // Every other run in reverse order, so no contender is always measured right after another.
    const order = [{ bare: true }, ...contenders];
    for (const contender of run % 2 === 0 ? order : order.reverse()) {
      if (contender.bare) bareRuns.push(await drive(1, durationMs, bare));
      else await contender.measure(durationMs);
    }
  }
  for (const contender of contenders) await contender.close();
  await pool.end();
  const bareRate = median(bareRuns.map((run) => run.perSecond));
  return {
    bareInsertsPerSecond: round(bareRate),
    bareCpuMicrosPerInsert: round(median(bareRuns.map((run) => run.cpuMicrosPerCall))),
    bareServerCpuMicrosPerInsert: round(median(bareRuns.map((run) => run.serverCpuMicrosPerCall))),
    bareRuns: bareRuns.map((run) => round(run.perSecond)),
    ...Object.fromEntries(
      contenders.map((contender) => [contender.name, summariseC1(contender, bareRate)]),
    ),
  };
}

async function measureC64(schema, durationMs) {
  const shapes = [
    ['oneTenant', 1],
    ['eightTenants', 8],
  ];
  const rows = { bare: [] };
  for (let run = 0; run < RUNS; run += 1) {
    const order = [
      ['bare'],
      ...Object.entries(DISTS).flatMap(([build, dist]) =>
        shapes.map(([shape, tenants]) => [`${build}.${shape}`, dist, tenants]),
      ),
    ];
    // Every other run in reverse order, so no contender is always measured right after another.
    for (const [name, dist, tenants] of run % 2 === 0 ? order : order.reverse()) {
      if (name === 'bare') {
        rows.bare.push(await measureProcesses({ kind: 'bare', schema, durationMs }));
        continue;
      }
      const label = `c64-${name.replace('.', '-')}-${run}`;
      const spec = { kind: 'actions', dist, schema, durationMs, tenants, label };
      rows[name] = [...(rows[name] ?? []), await measureProcesses(spec)];
    }
  }
  const bare = median(rows.bare.map((row) => row.perSecond));
  const summary = (list) => {
    const rate = median(list.map((row) => row.perSecond));
    return {
      actionsPerSecond: round(rate),
      ratio: round(rate / bare, 3),
      cpuMicrosPerAction: round(median(list.map((row) => row.cpuMicrosPerCall))),
      roundTripsPerAction: round(median(list.map((row) => row.roundTrips)), 2),
      writeTransactionsPerAction: round(median(list.map((row) => row.writeTransactions)), 2),
      writeTransactionMs: round(median(list.map((row) => row.writeTransactionMs)), 1),
      failed: list.reduce((sum, row) => sum + row.failed, 0),
      runs: list.map((row) => round(row.perSecond)),
    };
  };
  return {
    bareInsertsPerSecond: round(bare),
    bareRuns: rows.bare.map((row) => round(row.perSecond)),
    ...Object.fromEntries(
      Object.entries(rows)
        .filter(([name]) => name !== 'bare')
        .map(([name, list]) => [name, summary(list)]),
    ),
  };
}

async function main() {
  const schema = `sg_rt_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: URL });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  await admin.query(
    `CREATE TABLE ${schema}.bare_inserts (
       id text PRIMARY KEY, tenant text NOT NULL, payload jsonb NOT NULL)`,
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
