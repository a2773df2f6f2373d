/**
 * The explorer's throughput and sensitivity: schedules per second with the full workload mix on
 * both cores (two worker processes), the CPU split between the guard, the harness and the checks
 * (the median of three V8 CPU profiles of 15 s, one worker each, over the whole profile and after
 * its first 5 s of JIT warm-up), and the median seconds-to-detection of each catalogued breakage.
 * Targets (issue 9): ≥ 278 schedules/s on 2 cores, harness ≤ 10 % and checks ≤ 15 % (steady
 * state, decision 138), detection ≤ 10 s median and within 60 s.
 */
import { fork } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = fileURLToPath(import.meta.url);
const WORKER = 'SIDEGUARD_EXPLORE_BENCH_WORKER';

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
};

// Worker mode: run schedules of the full mix for a while, never stopping on a violation.
if (process.env[WORKER] !== undefined) {
  const { ChoiceTape, runSchedule } = await import('../../dist/explore/index.js');
  const { checkInvariants } = await import('../../dist/explore/invariants/check-invariants.js');
  const seconds = Number(process.env[WORKER]);
  const firstSeed = Number(process.env.SIDEGUARD_EXPLORE_BENCH_SEED ?? 1);
  let schedules = 0;
  let violating = 0;
  let checkMs = 0;
  const started = performance.now();
  const cpuAtStart = process.cpuUsage();
  while (performance.now() - started < seconds * 1000) {
    const run = await runSchedule(ChoiceTape.fromSeed(firstSeed + schedules), { workload: 'mix' });
    const checkStarted = performance.now();
    const violations = await checkInvariants(run.evidence, { rehashLedger: schedules % 16 === 0 });
    checkMs += performance.now() - checkStarted;
    if (violations.length > 0) violating += 1;
    schedules += 1;
  }
  const elapsedMs = performance.now() - started;
  const cpu = process.cpuUsage(cpuAtStart);
  const cpuMs = (cpu.user + cpu.system) / 1000;
  // Disconnect instead of exiting, so a --cpu-prof profile is written on the way out.
  process.send({ schedules, violating, checkMs, elapsedMs, cpuMs }, () => process.disconnect());
}

function runWorker(seconds, seed, profileDir) {
  let resolveExit = () => undefined;
  const exited = new Promise((resolve) => {
    resolveExit = resolve;
  });
  const message = new Promise((resolve, reject) => {
    const child = fork(here, [], {
      env: {
        ...process.env,
        [WORKER]: String(seconds),
        SIDEGUARD_EXPLORE_BENCH_SEED: String(seed),
      },
      execArgv: profileDir === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${profileDir}`],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    child.once('message', resolve);
    child.once('exit', (code) =>
      code === 0 ? resolveExit() : reject(new Error(`worker exited ${code}`)),
    );
  });
  return Promise.all([message, exited]).then(([result]) => result);
}

/** The category of a profile node's script: guard+store, harness, checks, other. */
function categoryOf(url) {
  if (url.includes('/dist/explore/invariants/') || url.includes('/dist/verify/')) return 'checks';
  if (url.includes('/dist/explore/')) return 'harness';
  if (url.includes('/dist/core/') || url.includes('/dist/stores/') || url.includes('/zod/'))
    return 'guard';
  return 'other';
}

const percentages = (totals) => {
  const sum = Object.values(totals).reduce((a, b) => a + b, 0) || 1;
  return Object.fromEntries(
    Object.entries(totals).map(([key, value]) => [key, Number(((value / sum) * 100).toFixed(1))]),
  );
};

/**
 * Self time per category from a V8 CPU profile: over the whole profile, and after its first
 * `warmUpSeconds` (the steady state a long exploration runs in, which the targets judge).
 */
function cpuSplit(profileDir, warmUpSeconds) {
  const file = readdirSync(profileDir).find((name) => name.endsWith('.cpuprofile'));
  const profile = JSON.parse(readFileSync(join(profileDir, file), 'utf8'));
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const whole = { guard: 0, harness: 0, checks: 0, other: 0 };
  const steady = { guard: 0, harness: 0, checks: 0, other: 0 };
  let elapsedUs = 0;
  for (let index = 0; index < profile.samples.length; index++) {
    const category = categoryOf(byId.get(profile.samples[index])?.callFrame.url ?? '');
    const delta = profile.timeDeltas[index] ?? 0;
    elapsedUs += delta;
    whole[category] += delta;
    if (elapsedUs > warmUpSeconds * 1e6) steady[category] += delta;
  }
  return { whole: percentages(whole), steady: percentages(steady) };
}

export async function run({ log, quick }) {
  const seconds = quick ? 3 : 15;
  const rounds = quick ? 1 : 3;
  const loadAtStart = loadavg().map((value) => Number(value.toFixed(2)));
  const rates = [];
  // On a shared machine wall-clock rates say more about the neighbours than about the explorer:
  // schedules per CPU-second of each worker is what one idle core would give.
  const perCpuSecond = [];
  for (let round = 0; round < rounds; round++) {
    const results = await Promise.all([
      runWorker(seconds, 1 + round * 1_000_000),
      runWorker(seconds, 500_000 + round * 1_000_000),
    ]);
    const rate = results.reduce(
      (sum, result) => sum + result.schedules / (result.elapsedMs / 1000),
      0,
    );
    const checkShare =
      results.reduce((sum, result) => sum + result.checkMs, 0) /
      results.reduce((sum, result) => sum + result.elapsedMs, 0);
    rates.push(rate);
    perCpuSecond.push(
      results.reduce((sum, result) => sum + result.schedules, 0) /
        (results.reduce((sum, result) => sum + result.cpuMs, 0) / 1000),
    );
    log(
      `round ${round + 1}: ${rate.toFixed(0)} schedules/s on 2 workers, ${perCpuSecond.at(-1).toFixed(0)} per CPU-second (checks ${(checkShare * 100).toFixed(1)} % of wall time; ${results.map((r) => r.violating).join('+')} schedules with a violation)`,
    );
  }
  // Each profiled worker runs as long as a throughput round (15 s). An 8 s profile was half
  // JIT warm-up, in which the harness's share runs 2-3 points above its steady state, and moved by
  // about a point from run to run. Profile `rounds` workers (one at a time, seeds 42, 43, …) and
  // take each category's median, over the whole profile and after its warm-up (decision 138).
  const warmUpSeconds = quick ? 1 : 5;
  const splits = [];
  const steadySplits = [];
  for (let round = 0; round < rounds; round++) {
    const profileDir = mkdtempSync(join(tmpdir(), 'sideguard-explore-prof-'));
    try {
      await runWorker(seconds, 42 + round, profileDir);
      const { whole, steady } = cpuSplit(profileDir, warmUpSeconds);
      splits.push(whole);
      steadySplits.push(steady);
    } finally {
      rmSync(profileDir, { recursive: true, force: true });
    }
    log(
      `CPU split (profiled worker ${round + 1}/${rounds}): ${JSON.stringify(splits.at(-1))}; after its first ${warmUpSeconds} s: ${JSON.stringify(steadySplits.at(-1))}`,
    );
  }
  const medianSplit = (runs) =>
    Object.fromEntries(
      Object.keys(runs[0]).map((key) => [key, median(runs.map((each) => each[key]))]),
    );
  const split = medianSplit(splits);
  const steadySplit = medianSplit(steadySplits);
  log(
    `CPU split (median of ${rounds}): ${JSON.stringify(split)}; after warm-up ${JSON.stringify(steadySplit)}`,
  );
  const { explore, openTriggers, BREAKAGE_CATALOGUE } = await import('../../dist/explore/index.js');
  const detection = {};
  // Every catalogued breakage (store, harness, host and the core's), each from three seeds of the
  // mix with the open findings' triggers left out, as the catalogue test runs them.
  for (const { breakage } of BREAKAGE_CATALOGUE) {
    const times = [];
    for (const seed of quick ? [1] : [1, 10_001, 20_001]) {
      const report = await explore({
        workload: 'mix',
        seconds: 60,
        seed,
        breakages: [breakage],
        shrink: false,
        scheduleOptions: { avoid: openTriggers() },
      });
      times.push(
        report.failure === undefined
          ? Number.POSITIVE_INFINITY
          : report.failure.detectedAfterMs / 1000,
      );
    }
    detection[breakage] = {
      medianSeconds: Number(median(times).toFixed(2)),
      runs: times.map((t) => Number(t.toFixed(2))),
    };
    log(`${breakage}: detected after ${times.map((t) => `${t.toFixed(2)} s`).join(' / ')}`);
  }
  const rate = median(rates);
  const cpuRate = median(perCpuSecond);
  const results = {
    schedulesPerSecondMedian: Number(rate.toFixed(0)),
    rates: rates.map((value) => Number(value.toFixed(0))),
    schedulesPerCpuSecondMedian: Number(cpuRate.toFixed(0)),
    schedulesPerCpuSecond: perCpuSecond.map((value) => Number(value.toFixed(0))),
    /** What two idle cores would give: twice the per-CPU-second rate (workers share nothing). */
    projectedOnTwoIdleCores: Number((2 * cpuRate).toFixed(0)),
    cpuSplitPercent: split,
    cpuSplitPercentRuns: splits,
    profiledSeconds: seconds,
    warmUpSeconds,
    cpuSplitPercentAfterWarmUp: steadySplit,
    cpuSplitPercentAfterWarmUpRuns: steadySplits,
    detection,
    loadAverageAtStart: loadAtStart,
    loadAverageAtEnd: loadavg().map((value) => Number(value.toFixed(2))),
    targets: [
      {
        target: '≥ 278 schedules/s on 2 cores',
        measured: Number(rate.toFixed(0)),
        met: rate >= 278,
      },
      {
        target: '≥ 278 schedules/s on 2 idle cores (2 × schedules per CPU-second)',
        measured: Number((2 * cpuRate).toFixed(0)),
        met: 2 * cpuRate >= 278,
      },
      {
        // A long exploration (the CI hour the throughput target is about) runs in the steady
        // state; the whole profile, warm-up included, is in the table and in cpuSplitPercent.
        target: `harness ≤ 10 % of CPU (steady state: ${seconds} s profiles after their first ${warmUpSeconds} s)`,
        measured: steadySplit.harness,
        met: steadySplit.harness <= 10,
      },
      {
        target: `checks ≤ 15 % of CPU (steady state: ${seconds} s profiles after their first ${warmUpSeconds} s)`,
        measured: steadySplit.checks,
        met: steadySplit.checks <= 15,
      },
      ...Object.entries(detection).map(([breakage, value]) => ({
        target: `${breakage} detected: median ≤ 10 s, all ≤ 60 s`,
        measured: value.medianSeconds,
        met: value.medianSeconds <= 10 && value.runs.every((t) => t <= 60),
      })),
    ],
  };
  return {
    name: 'explore',
    results,
    table: [
      {
        measure: 'schedules/s, full mix, 2 workers (median)',
        value: results.schedulesPerSecondMedian,
        runs: results.rates.join(' / '),
      },
      {
        measure: 'schedules per CPU-second of one worker (median)',
        value: results.schedulesPerCpuSecondMedian,
        runs: results.schedulesPerCpuSecond.join(' / '),
      },
      {
        measure: 'CPU: guard+store / harness / checks / other, whole profile (%, median)',
        value: `${split.guard} / ${split.harness} / ${split.checks} / ${split.other}`,
        runs: `harness ${splits.map((each) => each.harness).join(' / ')}`,
      },
      {
        measure: `the same after each worker's first ${warmUpSeconds} s (%, median)`,
        value: `${steadySplit.guard} / ${steadySplit.harness} / ${steadySplit.checks} / ${steadySplit.other}`,
        runs: `harness ${steadySplits.map((each) => each.harness).join(' / ')}`,
      },
      ...Object.entries(detection).map(([breakage, value]) => ({
        measure: `seconds to detect ${breakage} (median)`,
        value: value.medianSeconds,
        runs: value.runs.join(' / '),
      })),
    ],
  };
}
