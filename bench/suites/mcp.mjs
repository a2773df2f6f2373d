/**
 * The MCP door's cost, side by side in one run: reads of a wrapped upstream tool (the real
 * memory server's `open_nodes`) straight from an SDK v2 client over stdio and through `/mcp` on
 * `sideguard serve` (streamable HTTP, 2026-07-28; each call also re-reads the upstream's tool
 * list to check the pin) — calls/s at 16 in flight and p50/p99 one at a time — then guarded
 * writes/s through the MCP door (the refund action, each call its own effect, executed through
 * its HTTP binding against the sandbox on SQLite FULL) and duplicate replays/s.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { toolDefinitionDigest } from '../../dist/gateway/mcp/index.js';
import { chargeTickets, freePort, median, percentile, round, startProcess } from './gateway.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const config = join(root, 'bench', 'fixtures', 'mcp-bench.config.mjs');
const memoryServer = createRequire(import.meta.url).resolve(
  '@modelcontextprotocol/server-memory/dist/index.js',
);
const agentKey = 'sg_bench_agent_0123456789';

const settings = (quick) => ({
  inFlight: 16,
  durationMs: quick ? 300 : 2_000,
  warmupMs: quick ? 100 : 500,
  runs: quick ? 1 : 3,
  latencyCalls: quick ? 100 : 1_000,
});

/** `inFlight` loops calling `call(sequence)` for `lengthMs`: successful calls/s and failures. */
async function measure(call, lengthMs, inFlight) {
  let ok = 0;
  let failed = 0;
  let sequence = 0;
  const deadline = performance.now() + lengthMs;
  const started = performance.now();
  const loop = async () => {
    while (performance.now() < deadline) {
      sequence += 1;
      try {
        const result = await call(sequence);
        if (result.isError === true) failed += 1;
        else ok += 1;
      } catch {
        failed += 1;
      }
    }
  };
  await Promise.all(Array.from({ length: inFlight }, loop));
  return { perSecond: Math.round(ok / ((performance.now() - started) / 1000)), failed };
}

/** One call at a time, `count` of them: p50/p99 in milliseconds. */
async function latency(call, count) {
  const samples = [];
  for (let index = 0; index < count; index += 1) {
    const begun = performance.now();
    await call(index);
    samples.push(performance.now() - begun);
  }
  samples.sort((a, b) => a - b);
  return { p50Ms: round(percentile(samples, 0.5), 3), p99Ms: round(percentile(samples, 0.99), 3) };
}

const readArgs = { names: ['bench-entity'] };

const writeArgs = (prefix) => (sequence) => ({
  charge: chargeTickets[sequence % chargeTickets.length],
  amount: '1',
  reference: `${prefix}-${sequence}`,
});

async function startAll(dir, memoryFile, openDigest) {
  const [dataPort, controlPort, gatewayPort, paymentsPort] = await Promise.all([
    freePort(),
    freePort(),
    freePort(),
    freePort(),
  ]);
  const sandbox = await startProcess(
    ['sandbox', 'serve', '--state-dir', join(dir, 'sandbox'), '--seed', '1'].concat([
      '--port',
      String(dataPort),
      '--control-port',
      String(controlPort),
    ]),
    { SIDEGUARD_SANDBOX_TOKEN: randomBytes(24).toString('base64url') },
    /data plane:\s+(http:\/\/\S+)/,
  );
  const gateway = await startProcess(
    ['serve', '--config', config, '--port', String(gatewayPort)].concat([
      '--upstream-port',
      `payments=${paymentsPort}`,
    ]),
    {
      SG_BENCH_SANDBOX_URL: sandbox.match[1],
      SG_BENCH_STORE: join(dir, 'gateway.db'),
      SG_BENCH_MEMORY_FILE: memoryFile,
      SG_BENCH_OPEN_DIGEST: openDigest,
      SIDEGUARD_KEYS: `current=k1:1;effect=k1:1;k1:1=${randomBytes(32).toString('base64url')}`,
    },
    /^ready (\{.*\})$/m,
  );
  return {
    url: new URL(`http://localhost:${gatewayPort}/mcp`),
    stop: async () => {
      await gateway.stop();
      await sandbox.stop();
    },
  };
}

/** Benchmark suite entry point (called by bench/run.mjs). */
export async function run({ log = console.log, quick = false } = {}) {
  const setup = settings(quick);
  const dir = join(root, 'bench', '.tmp', `mcp-${process.pid}`);
  mkdirSync(dir, { recursive: true });
  const memoryFile = join(dir, 'memory.jsonl');
  writeFileSync(
    memoryFile,
    `${JSON.stringify({ type: 'entity', name: 'bench-entity', entityType: 'bench', observations: ['one'] })}\n`,
  );
  // The baseline: an SDK v2 client talking to the memory server directly (and the pin to use).
  const direct = new Client({ name: 'bench-direct', version: '1' });
  await direct.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [memoryServer],
      env: { PATH: process.env.PATH ?? '', MEMORY_FILE_PATH: memoryFile },
      stderr: 'ignore',
    }),
  );
  const openNodes = (await direct.listTools()).tools.find((tool) => tool.name === 'open_nodes');
  const all = await startAll(dir, memoryFile, toolDefinitionDigest(openNodes));
  const agent = new Client(
    { name: 'bench-agent', version: '1' },
    { versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
  await agent.connect(
    new StreamableHTTPClientTransport(all.url, {
      requestInit: { headers: { authorization: `Bearer ${agentKey}` } },
    }),
  );
  try {
    const sides = {
      direct: (_sequence) => direct.callTool({ name: 'open_nodes', arguments: readArgs }),
      gateway: (_sequence) => agent.callTool({ name: 'memory.open', arguments: readArgs }),
    };
    for (const call of Object.values(sides)) await measure(call, setup.warmupMs, setup.inFlight);
    const reads = { direct: [], gateway: [] };
    for (let index = 0; index < setup.runs; index += 1) {
      for (const [name, call] of Object.entries(sides)) {
        const result = await measure(call, setup.durationMs, setup.inFlight);
        reads[name].push(result);
        log(
          `run ${index + 1}/${setup.runs} ${name} tool reads: ${result.perSecond}/s (${result.failed} failed)`,
        );
      }
    }
    const c1 = {
      direct: await latency(sides.direct, setup.latencyCalls),
      gateway: await latency(sides.gateway, setup.latencyCalls),
    };
    const writes = [];
    const replays = [];
    for (let index = 0; index < setup.runs; index += 1) {
      const args = writeArgs(`mcp${index}-${Date.now()}`);
      const write = (sequence) =>
        agent.callTool({ name: 'bench.refund.v1', arguments: args(sequence) });
      writes.push(await measure(write, setup.durationMs, setup.inFlight));
      // The same calls again: every one a duplicate answered from the store.
      replays.push(await measure(write, setup.durationMs / 2, setup.inFlight));
      log(
        `run ${index + 1}/${setup.runs} MCP guarded writes: ${writes.at(-1).perSecond}/s, duplicate replays: ${replays.at(-1).perSecond}/s`,
      );
    }
    const summary = (name) => ({
      perSecond: median(reads[name].map((sample) => sample.perSecond)),
      samples: reads[name].map((sample) => sample.perSecond),
      failed: reads[name].reduce((sum, sample) => sum + sample.failed, 0),
      c1: c1[name],
    });
    const results = {
      config: {
        ...setup,
        read: 'open_nodes of @modelcontextprotocol/server-memory (stdio)',
        direct: 'SDK v2 client over stdio to the server',
        gateway: 'SDK v2 client (2026-07-28) over streamable HTTP to /mcp on sideguard serve',
        write: 'bench.refund.v1 through /mcp (one effect each), executed via its HTTP binding',
      },
      reads: { direct: summary('direct'), gateway: summary('gateway') },
      writes: {
        guardedPerSecond: median(writes.map((sample) => sample.perSecond)),
        guardedSamples: writes.map((sample) => sample.perSecond),
        guardedFailed: writes.reduce((sum, sample) => sum + sample.failed, 0),
        duplicateReplaysPerSecond: median(replays.map((sample) => sample.perSecond)),
      },
    };
    results.readRatio = round(results.reads.gateway.perSecond / results.reads.direct.perSecond, 2);
    results.addedP50Ms = round(results.reads.gateway.c1.p50Ms - results.reads.direct.c1.p50Ms, 3);
    const row = (name, perSecond, c1Value) => ({
      row: name,
      'calls/s': perSecond,
      'c1 p50 ms': c1Value?.p50Ms ?? '',
      'c1 p99 ms': c1Value?.p99Ms ?? '',
    });
    const table = [
      row('tool reads direct (stdio)', results.reads.direct.perSecond, c1.direct),
      row('tool reads through /mcp', results.reads.gateway.perSecond, c1.gateway),
      row('guarded tool writes through /mcp', results.writes.guardedPerSecond),
      row('duplicate tool calls through /mcp', results.writes.duplicateReplaysPerSecond),
    ];
    return { name: 'mcp', results, table };
  } finally {
    await agent.close().catch(() => {});
    await direct.close().catch(() => {});
    await all.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
