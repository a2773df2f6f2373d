/**
 * `npm run bench`: runs every `bench/suites/*.mjs` (each exports `run({ log, quick })` returning
 * `{ name, results, table? }`), each in its own child process so suites never skew each other's
 * memory or warm-up, prints a table per suite and writes `bench/results.json` with the machine it
 * ran on. Suites import the built package from `dist/`: run `npm run build` first.
 *
 * Options: `--only NAME` (repeatable, or comma-separated) runs only those suites and keeps the
 * other suites' last results in `bench/results.json` (every suite records its own date and load
 * average, so results from different runs are never mistaken for one run); `--quick` shortens every
 * measurement for a smoke check (its numbers are not comparable) and writes nothing.
 *
 * The peers it compares with (Prism, Powertools, the Redis client) are not dependencies of
 * sideguard: `bench/` has its own package.json and lockfile, installed (`npm ci`) on first use.
 */
import { fork, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..');
const SUITE_ENV = 'SIDEGUARD_BENCH_SUITE';

// Child mode: run one suite and send its outcome (and this process's peak RSS) to the parent.
if (process.env[SUITE_ENV] !== undefined) {
  const name = process.env[SUITE_ENV];
  const quick = process.env.SIDEGUARD_BENCH_QUICK === '1';
  try {
    const suite = await import(pathToFileURL(join(here, 'suites', `${name}.mjs`)).href);
    const outcome = await suite.run({ log: (message) => console.log(`  ${message}`), quick });
    const peakRssMb = Number((process.resourceUsage().maxRSS / 1024).toFixed(1));
    process.send({ outcome: { ...outcome, peakRssMb } }, () => process.exit(0));
  } catch (error) {
    process.send(
      { error: error instanceof Error ? (error.stack ?? error.message) : String(error) },
      () => process.exit(1),
    );
  }
  await new Promise(() => undefined);
}

function usage(message) {
  if (message) console.error(message);
  console.error('usage: npm run bench -- [--only NAME[,NAME…]] [--quick]');
  process.exit(2);
}

let options;
try {
  options = parseArgs({
    options: {
      only: { type: 'string', multiple: true },
      quick: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
  }).values;
} catch (error) {
  usage(error instanceof Error ? error.message : String(error));
}
if (options.help) usage();

// The benchmark's own install (bench/package.json, bench/package-lock.json), once.
if (!existsSync(join(here, 'node_modules', '.package-lock.json'))) {
  console.log('bench: installing the benchmark peers into bench/node_modules (npm ci, once)…');
  const installed = spawnSync('npm', ['ci', '--no-audit', '--no-fund'], {
    cwd: here,
    stdio: 'inherit',
  });
  if (installed.status !== 0) {
    console.error(
      'bench: `npm ci` in bench/ failed; run it there yourself (it needs the npm registry) and try again.',
    );
    process.exit(1);
  }
}

if (!existsSync(join(root, 'dist', 'index.js'))) {
  console.error(
    'bench: dist/ is missing — the benchmarks measure the built package. Run `npm run build` first.',
  );
  process.exit(1);
}

const available = readdirSync(join(here, 'suites'))
  .filter((file) => file.endsWith('.mjs'))
  .map((file) => file.slice(0, -'.mjs'.length))
  .sort();
const only = (options.only ?? []).flatMap((value) => value.split(',')).filter(Boolean);
for (const name of only) {
  if (!available.includes(name))
    usage(`bench: no suite named "${name}" (have: ${available.join(', ')})`);
}
const selected = only.length > 0 ? available.filter((name) => only.includes(name)) : available;

const cpuList = cpus();
const machine = {
  cpuModel: cpuList[0]?.model ?? 'unknown',
  cores: cpuList.length,
  totalMemoryMb: Math.round(totalmem() / 1024 / 1024),
  platform: `${process.platform} ${process.arch}`,
  node: process.version,
  date: new Date().toISOString(),
  /** 1/5/15-minute load averages when the bench started: other work on the machine skews results. */
  loadAverageAtStart: loadavg().map((value) => Number(value.toFixed(2))),
};

/** Prints rows (objects with the same keys) as an aligned text table. */
function printTable(rows) {
  if (rows.length === 0) return;
  const columns = Object.keys(rows[0]);
  const text = (value) => (value === null || value === undefined ? '' : String(value));
  const widths = columns.map((column) =>
    Math.max(column.length, ...rows.map((row) => text(row[column]).length)),
  );
  const numeric = columns.map((column) =>
    rows.every((row) => row[column] === '' || typeof row[column] === 'number'),
  );
  const line = (cells) =>
    cells
      .map((cell, index) =>
        numeric[index] ? cell.padStart(widths[index]) : cell.padEnd(widths[index]),
      )
      .join('  ')
      .trimEnd();
  console.log(line(columns));
  console.log(line(widths.map((width) => '-'.repeat(width))));
  for (const row of rows) console.log(line(columns.map((column) => text(row[column]))));
}

/** A fallback table for suites that return none: every numeric leaf of `results`. */
function flatten(value, prefix = '') {
  if (typeof value === 'number') return [{ metric: prefix, value }];
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return [];
  return Object.entries(value).flatMap(([key, child]) =>
    flatten(child, prefix ? `${prefix}.${key}` : key),
  );
}

/** Runs one suite in a child process; resolves with `{ name, results, table?, peakRssMb }`. */
function runSuite(name) {
  return new Promise((resolve, reject) => {
    const child = fork(fileURLToPath(import.meta.url), [], {
      env: { ...process.env, [SUITE_ENV]: name, SIDEGUARD_BENCH_QUICK: options.quick ? '1' : '0' },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      execArgv: ['--expose-gc'],
    });
    let settled = false;
    child.on('message', (message) => {
      settled = true;
      if (message.error !== undefined) reject(new Error(message.error));
      else resolve(message.outcome);
    });
    child.once('exit', (code, signal) => {
      if (!settled)
        reject(new Error(`suite ${name} exited (code ${code}, signal ${signal}) without results`));
    });
  });
}

const resultsPath = join(here, 'results.json');
const output = { machine, options: { quick: options.quick, only }, suites: keptSuites() };

/** With `--only`, the suites not run this time keep their last results (each has its own `ranAt`). */
function keptSuites() {
  if (only.length === 0 || !existsSync(resultsPath)) return {};
  try {
    const previous = JSON.parse(readFileSync(resultsPath, 'utf8'));
    const kept = {};
    for (const [name, suite] of Object.entries(previous.suites ?? {})) {
      if (selected.includes(name)) continue;
      kept[name] = { ranAt: previous.machine ?? null, ...suite };
    }
    return kept;
  } catch (error) {
    console.error(
      `bench: ${resultsPath} is not readable JSON (${error instanceof Error ? error.message : String(error)}); only this run's suites will be written`,
    );
    return {};
  }
}
let failed = false;
console.log(
  `Sideguard bench on ${machine.cpuModel} × ${machine.cores}, ${machine.node}, ${machine.date}, load ${machine.loadAverageAtStart.join(' ')}${options.quick ? ' (quick: smoke check only)' : ''}`,
);
for (const name of selected) {
  console.log(`\n== ${name}`);
  const started = performance.now();
  const suiteLoad = loadavg().map((value) => Number(value.toFixed(2)));
  try {
    const { name: reported, results, table, peakRssMb } = await runSuite(name);
    const seconds = Number(((performance.now() - started) / 1000).toFixed(1));
    const ranAt = {
      date: new Date(Date.now() - seconds * 1000).toISOString(),
      loadAverageAtStart: suiteLoad,
      loadAverageAtEnd: loadavg().map((value) => Number(value.toFixed(2))),
    };
    output.suites[reported ?? name] = { ranAt, seconds, peakRssMb, results };
    console.log('');
    printTable(Array.isArray(table) ? table : flatten(results));
    if (Array.isArray(results?.targets)) {
      console.log('');
      printTable(
        results.targets.map((target) => ({
          target: target.target,
          measured: target.measured ?? 'not measured',
          'compared with':
            target.baselineName === undefined
              ? ''
              : `${target.baselineName} = ${target.baseline ?? '?'}`,
          ratio: target.ratio ?? '',
          required: target.requiredRatio ?? '',
          verdict: target.met === null ? 'not measured' : target.met ? 'met' : 'MISSED',
        })),
      );
    }
    for (const [what, why] of Object.entries(results?.skipped ?? {}))
      console.log(`skipped ${what}: ${why}`);
    console.log(`(${name}: ${seconds} s, suite process peak RSS ${peakRssMb} MB)`);
  } catch (error) {
    failed = true;
    output.suites[name] = { error: error instanceof Error ? error.message : String(error) };
    console.error(
      `bench: suite ${name} failed: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
}
output.machine.loadAverageAtEnd = loadavg().map((value) => Number(value.toFixed(2)));
output.runnerPeakRssMb = Number((process.resourceUsage().maxRSS / 1024).toFixed(1));
if (options.quick) {
  console.log(`\n--quick: ${resultsPath} left as it was (smoke-check numbers are not comparable)`);
} else {
  writeFileSync(resultsPath, `${JSON.stringify(output, null, 2)}\n`);
  console.log(`\nwrote ${resultsPath}`);
}
process.exit(failed ? 1 : 0);
