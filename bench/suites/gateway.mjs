/**
 * The gateway's cost, side by side in one run: forwarded reads (GET /v1/refunds/:id) straight to
 * the sandbox and through `sideguard serve` — requests/s at 16 connections and p50/p99 latency
 * one request at a time — then guarded writes/s (each its own effect: prepare, claim, execute,
 * verify, on SQLite FULL) and duplicate replays/s (the original response from the store). The
 * sandbox and the gateway run as separate `sideguard` processes, as they would be deployed.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Pool } from 'undici';
import { buildSeedCatalogue, SandboxControlClient } from '../../dist/sandbox/index.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const cli = join(root, 'dist', 'cli', 'main.js');
const config = join(root, 'bench', 'fixtures', 'gateway-bench.config.mjs');
const agentKey = 'sg_bench_agent_0123456789';
const providerKey = 'sk_test_sideguard_agent';

const settings = (quick) => ({
  connections: 16,
  durationMs: quick ? 300 : 2_000,
  // Each side serves this many reads before the measured runs (the same for both, at most
  // `warmupMaxMs`): the gateway runs far more code per read than the sandbox, and V8 optimises by
  // work done, so a warm-up counted in reads is not cut short when the machine is busy.
  warmupReads: quick ? 200 : 10_000,
  warmupMaxMs: quick ? 1_000 : 20_000,
  runs: quick ? 1 : 3,
  latencyRequests: quick ? 200 : 2_000,
});

/** Shared with the `mcp` suite. */
export const round = (value, digits = 2) => Number(value.toFixed(digits));
export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}
export const percentile = (sorted, p) =>
  sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];

export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** Starts `sideguard …` and resolves when `pattern` appears on its stdout. */
export function startProcess(args, environment, pattern) {
  const child = spawn(process.execPath, [cli, ...args], {
    cwd: root,
    env: { ...process.env, ...environment },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  return new Promise((resolve, reject) => {
    const onData = (chunk) => {
      output += chunk.toString('utf8');
      const match = pattern.exec(output);
      if (match !== null) resolve({ match, pid: child.pid, stop: () => stop(child) });
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', (chunk) => {
      output += chunk.toString('utf8');
    });
    child.once('exit', (code) =>
      reject(new Error(`sideguard ${args[0]} exited (${code}):\n${output}`)),
    );
  });
}

/** CPU milliseconds (user + system) a process has used, from /proc (Linux); null elsewhere. */
function cpuMs(pid) {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) * (1000 / 100);
  } catch {
    return null;
  }
}

function stop(child) {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

/** `connections` loops for `lengthMs`: ok/s, failures, and every request's latency. */
async function measure(origin, makeRequest, lengthMs, connections) {
  const pool = new Pool(origin, { connections, pipelining: 1 });
  let ok = 0;
  let failed = 0;
  let sequence = 0;
  const latencies = [];
  const deadline = performance.now() + lengthMs;
  const started = performance.now();
  const loop = async () => {
    while (performance.now() < deadline) {
      sequence += 1;
      const begun = performance.now();
      try {
        const response = await pool.request(makeRequest(sequence));
        await response.body.dump();
        if (response.statusCode >= 200 && response.statusCode < 300) ok += 1;
        else failed += 1;
      } catch {
        failed += 1;
      }
      latencies.push(performance.now() - begun);
    }
  };
  await Promise.all(Array.from({ length: connections }, loop));
  const elapsedSeconds = (performance.now() - started) / 1000;
  await pool.close();
  return { perSecond: Math.round(ok / elapsedSeconds), failed, latencies };
}

/** `connections` loops until `reads` requests were answered or `maxMs` passed. */
async function warmUp(origin, makeRequest, reads, maxMs, connections) {
  const pool = new Pool(origin, { connections, pipelining: 1 });
  const deadline = performance.now() + maxMs;
  let started = 0;
  const loop = async () => {
    while (started < reads && performance.now() < deadline) {
      started += 1;
      const response = await pool.request(makeRequest(started));
      await response.body.dump();
    }
  };
  await Promise.all(Array.from({ length: connections }, loop));
  await pool.close();
}

/** One request at a time, `count` of them: p50/p99 in milliseconds. */
async function latency(origin, makeRequest, count) {
  const pool = new Pool(origin, { connections: 1, pipelining: 1 });
  const samples = [];
  for (let index = 0; index < count; index += 1) {
    const begun = performance.now();
    const response = await pool.request(makeRequest(index));
    await response.body.dump();
    samples.push(performance.now() - begun);
  }
  await pool.close();
  samples.sort((a, b) => a - b);
  return { p50Ms: round(percentile(samples, 0.5), 3), p99Ms: round(percentile(samples, 0.99), 3) };
}

const readAs = (key) => () => ({
  path: '/v1/refunds/re_sg_001',
  method: 'GET',
  headers: { authorization: `Bearer ${key}` },
});

// One cent per write, spread over the seed charges so none runs out within a run.
export const chargeTickets = buildSeedCatalogue(1).orders.flatMap((order) =>
  Array.from(
    { length: Math.floor((order.totalAmountMinor - order.seededRefundMinor) / 100) },
    () => order.chargeId,
  ),
);

const writeRequest = (prefix) => (sequence) => ({
  path: '/v1/refunds',
  method: 'POST',
  headers: {
    authorization: `Bearer ${agentKey}`,
    'content-type': 'application/x-www-form-urlencoded',
  },
  body: `charge=${chargeTickets[sequence % chargeTickets.length]}&amount=1&metadata[reference]=${prefix}-${sequence}`,
});

async function startBoth(dir) {
  const [dataPort, controlPort, gatewayPort, paymentsPort] = await Promise.all([
    freePort(),
    freePort(),
    freePort(),
    freePort(),
  ]);
  const token = randomBytes(24).toString('base64url');
  const sandbox = await startProcess(
    [
      'sandbox',
      'serve',
      '--state-dir',
      join(dir, 'sandbox'),
      '--seed',
      '1',
      '--port',
      String(dataPort),
      '--control-port',
      String(controlPort),
    ],
    { SIDEGUARD_SANDBOX_TOKEN: token },
    /data plane:\s+(http:\/\/\S+)/,
  );
  const dataUrl = sandbox.match[1];
  const gateway = await startProcess(
    [
      'serve',
      '--config',
      config,
      '--port',
      String(gatewayPort),
      '--upstream-port',
      `payments=${paymentsPort}`,
    ],
    {
      SG_BENCH_SANDBOX_URL: dataUrl,
      SG_BENCH_STORE: join(dir, 'gateway.db'),
      SIDEGUARD_KEYS: `current=k1:1;effect=k1:1;k1:1=${randomBytes(32).toString('base64url')}`,
    },
    /^ready (\{.*\})$/m,
  );
  const ready = JSON.parse(gateway.match[1]);
  return {
    dataUrl,
    pids: { sandbox: sandbox.pid, gateway: gateway.pid },
    gatewayPayments: ready.upstreams.payments,
    control: new SandboxControlClient({ url: `http://127.0.0.1:${controlPort}`, token }),
    stop: async () => {
      await gateway.stop();
      await sandbox.stop();
    },
  };
}

function targets(results) {
  const target = (name, measured, baseline, baselineName, requiredRatio) => {
    const ratio = measured !== null && baseline ? round(measured / baseline, 2) : null;
    return {
      target: name,
      measured,
      baseline,
      baselineName,
      ratio,
      requiredRatio,
      met: ratio === null ? null : measured / baseline >= requiredRatio,
    };
  };
  const added = round(results.reads.gateway.c1.p50Ms - results.reads.direct.c1.p50Ms, 3);
  return [
    target(
      'gateway read rate ≥ 0.5 × direct',
      results.reads.gateway.perSecond,
      results.reads.direct.perSecond,
      'direct reads/s',
      0.5,
    ),
    {
      target: 'added p50 per forwarded read ≤ 1 ms (c1)',
      measured: added,
      baseline: results.reads.direct.c1.p50Ms,
      baselineName: 'direct c1 p50 ms',
      ratio: null,
      requiredRatio: '≤ 1 ms',
      met: added <= 1,
    },
  ];
}

/** Benchmark suite entry point (called by bench/run.mjs). */
export async function run({ log = console.log, quick = false } = {}) {
  const config = settings(quick);
  const dir = join(root, 'bench', '.tmp', `gateway-${process.pid}`);
  mkdirSync(dir, { recursive: true });
  const both = await startBoth(dir);
  try {
    const direct = { read: readAs(providerKey), origin: both.dataUrl };
    const gateway = { read: readAs(agentKey), origin: both.gatewayPayments };
    const samples = { direct: [], gateway: [] };
    const cpu = { direct: [], gateway: [] };
    for (const side of [direct, gateway])
      await warmUp(
        side.origin,
        side.read,
        config.warmupReads,
        config.warmupMaxMs,
        config.connections,
      );
    for (let index = 0; index < config.runs; index += 1) {
      for (const [name, side] of [
        ['direct', direct],
        ['gateway', gateway],
      ]) {
        const before = { gateway: cpuMs(both.pids.gateway), sandbox: cpuMs(both.pids.sandbox) };
        const result = await measure(side.origin, side.read, config.durationMs, config.connections);
        const after = { gateway: cpuMs(both.pids.gateway), sandbox: cpuMs(both.pids.sandbox) };
        samples[name].push(result);
        const ok = result.latencies.length - result.failed;
        if (before.gateway !== null && after.gateway !== null && ok > 0) {
          cpu[name].push({
            gatewayMicrosecondsPerRead: Math.round(((after.gateway - before.gateway) * 1000) / ok),
            sandboxMicrosecondsPerRead: Math.round(((after.sandbox - before.sandbox) * 1000) / ok),
          });
        }
        log(
          `run ${index + 1}/${config.runs} ${name} reads: ${result.perSecond}/s (${result.failed} failed)`,
        );
      }
    }
    const c1 = {
      direct: await latency(direct.origin, direct.read, config.latencyRequests),
      gateway: await latency(gateway.origin, gateway.read, config.latencyRequests),
    };
    const summary = (name) => {
      const all = samples[name].flatMap((sample) => sample.latencies).sort((a, b) => a - b);
      return {
        perSecond: median(samples[name].map((sample) => sample.perSecond)),
        samples: samples[name].map((sample) => sample.perSecond),
        cpuSamples: cpu[name],
        failed: samples[name].reduce((sum, sample) => sum + sample.failed, 0),
        c16: { p50Ms: round(percentile(all, 0.5), 3), p99Ms: round(percentile(all, 0.99), 3) },
        c1: c1[name],
        // CPU each process spent per read during the c16 runs (/proc, 10 ms ticks): less skewed by
        // other work on the machine than the rates, which depend on getting the CPU at all.
        cpu:
          cpu[name].length === 0
            ? null
            : {
                gatewayMicrosecondsPerRead: median(
                  cpu[name].map((entry) => entry.gatewayMicrosecondsPerRead),
                ),
                sandboxMicrosecondsPerRead: median(
                  cpu[name].map((entry) => entry.sandboxMicrosecondsPerRead),
                ),
              },
      };
    };
    const writes = [];
    const replays = [];
    for (let index = 0; index < config.runs; index += 1) {
      await both.control.reset();
      const prefix = `w${index}-${Date.now()}`;
      const write = await measure(
        gateway.origin,
        writeRequest(prefix),
        config.durationMs,
        config.connections,
      );
      // The same requests again: every one a duplicate answered from the store.
      const replay = await measure(
        gateway.origin,
        writeRequest(prefix),
        config.durationMs / 2,
        config.connections,
      );
      writes.push(write);
      replays.push(replay);
      log(
        `run ${index + 1}/${config.runs} guarded writes: ${write.perSecond}/s, duplicate replays: ${replay.perSecond}/s`,
      );
    }
    const observed = await both.control.observations();
    const results = {
      config: {
        ...config,
        read: 'GET /v1/refunds/:id',
        write: 'POST /v1/refunds (allowed, one effect each)',
        store: 'SQLite FULL (gateway), sandbox fsync',
        processes:
          'sandbox and gateway each a `sideguard` child process; load from the suite process',
      },
      reads: { direct: summary('direct'), gateway: summary('gateway') },
      writes: {
        guardedPerSecond: median(writes.map((sample) => sample.perSecond)),
        guardedSamples: writes.map((sample) => sample.perSecond),
        guardedFailed: writes.reduce((sum, sample) => sum + sample.failed, 0),
        duplicateReplaysPerSecond: median(replays.map((sample) => sample.perSecond)),
        providerWritesInLastRun: observed.writes.total,
      },
    };
    results.readRatio = round(results.reads.gateway.perSecond / results.reads.direct.perSecond, 2);
    // Each run's gateway rate over the direct rate measured just before it: the pairs share the
    // machine's load at that moment, which the medians of the two sides need not.
    results.readRatioPerRun = samples.gateway.map((sample, index) =>
      round(sample.perSecond / samples.direct[index].perSecond, 2),
    );
    results.addedP50Ms = round(results.reads.gateway.c1.p50Ms - results.reads.direct.c1.p50Ms, 3);
    results.targets = targets(results);
    const table = [
      ['reads direct', results.reads.direct],
      ['reads through gateway', results.reads.gateway],
    ].map(([row, value]) => ({
      row,
      'per second': value.perSecond,
      'c16 p50 ms': value.c16.p50Ms,
      'c16 p99 ms': value.c16.p99Ms,
      'c1 p50 ms': value.c1.p50Ms,
      'c1 p99 ms': value.c1.p99Ms,
      'gateway CPU µs/read': value.cpu?.gatewayMicrosecondsPerRead ?? '',
      'sandbox CPU µs/read': value.cpu?.sandboxMicrosecondsPerRead ?? '',
    }));
    const blank = Object.fromEntries(
      Object.keys(table[0])
        .slice(2)
        .map((key) => [key, '']),
    );
    table.push({ row: 'guarded writes', 'per second': results.writes.guardedPerSecond, ...blank });
    table.push({
      row: 'duplicate replays',
      'per second': results.writes.duplicateReplaysPerSecond,
      ...blank,
    });
    return { name: 'gateway', results, table };
  } finally {
    await both.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
