/**
 * CPU per guard action (issue 14): N `guard.run`s of a refund-like action on the memory store
 * with a no-op executor and verifier, reporting CPU µs per action from `process.cpuUsage()`
 * (user + system). The memory store does no I/O, so this is the guard's CPU ceiling. Runs
 * against dist/ (`npm run build` first). Not part of `npm run bench`: a tool for A/B work.
 *
 *   node bench/cpu-per-action.mjs                     # 5 rounds × 5,000 actions, median
 *                                                     # (each round on a fresh store)
 *   node bench/cpu-per-action.mjs --actions 2000 --rounds 3
 *   node bench/cpu-per-action.mjs --cpu-prof          # also profiles one round: the top self
 *                                                     # times and a split by area; writes
 *                                                     # bench/.tmp/cpu-per-action.cpuprofile
 *   node bench/cpu-per-action.mjs --dist /path/to/other/dist   # A/B against another build
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { z } from 'zod';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const { values: flags } = parseArgs({
  options: {
    actions: { type: 'string', default: '5000' },
    rounds: { type: 'string', default: '5' },
    warmup: { type: 'string', default: '1000' },
    dist: { type: 'string', default: join(root, 'dist') },
    'cpu-prof': { type: 'boolean', default: false },
    json: { type: 'boolean', default: false },
  },
});
const actions = Number(flags.actions);
const rounds = Number(flags.rounds);
const warmup = Number(flags.warmup);
const dist = resolve(flags.dist);
const { createDevelopmentKeyRing, createGuard, createMemoryStore, defineAction } = await import(
  pathToFileURL(join(dist, 'index.js')).href
);

/** A refund-shaped action: charge, amount, currency, reason are protected; the request id is not. */
const refund = defineAction({
  type: { namespace: 'bench', name: 'refund', version: 1 },
  input: z.object({
    chargeId: z.string(),
    amountMinor: z.number().int(),
    currency: z.string(),
    reason: z.string(),
    requestId: z.string(),
  }),
  protectedFields: ['chargeId', 'amountMinor', 'currency', 'reason'],
  policy: () => ({ decision: 'allow', reason: 'bench_allows' }),
  async execute(_input, context) {
    return { kind: 'accepted', receipt: receiptOf(context) };
  },
  async verify(_input, context) {
    return { kind: 'present', receipt: receiptOf(context) };
  },
});

function receiptOf(context) {
  return { id: `re_${context.providerIdempotencyKey.slice(3, 27)}`, provider: 'noop' };
}

const keyRing = createDevelopmentKeyRing();
let sequence = 0;

/**
 * Runs `count` actions one at a time on a fresh memory store (as each measurement of the
 * `stores` suite does); every one must end `verified`.
 */
async function runActions(count) {
  const guard = createGuard({ store: createMemoryStore(), keyRing });
  for (let index = 0; index < count; index += 1) {
    sequence += 1;
    const outcome = await guard.run(refund, {
      tenant: 'bench-tenant',
      principal: 'bench',
      input: {
        chargeId: `ch_${sequence.toString(36).padStart(8, '0')}`,
        amountMinor: 1000 + (sequence % 5000),
        currency: 'eur',
        reason: 'requested_by_customer',
        requestId: `req_${sequence}`,
      },
    });
    if (outcome.outcome !== 'verified') throw new Error(`action ${sequence}: ${outcome.outcome}`);
  }
}

/** CPU µs (user + system) per action over one round. */
async function measureRound() {
  const before = process.cpuUsage();
  const started = performance.now();
  await runActions(actions);
  const used = process.cpuUsage(before);
  const wallMs = performance.now() - started;
  return { cpuMicros: (used.user + used.system) / actions, wallMicros: (wallMs * 1000) / actions };
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};

/** Where self time went: the top functions and a split by source area. */
function summariseProfile(profile) {
  const byNode = new Map(profile.nodes.map((node) => [node.id, node]));
  const selfMicros = new Map();
  const deltas = profile.timeDeltas;
  for (let index = 0; index < profile.samples.length; index += 1)
    selfMicros.set(
      profile.samples[index],
      (selfMicros.get(profile.samples[index]) ?? 0) + (deltas[index] ?? 0),
    );
  const byFunction = new Map();
  const byArea = new Map();
  let total = 0;
  for (const [id, micros] of selfMicros) {
    const { functionName, url, lineNumber } = byNode.get(id).callFrame;
    const file = url.replace(/^file:\/\//, '').replace(`${root}/`, '');
    const key = `${functionName || '(anonymous)'} ${file.split('/').slice(-2).join('/')}:${lineNumber + 1}`;
    byFunction.set(key, (byFunction.get(key) ?? 0) + micros);
    const area = areaOf(functionName, file);
    byArea.set(area, (byArea.get(area) ?? 0) + micros);
    total += micros;
  }
  const top = (map, limit) =>
    [...map]
      .sort((a, b) => b[1] - a[1])
      .slice(0, limit)
      .map(([name, micros]) => ({ name, percent: Number(((micros / total) * 100).toFixed(1)) }));
  return { areas: top(byArea, 20), functions: top(byFunction, 30) };
}

function areaOf(functionName, file) {
  if (functionName === '(garbage collector)') return 'gc';
  if (functionName === '(idle)' || functionName === '(program)') return functionName;
  if (file.includes('node_modules/zod')) return 'zod';
  const core = file.match(/dist\/(core\/guard|core|stores\/[a-z]+)\/([a-z-]+)\.js$/);
  if (core) return `${core[1]}/${core[2]}`;
  if (file.startsWith('node:') || file === '') return `node ${functionName || ''}`.trim();
  return file.split('/').slice(-2).join('/');
}

await runActions(warmup);
const results = [];
for (let round = 0; round < rounds; round += 1) results.push(await measureRound());
const summary = {
  dist,
  actions,
  rounds,
  cpuMicrosPerAction: Number(median(results.map((r) => r.cpuMicros)).toFixed(1)),
  cpuMicrosRuns: results.map((r) => Number(r.cpuMicros.toFixed(1))),
  wallMicrosPerAction: Number(median(results.map((r) => r.wallMicros)).toFixed(1)),
  loadAverage: (await import('node:os')).loadavg().map((value) => Number(value.toFixed(2))),
};

if (flags['cpu-prof']) {
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 100 });
  await session.post('Profiler.start');
  await runActions(actions);
  const { profile } = await session.post('Profiler.stop');
  session.disconnect();
  const out = join(root, 'bench', '.tmp');
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, 'cpu-per-action.cpuprofile'), JSON.stringify(profile));
  summary.profile = summariseProfile(profile);
}

if (flags.json) console.log(JSON.stringify(summary));
else {
  console.log(
    `CPU per action: ${summary.cpuMicrosPerAction} µs (median of ${rounds} × ${actions}; runs ${summary.cpuMicrosRuns.join(', ')}); wall ${summary.wallMicrosPerAction} µs; load ${summary.loadAverage.join(' ')}`,
  );
  if (summary.profile) {
    console.log('\nself time by area:');
    for (const { name, percent } of summary.profile.areas)
      console.log(`  ${String(percent).padStart(5)} %  ${name}`);
    console.log('\ntop functions (self time):');
    for (const { name, percent } of summary.profile.functions)
      console.log(`  ${String(percent).padStart(5)} %  ${name}`);
  }
}
