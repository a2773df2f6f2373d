/**
 * Store benchmark (issue 14's targets): the disk's raw fdatasync rate; full no-approval guard
 * actions (prepare + execute + verify around a no-op) per second with p50/p99 latency and CPU per
 * action for the memory, SQLite (FULL and NORMAL) and PostgreSQL stores; the Powertools
 * idempotency peer on an in-memory Redis and on a durable one (AOF, fsync on every write);
 * bare PostgreSQL insert transactions; duplicate storms; the peak RSS of every bench process —
 * all in one run, on one disk, loopback only. Several bounded runs per measurement, interleaved
 * so machine drift hits every contender alike. The helpers live in `kit/`.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, fdatasyncSync, mkdirSync, openSync, rmSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startContender } from './kit/contenders.mjs';
import {
  createBareTable,
  dropSchema,
  postgresShown,
  postgresUnreachable,
} from './kit/postgres-bare.mjs';
import { MEMORY_REDIS_URL } from './kit/redis-peer.mjs';
import { ensureMemoryRedis, startDurableRedis } from './kit/redis-servers.mjs';
import { latencyStats, median, round, summarise } from './kit/stats.mjs';
import { evaluateTargets, tableOf } from './kit/stores-targets.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const tmpRoot = join(root, 'bench', '.tmp');
/** PostgreSQL at concurrency 64: this many processes × (64 / this) callers each. */
const POSTGRES_PROCESSES = 4;

/** Lengths and counts; `--quick` shrinks them for a smoke check. */
function settings(quick) {
  return quick
    ? {
        runs: 2,
        durationMs: 300,
        warmupCalls: 50,
        warmupMaxMs: 100,
        syncMs: 300,
        storms: 2,
        maxActionsPerRun: 5_000,
      }
    : {
        runs: 3,
        durationMs: 2_000,
        // Warm-up counted in actions per process, not in time: V8 optimises by work done, and
        // a guard process's CPU per action falls for its first ~800 actions (PostgreSQL c1 from
        // ~7 ms to ~2.5 ms, memory from ~3 ms to ~0.7 ms, measured 2026-12-01). A time-boxed
        // warm-up left the slow contenders (PostgreSQL: ~50 actions in 300 ms) mostly cold.
        warmupCalls: 1_500,
        warmupMaxMs: 20_000,
        syncMs: 2_000,
        storms: 10,
        maxActionsPerRun: 60_000,
      };
}

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

function summariseStorms(storms) {
  const outcomes = {};
  for (const one of storms) {
    for (const [key, count] of Object.entries(one.outcomes))
      outcomes[key] = (outcomes[key] ?? 0) + count;
  }
  const effects = storms.map((one) => one.effects);
  const proposals = storms.map((one) => one.proposals).filter((value) => value !== null);
  return {
    storms: storms.length,
    effectsPerStormMax: Math.max(...effects),
    effectsPerStormMin: Math.min(...effects),
    proposalsPerStormMax: proposals.length > 0 ? Math.max(...proposals) : null,
    /** Up to 3 storms whose callers were answered with more than one proposal: who got what. */
    stormsNamingSeveralProposals: storms
      .filter((one) => one.proposals > 1)
      .slice(0, 3)
      .map((one) => ({ effects: one.effects, answersByProposal: one.answersByProposal })),
    indefinite: storms.reduce((sum, one) => sum + one.indefinite, 0),
    p99Ms: round(latencyStats(storms.flatMap((one) => one.latencies)).p99Ms, 2),
    outcomes,
    errors: storms.reduce((sum, one) => sum + one.errors, 0),
  };
}

/**
 * Opens every contender process and lists what to measure: `{ name, key, group, options }`,
 * where `options` are the callers per process (and tenants) of one measurement.
 */
async function openContenders({ dir, open, cleanups, skipped, log }) {
  const contenders = [];
  const stormers = [];
  const add = (name, key, group, options) => contenders.push({ name, key, group, options });
  const both = (name, group) => {
    add(name, 'c1', group, { concurrency: 1 });
    add(name, 'c64', group, { concurrency: 64 });
  };
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
  both('memory', memory);
  both('sqliteFull', sqliteFull);
  both('sqliteNormal', sqliteNormal);
  stormers.push(['memory', memory], ['sqliteFull', sqliteFull], ['sqliteNormal', sqliteNormal]);

  const unreachable = await postgresUnreachable();
  if (unreachable === undefined) {
    const schema = `sg_bench_${randomBytes(5).toString('hex')}`;
    cleanups.push(() => dropSchema(schema));
    const perProcess = 64 / POSTGRES_PROCESSES;
    // One process for c1 and the storms; 4 × 16 callers for c64 (one tenant, then eight).
    const single = open('postgres c1', { kind: 'postgres', schema, connections: 16 });
    await single.ready; // migrates the schema before the others connect
    const spread = open(
      'postgres c64',
      { kind: 'postgres', schema, connections: perProcess },
      POSTGRES_PROCESSES,
    );
    await createBareTable(schema);
    const bareSingle = open('postgresBare c1', { kind: 'pgbare', schema, connections: 1 });
    const bareSpread = open(
      'postgresBare c64',
      { kind: 'pgbare', schema, connections: perProcess },
      POSTGRES_PROCESSES,
    );
    add('postgres', 'c1', single, { concurrency: 1 });
    add('postgres', 'c64', spread, { concurrency: perProcess });
    add('postgres', 'c64t8', spread, { concurrency: perProcess, tenants: 8 });
    add('postgresBare', 'c1', bareSingle, { concurrency: 1 });
    add('postgresBare', 'c64', bareSpread, { concurrency: perProcess });
    stormers.push(['postgres', single]);
  } else {
    skipped.postgres = `PostgreSQL at ${postgresShown()} does not answer: ${unreachable}`;
    log(`stores: PostgreSQL skipped (${skipped.postgres})`);
  }

  await ensureMemoryRedis(log);
  const peer = open('powertoolsRedis', { kind: 'peer', redisUrl: MEMORY_REDIS_URL });
  const durableRedis = await startDurableRedis(join(dir, 'redis-durable'));
  cleanups.push(() => durableRedis.stop());
  log(`stores: durable redis-server (appendfsync always) on ${durableRedis.url}`);
  const durablePeer = open('powertoolsRedisDurable', {
    kind: 'peer',
    redisUrl: durableRedis.url,
  });
  both('powertoolsRedis', peer);
  both('powertoolsRedisDurable', durablePeer);
  stormers.push(['powertoolsRedis', peer], ['powertoolsRedisDurable', durablePeer]);
  return { contenders, stormers };
}

/** Benchmark suite entry point (called by bench/run.mjs). */
export async function run({ log = console.log, quick = false } = {}) {
  const config = settings(quick);
  const { runs, durationMs, warmupCalls, warmupMaxMs, syncMs, maxActionsPerRun } = config;
  const dir = join(tmpRoot, `stores-${process.pid}-${randomBytes(3).toString('hex')}`);
  mkdirSync(dir, { recursive: true });
  const cleanups = [];
  const skipped = {};
  /** Every contender process group, by name: its peak RSS is reported per process. */
  const groups = [];
  const open = (name, spec, processes = 1) => {
    const group = startContender(spec, processes);
    cleanups.push(() => group.kill());
    groups.push({ name, group });
    return group;
  };
  try {
    const { contenders, stormers } = await openContenders({ dir, open, cleanups, skipped, log });
    await Promise.all(groups.map(({ group }) => group.ready));
    log(
      `stores: warming up ${contenders.length} contenders in ${groups.reduce((sum, { group }) => sum + group.processes, 0)} processes`,
    );
    const measureOnce = (contender, length, label) =>
      contender.group.measure({
        ...contender.options,
        durationMs: length,
        maxCalls: Math.ceil(maxActionsPerRun / contender.group.processes),
        label,
      });
    for (const contender of contenders) {
      await contender.group.measure({
        ...contender.options,
        durationMs: warmupMaxMs,
        maxCalls: warmupCalls,
        label: `warm-${contender.name}-${contender.key}`,
      });
    }

    const syncSamples = [];
    const samples = new Map(contenders.map((contender) => [contender, []]));
    const stormSamples = {};
    for (let index = 0; index < runs; index += 1) {
      const sync = measureFdatasync(join(dir, 'fdatasync.bin'), syncMs);
      syncSamples.push(sync);
      log(`run ${index + 1}/${runs} fdatasync: ${round(sync.perSecond)}/s`);
      for (const contender of contenders) {
        const label = `run${index}-${contender.name}-${contender.key}`;
        const sample = await measureOnce(contender, durationMs, label);
        samples.get(contender).push(sample);
        const errors =
          Object.keys(sample.errors ?? {}).length > 0
            ? ` errors ${JSON.stringify(sample.errors)}`
            : '';
        log(
          `run ${index + 1}/${runs} ${contender.name} ${contender.key}: ${round(sample.perSecond)}/s p50 ${round(sample.p50Ms, 2)} ms p99 ${round(sample.p99Ms, 2)} ms CPU ${round(sample.cpuUsPerCall)} µs/call${sample.failed ? ` failed ${sample.failed}` : ''}${errors}`,
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
      const processes = contender.group.processes;
      actions[contender.name][contender.key] = {
        ...summarise(samples.get(contender)),
        ...(contender.options.tenants ? { tenants: contender.options.tenants } : {}),
        ...(processes > 1 ? { processes } : {}),
      };
    }
    const storms = Object.fromEntries(
      Object.entries(stormSamples).map(([name, list]) => [name, summariseStorms(list)]),
    );
    const peakRssByProcess = { 'suite process (fdatasync, orchestration)': null };
    for (const { name, group } of groups) {
      const values = await group.stop();
      values.forEach((value, index) => {
        peakRssByProcess[values.length > 1 ? `${name} #${index + 1}` : name] = round(value, 1);
      });
    }
    peakRssByProcess['suite process (fdatasync, orchestration)'] = round(
      process.resourceUsage().maxRSS / 1024,
      1,
    );

    const results = {
      config: {
        ...config,
        postgresProcesses: POSTGRES_PROCESSES,
        tenant: 'one tenant for every action, except PostgreSQL c64t8 (8 tenants, round robin)',
        executor: 'no-op',
        verification: 'inline (verificationDelayMs 0)',
        processes: 'every contender in its own process(es); fdatasync in the suite process',
        durablePeer:
          'redis-server --appendonly yes --appendfsync always --save "" (own port, own dir)',
        postgresBaseline:
          'BEGIN; INSERT one row (text key, small jsonb); COMMIT — one connection per caller',
      },
      fdatasync,
      actions,
      storms,
      peakRssByProcess,
      targets: evaluateTargets({ fdatasync, actions, storms, peakRssByProcess }),
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
