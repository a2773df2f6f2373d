/**
 * Growth (issue 14): does an action cost more when the store holds a long history? Full
 * no-approval actions (the `stores` suite's no-op) on SQLite FULL, the default store, against a
 * store holding 1,000,000 proposals and ~6,000,000 ledger events and against an empty one, side
 * by side in one run (c1 and c64, interleaved, median of 3). Then, on the measured tenant's own
 * chain in that store (~240,000 real events), whether ledger export and verification are linear
 * and stream in constant memory. The seeded store is built once (see `kit/growth-seed.mjs`,
 * printing its progress) and cached under `bench/.tmp/growth/`; runs add a few thousand real
 * actions to it. Run it alone with `npm run bench -- --only growth`.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startContender } from './kit/contenders.mjs';
import { seededStore, seedSizes } from './kit/growth-seed.mjs';
import { measureLedgerScale } from './kit/ledger-scale.mjs';
import { ratioTarget, round, rssTargets, summarise } from './kit/stats.mjs';
import { RSS_CEILING_MB } from './kit/stores-targets.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const tmpRoot = join(root, 'bench', '.tmp');
/** Growth may cost at most this much: the seeded store's rate ≥ this × the empty store's. */
const GROWTH_RATIO = 0.8;

function settings(quick) {
  return quick
    ? { runs: 2, durationMs: 300, warmupMs: 100, maxActionsPerRun: 5_000 }
    : { runs: 3, durationMs: 2_000, warmupMs: 300, maxActionsPerRun: 60_000 };
}

/** Empty and seeded SQLite FULL stores at c1 and c64, interleaved; rates by store and key. */
async function measureStores({ seededPath, dir, config, log, processes }) {
  const stores = {
    empty: startContender({ kind: 'sqlite', path: join(dir, 'empty.db'), synchronous: 'full' }),
    seeded: startContender({ kind: 'sqlite', path: seededPath, synchronous: 'full' }),
  };
  try {
    const openMs = {};
    for (const [name, group] of Object.entries(stores)) {
      [openMs[name]] = await group.ready;
      log(`growth: ${name} store opened in ${round(openMs[name])} ms (quick_check on open)`);
    }
    const cases = Object.entries(stores).flatMap(([name, group]) =>
      [1, 64].map((concurrency) => ({ name, key: `c${concurrency}`, group, concurrency })),
    );
    // Interleaved: c1 of both stores, then c64 of both.
    cases.sort((a, b) => a.concurrency - b.concurrency);
    const once = (item, durationMs, label) =>
      item.group.measure({
        concurrency: item.concurrency,
        durationMs,
        maxCalls: config.maxActionsPerRun,
        label,
      });
    for (const item of cases) await once(item, config.warmupMs, `warm-${item.name}-${item.key}`);
    const samples = new Map(cases.map((item) => [item, []]));
    for (let index = 0; index < config.runs; index += 1) {
      for (const item of cases) {
        const sample = await once(item, config.durationMs, `run${index}-${item.name}-${item.key}`);
        samples.get(item).push(sample);
        log(
          `run ${index + 1}/${config.runs} ${item.name} ${item.key}: ${round(sample.perSecond)}/s p99 ${round(sample.p99Ms, 2)} ms CPU ${round(sample.cpuUsPerCall)} µs/action${sample.failed ? ` failed ${sample.failed}` : ''}`,
        );
      }
    }
    const actions = {};
    for (const item of cases) {
      actions[item.name] ??= {};
      actions[item.name][item.key] = summarise(samples.get(item));
    }
    for (const [name, group] of Object.entries(stores)) {
      processes[`${name} store contender`] = round((await group.stop())[0], 1);
    }
    return { actions, openMs: { empty: round(openMs.empty), seeded: round(openMs.seeded) } };
  } finally {
    for (const group of Object.values(stores)) group.kill();
  }
}

/** The growth and ledger targets (the ledger's are this suite's reading of "linear, streams"). */
function evaluateTargets({ actions, ledger, processes, seed }) {
  const label = `${seed.proposals.toLocaleString('en')}-proposal store`;
  const rate = (name, key) => actions[name]?.[key]?.perSecond ?? null;
  const targets = ['c1', 'c64'].map((key) =>
    ratioTarget(
      `${label} SQLite FULL ${key} ≥ ${GROWTH_RATIO}× the empty store`,
      rate('seeded', key),
      rate('empty', key),
      `empty store ${key}`,
      GROWTH_RATIO,
    ),
  );
  const runs = ledger.cliVerify ?? [];
  const [quarter, , whole] = runs;
  if (quarter !== undefined && whole !== undefined) {
    const target = (name, measured, baseline, baselineName) => ({
      ...ratioTarget(name, measured, baseline, baselineName, 0),
      requiredRatio: '≤ 1.25',
      met: measured / baseline <= 1.25,
    });
    targets.push(
      target(
        `ledger verify (CLI) streams: peak RSS at ${whole.lines} events ≤ 1.25× at ${quarter.lines}`,
        whole.maxRssMb,
        quarter.maxRssMb,
        `peak RSS MB at ${quarter.lines}`,
      ),
      target(
        `ledger verify (CLI) linear: µs/event (after start-up) at ${whole.lines} events ≤ 1.25× at ${quarter.lines}`,
        whole.usPerEvent,
        quarter.usPerEvent,
        `µs/event at ${quarter.lines}`,
      ),
    );
  }
  return [...targets, ...rssTargets(processes, RSS_CEILING_MB)];
}

/** Benchmark suite entry point (called by bench/run.mjs). */
export async function run({ log = console.log, quick = false } = {}) {
  const config = settings(quick);
  const sizes = seedSizes(quick);
  const dir = join(tmpRoot, `growth-run-${process.pid}-${randomBytes(3).toString('hex')}`);
  mkdirSync(dir, { recursive: true });
  try {
    const seeded = await seededStore(tmpRoot, sizes, log);
    const processes = {};
    const { actions, openMs } = await measureStores({
      seededPath: seeded.path,
      dir,
      config,
      log,
      processes,
    });
    const ledger = measureLedgerScale(seeded.path, join(dir, 'ledger'), log);
    if (ledger.exported !== undefined) {
      processes['guard.exportLedgerChunks (one process)'] = ledger.exported.maxRssMb;
      processes['guard.verifyLedger (one process)'] = ledger.verified.maxRssMb;
      for (const one of ledger.cliVerify)
        processes[`sideguard ledger verify, ${one.lines} events`] = one.maxRssMb;
    }
    processes['suite process (seeding copies, orchestration)'] = round(
      process.resourceUsage().maxRSS / 1024,
      1,
    );
    const results = {
      config: {
        ...config,
        store: 'SQLite FULL (the default store), one tenant measured (bench-tenant)',
        seed: seeded.seed,
        seedCached: seeded.cached,
        seedFile: seeded.path,
      },
      actions,
      openMs,
      ledger,
      peakRssByProcess: processes,
      targets: evaluateTargets({ actions, ledger, processes, seed: seeded.seed }),
    };
    return { name: 'growth', results, table: tableOf(results) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function tableOf(results) {
  const rows = [];
  for (const [name, byKey] of Object.entries(results.actions)) {
    for (const [key, value] of Object.entries(byKey)) {
      rows.push({
        measurement: `SQLite FULL ${key}, ${name === 'seeded' ? `${results.config.seed.proposals.toLocaleString('en')} proposals / ${results.config.seed.ledgerEvents.toLocaleString('en')} events` : 'empty store'}`,
        'per second': value.perSecond,
        'p99 ms': value.p99Ms,
        'CPU µs/call': value.cpuUsPerCall ?? '',
        'peak RSS MB': '',
        runs: value.runs.join(' / '),
      });
    }
  }
  const ledger = results.ledger;
  const ledgerRow = (measurement, one) => ({
    measurement,
    'per second': one.ms > 0 ? round((one.events / one.ms) * 1000) : '',
    'p99 ms': '',
    'CPU µs/call': '',
    'peak RSS MB': one.maxRssMb,
    runs: `${one.events} events in ${one.ms} ms`,
  });
  if (ledger.exported !== undefined) {
    rows.push(ledgerRow('guard.exportLedgerChunks (events/s)', ledger.exported));
    rows.push(ledgerRow(`guard.verifyLedger: ${ledger.verified.verdict}`, ledger.verified));
    for (const one of ledger.cliVerify)
      rows.push(ledgerRow(`sideguard ledger verify: ${one.verdict} (events/s)`, one));
  }
  return rows;
}
