/**
 * Sandbox data-plane throughput against the Prism mock server, side by side in one run:
 * requests/s for a read (GET /v1/refunds/:id) and a write with state persisted (POST /v1/refunds,
 * fdatasync group commit), 16 connections, several bounded runs, medians. Loopback only.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Pool } from 'undici';
import { buildSeedCatalogue, startSandbox } from '../../dist/sandbox/index.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
// Prism is the benchmark's own dependency (bench/package.json), not sideguard's.
const prismBin = join(root, 'bench', 'node_modules', '.bin', 'prism');
const prismSpec = join(root, 'bench', 'fixtures', 'prism-payments.yaml');

/** Concurrent connections per measurement. */
const connections = 16;
/** Length of one measurement, in milliseconds. */
const durationMs = 2_000;
/** Warm-up before the measured runs, in milliseconds. */
const warmupMs = 500;
/** Measured runs per target and operation; the median is reported. */
const runs = 3;
const apiKey = 'sk_test_sideguard_agent';
const seed = 1;

// Each 1-cent write goes to a charge in proportion to what is left of it after the seed, so no
// charge runs out (charge_already_refunded) before the sum of all of them does (~60 000 writes).
const chargeTickets = buildSeedCatalogue(seed).orders.flatMap((order) =>
  Array.from(
    { length: Math.floor((order.totalAmountMinor - order.seededRefundMinor) / 100) },
    () => order.chargeId,
  ),
);
for (let index = chargeTickets.length - 1; index > 0; index -= 1) {
  const other = (index * 7919) % (index + 1);
  [chargeTickets[index], chargeTickets[other]] = [chargeTickets[other], chargeTickets[index]];
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** Runs `makeRequest` on `connections` concurrent loops for `durationMs`; returns ok/s and errors. */
async function measure(origin, makeRequest, lengthMs) {
  const pool = new Pool(origin, { connections, pipelining: 1 });
  let ok = 0;
  let failed = 0;
  let sequence = 0;
  const deadline = performance.now() + lengthMs;
  const started = performance.now();
  const loop = async () => {
    while (performance.now() < deadline) {
      sequence += 1;
      try {
        const response = await pool.request(makeRequest(sequence));
        await response.body.dump();
        if (response.statusCode >= 200 && response.statusCode < 300) ok += 1;
        else failed += 1;
      } catch {
        failed += 1;
      }
    }
  };
  await Promise.all(Array.from({ length: connections }, loop));
  const elapsedSeconds = (performance.now() - started) / 1000;
  await pool.close();
  return { requestsPerSecond: Math.round(ok / elapsedSeconds), failed };
}

const readRequest = () => ({
  path: '/v1/refunds/re_sg_001',
  method: 'GET',
  headers: { authorization: `Bearer ${apiKey}` },
});

const writeRequest = (sequence) => ({
  path: '/v1/refunds',
  method: 'POST',
  headers: {
    authorization: `Bearer ${apiKey}`,
    'content-type': 'application/x-www-form-urlencoded',
    // Like the stripe client: a fresh key per call, so every write is saved with its response.
    'idempotency-key': `bench-${process.pid}-${sequence}`,
  },
  body: `charge=${chargeTickets[sequence % chargeTickets.length]}&amount=1&metadata[sideguard_effect]=bench-${sequence}`,
});

async function startPrism(log) {
  const port = await freePort();
  const child = spawn(prismBin, ['mock', '-h', '127.0.0.1', '-p', String(port), prismSpec], {
    stdio: 'ignore',
  });
  const origin = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`prism exited with ${child.exitCode}`);
    try {
      const response = await fetch(`${origin}/v1/refunds/re_sg_001`, {
        headers: { authorization: `Bearer ${apiKey}` },
      });
      await response.text();
      if (response.status === 200) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGTERM');
      throw new Error('prism did not start within 60 s');
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  log(`prism listening on ${origin}`);
  return {
    origin,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

/** Benchmark suite entry point (called by bench/run.mjs). */
export async function run({ log = console.log } = {}) {
  const stateDir = await mkdtemp(join(tmpdir(), 'sideguard-bench-sandbox-'));
  const sandbox = await startSandbox({ stateDir, seed });
  let prism;
  try {
    prism = await startPrism(log);
    const targets = [
      { name: 'sandbox', origin: sandbox.dataUrl, beforeWrites: () => sandbox.control.reset() },
      { name: 'prism', origin: prism.origin, beforeWrites: async () => {} },
    ];
    const samples = { sandbox: { read: [], write: [] }, prism: { read: [], write: [] } };
    const failures = { sandbox: 0, prism: 0 };
    for (const target of targets) {
      await measure(target.origin, readRequest, warmupMs);
      await target.beforeWrites();
      await measure(target.origin, writeRequest, warmupMs);
    }
    // Interleave targets run by run so drift in the machine hits both alike.
    for (let index = 0; index < runs; index += 1) {
      for (const target of targets) {
        const read = await measure(target.origin, readRequest, durationMs);
        // Reset so charges never run out of refundable amount during a write run.
        await target.beforeWrites();
        const write = await measure(target.origin, writeRequest, durationMs);
        samples[target.name].read.push(read.requestsPerSecond);
        samples[target.name].write.push(write.requestsPerSecond);
        failures[target.name] += read.failed + write.failed;
        log(
          `run ${index + 1}/${runs} ${target.name}: read ${read.requestsPerSecond}/s, write ${write.requestsPerSecond}/s`,
        );
      }
    }
    const observations = await sandbox.control.observations();
    const summary = (name) => ({
      readRequestsPerSecond: median(samples[name].read),
      writeRequestsPerSecond: median(samples[name].write),
      readSamples: samples[name].read,
      writeSamples: samples[name].write,
      failedRequests: failures[name],
    });
    const results = {
      config: {
        connections,
        durationMs,
        runs,
        warmupMs,
        read: 'GET /v1/refunds/:id',
        write: 'POST /v1/refunds (form, fresh Idempotency-Key)',
      },
      sandbox: {
        ...summary('sandbox'),
        durability: 'fsync (group commit)',
        writesCommittedInLastRun: observations.writes.total,
      },
      prism: { ...summary('prism'), durability: 'none (stateless mock)' },
    };
    results.ratio = {
      read: Number(
        (results.sandbox.readRequestsPerSecond / results.prism.readRequestsPerSecond).toFixed(2),
      ),
      write: Number(
        (results.sandbox.writeRequestsPerSecond / results.prism.writeRequestsPerSecond).toFixed(2),
      ),
    };
    return { name: 'sandbox', results };
  } finally {
    await prism?.stop();
    await sandbox.close();
    await rm(stateDir, { recursive: true, force: true });
  }
}
