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
 *   node bench/cpu-per-action.mjs --against bench/.tmp/dist-base   # A/B in one process:
 *                                                     # rounds alternate between the builds
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
    against: { type: 'string' },
    'cpu-prof': { type: 'boolean', default: false },
    json: { type: 'boolean', default: false },
  },
});
const actions = Number(flags.actions);
const rounds = Number(flags.rounds);
const warmup = Number(flags.warmup);

/** One build of the guard with its own action definition and keys. */
async function contender(dist) {
  const api = await import(pathToFileURL(join(resolve(dist), 'index.js')).href);
  return {
    dist: resolve(dist),
    api,
    refund: refundAction(api.defineAction),
    keyRing: api.createDevelopmentKeyRing(),
  };
}

/** A refund-shaped action: charge, amount, currency, reason are protected; the request id is not. */
function refundAction(defineAction) {
  return defineAction({
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
}

function receiptOf(context) {
  return { id: `re_${context.providerIdempotencyKey.slice(3, 27)}`, provider: 'noop' };
}

let sequence = 0;

/**
 * Runs `count` actions one at a time on a fresh memory store (as each measurement of the
 * `stores` suite does); every one must end `verified`.
 */
async function runActions({ api, refund, keyRing }, count) {
  const guard = api.createGuard({ store: api.createMemoryStore(), keyRing });
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
async function measureRound(build) {
  const before = process.cpuUsage();
  const started = performance.now();
  await runActions(build, actions);
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
  const parentOf = new Map();
  for (const node of profile.nodes)
    for (const child of node.children ?? []) parentOf.set(child, node.id);
  const nameOf = (id) => {
    const { functionName, url, lineNumber } = byNode.get(id).callFrame;
    const file = url.replace(/^file:\/\//, '').replace(`${root}/`, '');
    const key = `${functionName || '(anonymous)'} ${file.split('/').slice(-2).join('/')}:${lineNumber + 1}`;
    return { key, area: areaOf(functionName, file) };
  };
  const byFunction = new Map();
  const byArea = new Map();
  const inclusive = new Map();
  let total = 0;
  for (const [id, micros] of selfMicros) {
    const { key, area } = nameOf(id);
    byFunction.set(key, (byFunction.get(key) ?? 0) + micros);
    byArea.set(area, (byArea.get(area) ?? 0) + micros);
    total += micros;
    // Inclusive time: each function on the stack once, however often it recurses.
    const onStack = new Set();
    for (let at = id; at !== undefined; at = parentOf.get(at)) onStack.add(nameOf(at).key);
    for (const name of onStack) inclusive.set(name, (inclusive.get(name) ?? 0) + micros);
  }
  const top = (map, limit) =>
    [...map]
      .sort((a, b) => b[1] - a[1])
      .slice(0, limit)
      .map(([name, micros]) => ({ name, percent: Number(((micros / total) * 100).toFixed(1)) }));
  return { areas: top(byArea, 20), functions: top(byFunction, 30), inclusive: top(inclusive, 60) };
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

/** Median CPU µs per action of each build; with `--against`, rounds alternate between the two. */
const builds = [await contender(flags.dist)];
if (flags.against !== undefined) builds.push(await contender(flags.against));
for (const build of builds) await runActions(build, warmup);
const results = builds.map(() => []);
for (let round = 0; round < rounds; round += 1) {
  for (const [index, build] of builds.entries()) results[index].push(await measureRound(build));
}
const summaryOf = (build, runs) => ({
  dist: build.dist,
  cpuMicrosPerAction: Number(median(runs.map((r) => r.cpuMicros)).toFixed(1)),
  cpuMicrosRuns: runs.map((r) => Number(r.cpuMicros.toFixed(1))),
  wallMicrosPerAction: Number(median(runs.map((r) => r.wallMicros)).toFixed(1)),
});
const summary = {
  actions,
  rounds,
  ...summaryOf(builds[0], results[0]),
  ...(builds[1] === undefined
    ? {}
    : {
        against: summaryOf(builds[1], results[1]),
        // Each round against the other build's round next to it: drift in the machine's load
        // cancels out of a pair, so this is steadier than the ratio of the two medians.
        pairedRatio: Number(
          median(
            results[0].map((run, index) => run.cpuMicros / results[1][index].cpuMicros),
          ).toFixed(3),
        ),
      }),
  loadAverage: (await import('node:os')).loadavg().map((value) => Number(value.toFixed(2))),
};

if (flags['cpu-prof']) {
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 100 });
  await session.post('Profiler.start');
  await runActions(builds[0], actions);
  const { profile } = await session.post('Profiler.stop');
  session.disconnect();
  const out = join(root, 'bench', '.tmp');
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, 'cpu-per-action.cpuprofile'), JSON.stringify(profile));
  summary.profile = summariseProfile(profile);
}

if (flags.json) console.log(JSON.stringify(summary));
else {
  const line = (label, part) =>
    console.log(
      `${label}: ${part.cpuMicrosPerAction} µs CPU per action (median of ${rounds} × ${actions}; runs ${part.cpuMicrosRuns.join(', ')}); wall ${part.wallMicrosPerAction} µs  [${part.dist}]`,
    );
  line('this', summary);
  if (summary.against !== undefined) {
    line('against', summary.against);
    const ratio = summary.cpuMicrosPerAction / summary.against.cpuMicrosPerAction;
    console.log(
      `ratio this / against: ${ratio.toFixed(3)} of the medians, ${summary.pairedRatio} median of paired rounds`,
    );
  }
  console.log(`load average: ${summary.loadAverage.join(' ')}`);
  if (summary.profile) {
    console.log('\nself time by area:');
    for (const { name, percent } of summary.profile.areas)
      console.log(`  ${String(percent).padStart(5)} %  ${name}`);
    console.log('\ntop functions (self time):');
    for (const { name, percent } of summary.profile.functions)
      console.log(`  ${String(percent).padStart(5)} %  ${name}`);
    console.log('\ntop functions (inclusive time):');
    for (const { name, percent } of summary.profile.inclusive)
      console.log(`  ${String(percent).padStart(5)} %  ${name}`);
  }
}
