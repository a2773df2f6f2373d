/**
 * Store benchmark: the disk's raw fdatasync rate, full no-approval guard actions (prepare +
 * execute + verify around a no-op) per second with p50/p99 latency for the memory, SQLite (FULL
 * and NORMAL) and PostgreSQL stores, a duplicate storm, the Powertools idempotency peer on Redis,
 * and peak RSS of every bench process — all in one run, on one disk, loopback only. Several
 * bounded runs per measurement, interleaved so machine drift hits every contender alike.
 */
import { fork, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, fdatasyncSync, mkdirSync, openSync, rmSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { z } from 'zod';
import {
  createDevelopmentKeyRing,
  createGuard,
  createMemoryStore,
  defineAction,
} from '../../dist/index.js';
import { createPostgresStore } from '../../dist/stores/postgres/index.js';
import { createSqliteStore } from '../../dist/stores/sqlite/index.js';

const here = fileURLToPath(import.meta.url);
const root = join(dirname(here), '..', '..');
const tmpRoot = join(root, 'bench', '.tmp');
const WORKER_ROLE = 'sideguard-bench-contender';
const POSTGRES_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const REDIS_URL = 'redis://127.0.0.1:6379';
const TENANT = 'bench-tenant';
/** PostgreSQL at concurrency 64: this many processes × (64 / this) callers each. */
const POSTGRES_PROCESSES = 4;

/** Lengths and counts; `--quick` shrinks them for a smoke check. */
function settings(quick) {
  return quick
    ? { runs: 3, durationMs: 300, warmupMs: 100, syncMs: 300, storms: 2, maxActionsPerRun: 5_000 }
    : {
        runs: 3,
        durationMs: 2_000,
        warmupMs: 300,
        syncMs: 2_000,
        storms: 10,
        maxActionsPerRun: 60_000,
      };
}

// ------------------------------------------------------------------ statistics

function median(values) {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

function percentile(sorted, fraction) {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length - 1, Math.ceil(fraction * sorted.length) - 1)];
}

const round = (value, digits = 0) =>
  value === null || value === undefined ? null : Number(value.toFixed(digits));

/** Median of several runs, with their spread: (max - min) / median. */
function summarise(samples) {
  const rates = samples.map((sample) => sample.perSecond);
  const middle = median(rates);
  return {
    perSecond: round(middle),
    p50Ms: round(median(samples.map((sample) => sample.p50Ms)), 2),
    p99Ms: round(median(samples.map((sample) => sample.p99Ms)), 2),
    runs: rates.map((rate) => round(rate)),
    spreadPercent: middle
      ? round(((Math.max(...rates) - Math.min(...rates)) / middle) * 100, 1)
      : null,
    failed: samples.reduce((sum, sample) => sum + (sample.failed ?? 0), 0),
  };
}

function latencyStats(latencies) {
  const sorted = Float64Array.from(latencies).sort();
  return { p50Ms: percentile(sorted, 0.5), p99Ms: percentile(sorted, 0.99) };
}

// ------------------------------------------------------------------ the contenders

/** The no-op action: its executor and verifier only count and answer. */
function noopAction(counter) {
  const receipt = (context) => ({
    id: `noop_${context.providerIdempotencyKey.slice(3, 27)}`,
    provider: 'noop',
  });
  return defineAction({
    type: { namespace: 'bench', name: 'noop', version: 1 },
    input: z.object({ effect: z.string(), requestId: z.string() }),
    protectedFields: ['effect'],
    policy: () => ({ decision: 'allow', reason: 'bench_allows' }),
    async execute(input, context) {
      count(counter, input.effect);
      return { kind: 'accepted', receipt: receipt(context) };
    },
    async verify(_input, context) {
      return { kind: 'present', receipt: receipt(context) };
    },
  });
}

function newCounter() {
  return { executions: 0, byEffect: new Map() };
}

/** Counts an execution; per effect only for storms, so the map stays small. */
function count(counter, effect) {
  counter.executions += 1;
  if (effect.startsWith('storm-'))
    counter.byEffect.set(effect, (counter.byEffect.get(effect) ?? 0) + 1);
}

/**
 * Runs `call(sequence)` on `concurrency` loops until `durationMs` passed or `maxCalls` were
 * issued; `call` resolves true for a definite success.
 */
async function drive({ concurrency, durationMs, maxCalls, call }) {
  const latencies = [];
  let issued = 0;
  let completed = 0;
  let failed = 0;
  const errors = new Map();
  const started = performance.now();
  const deadline = started + durationMs;
  const loop = async () => {
    while (performance.now() < deadline && issued < maxCalls) {
      const sequence = issued;
      issued += 1;
      const begin = performance.now();
      try {
        if (await call(sequence)) completed += 1;
        else failed += 1;
      } catch (error) {
        failed += 1;
        const name = error?.code ?? error?.name ?? 'Error';
        errors.set(name, (errors.get(name) ?? 0) + 1);
      }
      latencies.push(performance.now() - begin);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, loop));
  const elapsedMs = performance.now() - started;
  return {
    perSecond: (completed / elapsedMs) * 1000,
    completed,
    failed,
    errors: Object.fromEntries(errors),
    elapsedMs,
    latencies,
  };
}

/** One measurement of guard.run in this process. */
async function measureGuard(guard, action, { concurrency, durationMs, maxCalls, label }) {
  const nonce = randomBytes(4).toString('hex');
  const result = await drive({
    concurrency,
    durationMs,
    maxCalls,
    call: async (sequence) => {
      const id = `${label}-${nonce}-${sequence}`;
      const outcome = await guard.run(action, {
        tenant: TENANT,
        principal: 'bench',
        input: { effect: id, requestId: id },
      });
      return outcome.outcome === 'verified';
    },
  });
  const { latencies, ...rest } = result;
  return { ...rest, ...latencyStats(latencies) };
}

/** 64 callers propose one effect at once (each with its own request id). */
async function storm(guard, action, counter, label, callers = 64) {
  const effect = `storm-${label}-${randomBytes(6).toString('hex')}`;
  const latencies = [];
  const outcomes = {};
  let errors = 0;
  await Promise.all(
    Array.from({ length: callers }, async (_, caller) => {
      const begin = performance.now();
      try {
        const result = await guard.run(action, {
          tenant: TENANT,
          principal: 'bench',
          input: { effect, requestId: `${effect}-${caller}` },
        });
        outcomes[result.outcome] = (outcomes[result.outcome] ?? 0) + 1;
      } catch {
        errors += 1;
      }
      latencies.push(performance.now() - begin);
    }),
  );
  return { effects: counter.byEffect.get(effect) ?? 0, latencies, outcomes, errors };
}

// ------------------------------------------------------------------ fdatasync

function measureFdatasync(path, durationMs) {
  const fd = openSync(path, 'w');
  const record = Buffer.alloc(64, 0x61);
  const latencies = [];
  let count = 0;
  const started = performance.now();
  const deadline = started + durationMs;
  try {
    while (performance.now() < deadline && count < 1_000_000) {
      const begin = performance.now();
      writeSync(fd, record);
      fdatasyncSync(fd);
      latencies.push(performance.now() - begin);
      count += 1;
    }
  } finally {
    closeSync(fd);
  }
  const elapsedMs = performance.now() - started;
  return { perSecond: (count / elapsedMs) * 1000, ...latencyStats(latencies) };
}

// ------------------------------------------------------------------ contender processes

/**
 * Child side: one contender (a Sideguard store behind a guard, or the peer) driven by the
 * parent over IPC, so its peak RSS is its own and contenders never share a heap.
 */
async function contenderWorkerMain() {
  const spec = JSON.parse(process.argv[2]);
  const keyRing = createDevelopmentKeyRing();
  const counter = newCounter();
  const action = noopAction(counter);
  let measure;
  let stormOnce;
  let close = async () => {};
  if (spec.kind === 'peer') {
    const peer = await startPeer((message) => console.log(`  ${message}`));
    measure = (options) => measurePeer(peer, options);
    stormOnce = () => peerStorm(peer);
    close = peer.close;
  } else {
    let newGuard;
    if (spec.kind === 'memory') {
      // A fresh store per measurement, so memory stays bounded by one measurement.
      newGuard = () => createGuard({ store: createMemoryStore(), keyRing });
    } else {
      const store =
        spec.kind === 'sqlite'
          ? createSqliteStore({ path: spec.path, synchronous: spec.synchronous })
          : await createPostgresStore({
              connectionString: POSTGRES_URL,
              schema: spec.schema,
              maxConnections: spec.connections,
            });
      const guard = createGuard({ store, keyRing });
      newGuard = () => guard;
      close = () => store.close();
    }
    measure = (options) => measureGuard(newGuard(), action, options);
    stormOnce = (label) => storm(newGuard(), action, counter, label);
  }
  process.on('message', async (message) => {
    try {
      // Collect the previous measurement's garbage first (forked with --expose-gc).
      globalThis.gc?.();
      if (message.kind === 'measure') {
        const result = await measure({
          concurrency: message.concurrency,
          durationMs: message.durationMs,
          maxCalls: message.maxCalls,
          label: `${message.label}-${process.pid}`,
        });
        process.send({ kind: 'measured', result });
      } else if (message.kind === 'storms') {
        const storms = [];
        for (let index = 0; index < message.count; index += 1) {
          storms.push(await stormOnce(`${message.label}-${index}`));
        }
        process.send({ kind: 'stormed', storms });
      } else if (message.kind === 'exit') {
        await close();
        const maxRssMb = process.resourceUsage().maxRSS / 1024;
        process.send({ kind: 'exited', maxRssMb }, () => process.exit(0));
      }
    } catch (error) {
      process.send({
        kind: 'failed',
        error: error instanceof Error ? (error.stack ?? error.message) : String(error),
      });
    }
  });
  process.send({ kind: 'ready' });
}

/** Parent side: `processes` children running one contender; measurements run on all at once. */
function startContender(spec, processes = 1) {
  const children = Array.from({ length: processes }, () =>
    fork(here, [JSON.stringify(spec)], {
      env: { ...process.env, SIDEGUARD_BENCH_ROLE: WORKER_ROLE },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      execArgv: ['--expose-gc'],
    }),
  );
  const next = (child, kind) =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`${spec.kind} worker: no ${kind} within 300 s`));
      }, 300_000);
      const listener = (message) => {
        if (message.kind === 'failed') {
          cleanup();
          reject(new Error(`${spec.kind} worker failed: ${message.error}`));
        } else if (message.kind === kind) {
          cleanup();
          resolve(message);
        }
      };
      const onExit = (code) => {
        cleanup();
        reject(new Error(`${spec.kind} worker exited with ${code} before ${kind}`));
      };
      const cleanup = () => {
        clearTimeout(timer);
        child.off('message', listener);
        child.off('exit', onExit);
      };
      child.on('message', listener);
      child.once('exit', onExit);
    });
  return {
    ready: Promise.all(children.map((child) => next(child, 'ready'))),
    /** `concurrency` callers per process; the rate is the sum over processes. */
    async measure({ concurrency, durationMs, maxCalls, label }) {
      const replies = children.map((child) => next(child, 'measured'));
      for (const child of children)
        child.send({ kind: 'measure', concurrency, durationMs, maxCalls, label });
      const results = (await Promise.all(replies)).map((reply) => reply.result);
      const errors = {};
      for (const result of results) {
        for (const [name, count] of Object.entries(result.errors))
          errors[name] = (errors[name] ?? 0) + count;
      }
      return {
        perSecond: results.reduce((sum, result) => sum + result.perSecond, 0),
        completed: results.reduce((sum, result) => sum + result.completed, 0),
        failed: results.reduce((sum, result) => sum + result.failed, 0),
        errors,
        // Several processes: the median of their p50s and the worst of their p99s.
        p50Ms: median(results.map((result) => result.p50Ms)),
        p99Ms: Math.max(...results.map((result) => result.p99Ms)),
      };
    },
    async storms(count, label) {
      const [first] = children;
      const reply = next(first, 'stormed');
      first.send({ kind: 'storms', count, label });
      return (await reply).storms;
    },
    /** Ends the children; resolves with each one's peak RSS in MB. */
    async stop() {
      const replies = children.map((child) =>
        next(child, 'exited').catch(() => ({ maxRssMb: null })),
      );
      for (const child of children) if (child.connected) child.send({ kind: 'exit' });
      return (await Promise.all(replies)).map((reply) => reply.maxRssMb);
    },
    kill() {
      for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
    },
  };
}

async function postgresReachable() {
  const client = new pg.Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: 3_000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('SELECT 1');
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function dropSchema(schema) {
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  client.on('error', () => undefined);
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  } finally {
    await client.end();
  }
}

// ------------------------------------------------------------------ the Powertools peer

async function connectRedis(createClient) {
  const client = createClient({
    url: REDIS_URL,
    socket: { connectTimeout: 2_000, reconnectStrategy: false },
  });
  client.on('error', () => undefined);
  await client.connect();
  return client;
}

/** Connects to Redis, starting a throwaway server (no persistence) if none answers. */
async function startPeer(log) {
  const { createClient } = await import('@redis/client');
  let client;
  try {
    client = await connectRedis(createClient);
  } catch {
    log('Redis does not answer on 127.0.0.1:6379; starting redis-server');
    const child = spawn(
      'redis-server',
      [
        '--daemonize',
        'yes',
        '--bind',
        '127.0.0.1',
        '-::1',
        '--port',
        '6379',
        '--save',
        '',
        '--appendonly',
        'no',
        '--dir',
        '/var/lib/redis',
        '--logfile',
        '/var/log/redis/ci.log',
      ],
      { stdio: 'ignore' },
    );
    await new Promise((resolve) => child.once('exit', resolve));
    for (let attempt = 0; attempt < 50 && client === undefined; attempt += 1) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      client = await connectRedis(createClient).catch(() => undefined);
    }
    if (client === undefined) throw new Error('redis-server did not start on 127.0.0.1:6379');
  }
  const { makeIdempotent, IdempotencyConfig } = await import('@aws-lambda-powertools/idempotency');
  const { CachePersistenceLayer } = await import('@aws-lambda-powertools/idempotency/cache');
  const config = new IdempotencyConfig({ eventKeyJmesPath: 'effect' });
  // Outside Lambda this is what keeps in-progress records expiring and a concurrent duplicate
  // from taking the record over (REFERENCES.md): the peer at its best.
  config.registerLambdaContext({ getRemainingTimeInMillis: () => 30_000 });
  const counter = newCounter();
  const fn = makeIdempotent(
    async (event) => {
      count(counter, event.effect);
      return { id: `noop_${event.effect}` };
    },
    { persistenceStore: new CachePersistenceLayer({ client }), config },
  );
  return { fn, counter, close: () => client.quit().catch(() => client.destroy?.()) };
}

async function measurePeer(peer, { concurrency, durationMs, maxCalls, label }) {
  const nonce = randomBytes(4).toString('hex');
  const result = await drive({
    concurrency,
    durationMs,
    maxCalls,
    call: async (sequence) => {
      const id = `${label}-${nonce}-${sequence}`;
      const answer = await peer.fn({ effect: id, requestId: id });
      return answer?.id === `noop_${id}`;
    },
  });
  const { latencies, ...rest } = result;
  return { ...rest, ...latencyStats(latencies) };
}

async function peerStorm(peer, callers = 64) {
  const effect = `storm-peer-${randomBytes(6).toString('hex')}`;
  const latencies = [];
  const outcomes = {};
  await Promise.all(
    Array.from({ length: callers }, async (_, caller) => {
      const begin = performance.now();
      try {
        await peer.fn({ effect, requestId: `${effect}-${caller}` });
        outcomes.returned = (outcomes.returned ?? 0) + 1;
      } catch (error) {
        const name = error?.name ?? 'Error';
        outcomes[name] = (outcomes[name] ?? 0) + 1;
      }
      latencies.push(performance.now() - begin);
    }),
  );
  return { effects: peer.counter.byEffect.get(effect) ?? 0, latencies, outcomes, errors: 0 };
}

// ------------------------------------------------------------------ the suite

function summariseStorms(storms) {
  const outcomes = {};
  for (const one of storms) {
    for (const [key, count] of Object.entries(one.outcomes))
      outcomes[key] = (outcomes[key] ?? 0) + count;
  }
  const effects = storms.map((one) => one.effects);
  return {
    storms: storms.length,
    effectsPerStormMax: Math.max(...effects),
    effectsPerStormMin: Math.min(...effects),
    p99Ms: round(latencyStats(storms.flatMap((one) => one.latencies)).p99Ms, 2),
    outcomes,
    errors: storms.reduce((sum, one) => sum + one.errors, 0),
  };
}

/** Benchmark suite entry point (called by bench/run.mjs). */
export async function run({ log = console.log, quick = false } = {}) {
  const config = settings(quick);
  const { runs, durationMs, warmupMs, syncMs, maxActionsPerRun } = config;
  const dir = join(tmpRoot, `stores-${process.pid}-${randomBytes(3).toString('hex')}`);
  mkdirSync(dir, { recursive: true });
  const cleanups = [];
  const skipped = {};
  /** name → { process group, processes }; each contender runs in its own processes. */
  const groups = [];
  const open = (name, spec, processes = 1) => {
    const group = startContender(spec, processes);
    cleanups.push(() => group.kill());
    groups.push({ name, group, processes });
    return group;
  };
  try {
    const memory = open('memory', { kind: 'memory' });
    const sqliteFull = open('sqliteFull', {
      kind: 'sqlite',
      path: join(dir, 'full.db'),
      synchronous: 'full',
    });
    const sqliteNormal = open('sqliteNormal', {
      kind: 'sqlite',
      path: join(dir, 'normal.db'),
      synchronous: 'normal',
    });
    const contenders = [];
    const both = (name, group) => {
      for (const concurrency of [1, 64])
        contenders.push({ name, concurrency, group, perProcess: concurrency });
    };
    both('memory', memory);
    both('sqliteFull', sqliteFull);
    both('sqliteNormal', sqliteNormal);
    const stormers = [
      ['memory', memory],
      ['sqliteFull', sqliteFull],
      ['sqliteNormal', sqliteNormal],
    ];

    const unreachable = await postgresReachable();
    if (unreachable === undefined) {
      const schema = `sg_bench_${randomBytes(5).toString('hex')}`;
      cleanups.push(() => dropSchema(schema));
      // One process for concurrency 1 and the storms; 4 × 16 callers for concurrency 64.
      const single = open('postgres', { kind: 'postgres', schema, connections: 16 });
      await single.ready; // migrates the schema before the others connect
      const spread = open(
        'postgres',
        { kind: 'postgres', schema, connections: 64 / POSTGRES_PROCESSES },
        POSTGRES_PROCESSES,
      );
      contenders.push({ name: 'postgres', concurrency: 1, group: single, perProcess: 1 });
      contenders.push({
        name: 'postgres',
        concurrency: 64,
        group: spread,
        perProcess: 64 / POSTGRES_PROCESSES,
        processes: POSTGRES_PROCESSES,
      });
      stormers.push(['postgres', single]);
    } else {
      skipped.postgres = `PostgreSQL at ${POSTGRES_URL.replace(/:[^:@/]+@/, ':***@')} does not answer: ${unreachable}`;
      log(`stores: PostgreSQL skipped (${skipped.postgres})`);
    }
    const peer = open('powertoolsRedis', { kind: 'peer' });
    both('powertoolsRedis', peer);
    stormers.push(['powertoolsRedis', peer]);

    await Promise.all(groups.map(({ group }) => group.ready));
    log(
      `stores: warming up ${contenders.length} contenders in ${groups.reduce((sum, g) => sum + g.processes, 0)} processes`,
    );
    const measureOnce = (contender, length, label) =>
      contender.group.measure({
        concurrency: contender.perProcess,
        durationMs: length,
        maxCalls: Math.ceil(maxActionsPerRun / (contender.processes ?? 1)),
        label,
      });
    for (const contender of contenders) {
      await measureOnce(contender, warmupMs, `warm-${contender.name}-${contender.concurrency}`);
    }

    const syncSamples = [];
    const samples = new Map(contenders.map((contender) => [contender, []]));
    const stormSamples = {};
    for (let index = 0; index < runs; index += 1) {
      const sync = measureFdatasync(join(dir, 'fdatasync.bin'), syncMs);
      syncSamples.push(sync);
      log(`run ${index + 1}/${runs} fdatasync: ${round(sync.perSecond)}/s`);
      for (const contender of contenders) {
        const sample = await measureOnce(
          contender,
          durationMs,
          `run${index}-${contender.name}-${contender.concurrency}`,
        );
        samples.get(contender).push(sample);
        const errors =
          Object.keys(sample.errors ?? {}).length > 0
            ? ` errors ${JSON.stringify(sample.errors)}`
            : '';
        log(
          `run ${index + 1}/${runs} ${contender.name} c${contender.concurrency}: ${round(sample.perSecond)}/s p50 ${round(sample.p50Ms, 2)} ms p99 ${round(sample.p99Ms, 2)} ms${sample.failed ? ` failed ${sample.failed}` : ''}${errors}`,
        );
      }
      // Duplicate storms: 64 callers, one semantic effect, each with its own request id.
      for (const [name, group] of stormers) {
        stormSamples[name] ??= [];
        stormSamples[name].push(...(await group.storms(config.storms, `${name}-${index}`)));
      }
    }

    const fdatasync = {
      ...summarise(syncSamples),
      p50Ms: round(median(syncSamples.map((sample) => sample.p50Ms)), 3),
      p99Ms: round(median(syncSamples.map((sample) => sample.p99Ms)), 3),
    };
    const actions = {};
    for (const contender of contenders) {
      actions[contender.name] ??= {};
      actions[contender.name][`c${contender.concurrency}`] = {
        ...summarise(samples.get(contender)),
        ...(contender.processes === undefined ? {} : { processes: contender.processes }),
      };
    }
    const storms = Object.fromEntries(
      Object.entries(stormSamples).map(([name, list]) => [name, summariseStorms(list)]),
    );

    const processRss = {};
    for (const { name, group } of groups) {
      processRss[name] = [
        ...(processRss[name] ?? []),
        ...(await group.stop()).map((value) => round(value, 1)),
      ];
    }
    const peakRss = {
      suiteProcessMb: round(process.resourceUsage().maxRSS / 1024, 1),
      contenderProcessesMb: processRss,
    };

    const targets = evaluateTargets({ fdatasync, actions, storms, peakRss });
    const results = {
      config: {
        ...config,
        postgresProcesses: POSTGRES_PROCESSES,
        tenant: 'one tenant for every action',
        executor: 'no-op',
        verification: 'inline (verificationDelayMs 0)',
        processes: 'every contender in its own process(es); fdatasync in the suite process',
      },
      fdatasync,
      actions,
      ratios: ratios(actions),
      storms,
      peakRss,
      targets,
      skipped,
    };
    return { name: 'stores', results, table: tableOf(results) };
  } finally {
    for (const cleanup of cleanups.reverse()) {
      try {
        await cleanup();
      } catch {
        // best effort
      }
    }
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Sideguard next to the peer at the same concurrency (>1: Sideguard is faster). */
function ratios(actions) {
  const peer = actions.powertoolsRedis;
  if (peer === undefined) return {};
  const out = {};
  for (const [name, byConcurrency] of Object.entries(actions)) {
    if (name === 'powertoolsRedis') continue;
    out[name] = {};
    for (const [concurrency, value] of Object.entries(byConcurrency)) {
      const theirs = peer[concurrency]?.perSecond;
      out[name][concurrency] = theirs ? round(value.perSecond / theirs, 2) : null;
    }
  }
  return out;
}

function evaluateTargets({ fdatasync, actions, storms, peakRss }) {
  const sync = fdatasync.perSecond;
  const rate = (name, concurrency) => actions[name]?.[concurrency]?.perSecond ?? null;
  const peer = (concurrency) => rate('powertoolsRedis', concurrency);
  /** ratio = measured / baseline; met when ratio ≥ requiredRatio. */
  const target = (name, measured, baseline, baselineName, requiredRatio) => {
    const ratio = measured !== null && baseline ? round(measured / baseline, 2) : null;
    return {
      target: name,
      measured,
      baseline: baseline ?? null,
      baselineName,
      ratio,
      requiredRatio,
      met: ratio === null ? null : measured / baseline >= requiredRatio,
    };
  };
  // Sideguard's processes only: the suite process and every contender but the peer.
  const rss = [
    peakRss.suiteProcessMb,
    ...Object.entries(peakRss.contenderProcessesMb)
      .filter(([name]) => name !== 'powertoolsRedis')
      .flatMap(([, values]) => values),
  ].filter((value) => value !== null);
  const maxRss = rss.length > 0 ? Math.max(...rss) : null;
  const stormEffects = Object.entries(storms).filter(([name]) => name !== 'powertoolsRedis');
  const maxEffects = Math.max(...stormEffects.map(([, value]) => value.effectsPerStormMax));
  return [
    target(
      'SQLite FULL c1 ≥ 0.3 × fdatasync/s',
      rate('sqliteFull', 'c1'),
      sync,
      'fdatasync/s',
      0.3,
    ),
    target(
      'SQLite FULL c64 ≥ 1.0 × fdatasync/s',
      rate('sqliteFull', 'c64'),
      sync,
      'fdatasync/s',
      1,
    ),
    target(
      'SQLite NORMAL c1 ≥ peer c1',
      rate('sqliteNormal', 'c1'),
      peer('c1'),
      'Powertools+Redis c1',
      1,
    ),
    target(
      'SQLite NORMAL c64 ≥ peer c64',
      rate('sqliteNormal', 'c64'),
      peer('c64'),
      'Powertools+Redis c64',
      1,
    ),
    target(
      'PostgreSQL c64 (4 processes) ≥ 1,500/s',
      rate('postgres', 'c64'),
      1_500,
      '1,500 actions/s',
      1,
    ),
    {
      target: 'peak RSS of every Sideguard bench process < 200 MB',
      measured: maxRss,
      baseline: 200,
      baselineName: '200 MB',
      ratio: maxRss === null ? null : round(maxRss / 200, 2),
      requiredRatio: '< 1',
      met: maxRss === null ? null : maxRss < 200,
    },
    {
      target: 'duplicate storm: effects per 64-caller storm = 1',
      measured: maxEffects,
      baseline: 1,
      baselineName: '1 effect',
      ratio: null,
      requiredRatio: '= 1',
      met: stormEffects.every(
        ([, value]) => value.effectsPerStormMax === 1 && value.effectsPerStormMin === 1,
      ),
    },
  ];
}

const LABELS = {
  memory: 'memory',
  sqliteFull: 'SQLite FULL',
  sqliteNormal: 'SQLite NORMAL',
  postgres: 'PostgreSQL',
  powertoolsRedis: 'Powertools + Redis (peer)',
};

function tableOf(results) {
  const rows = [
    {
      measurement: 'fdatasync (append 64 B + fdatasync)',
      'per second': results.fdatasync.perSecond,
      'p50 ms': results.fdatasync.p50Ms,
      'p99 ms': results.fdatasync.p99Ms,
      'vs peer': '',
      runs: results.fdatasync.runs.join(' / '),
      spread: `${results.fdatasync.spreadPercent}%`,
    },
  ];
  for (const [name, byConcurrency] of Object.entries(results.actions)) {
    for (const [concurrency, value] of Object.entries(byConcurrency)) {
      const ratio = results.ratios[name]?.[concurrency];
      rows.push({
        measurement: `${LABELS[name] ?? name} ${concurrency}${value.processes ? ` (${value.processes} processes)` : ''}`,
        'per second': value.perSecond,
        'p50 ms': value.p50Ms,
        'p99 ms': value.p99Ms,
        'vs peer': ratio === undefined || ratio === null ? '' : `${ratio}×`,
        runs: value.runs.join(' / '),
        spread: `${value.spreadPercent}%${value.failed ? ` (${value.failed} failed)` : ''}`,
      });
    }
  }
  for (const [name, value] of Object.entries(results.storms)) {
    rows.push({
      measurement: `storm ×64 ${LABELS[name] ?? name}: effects/storm ${value.effectsPerStormMin}–${value.effectsPerStormMax}`,
      'per second': '',
      'p50 ms': '',
      'p99 ms': value.p99Ms,
      'vs peer': '',
      runs: `${value.storms} storms`,
      spread: Object.entries(value.outcomes)
        .map(([key, count]) => `${key} ${count}`)
        .join(', '),
    });
  }
  return rows;
}

if (process.env.SIDEGUARD_BENCH_ROLE === WORKER_ROLE && process.argv[1] === here) {
  contenderWorkerMain().catch((error) => {
    console.error(error);
    process.exit(1);
  });
}
