/**
 * The explorer: runs schedule after schedule (seed, seed + 1, …) for a time or count budget,
 * checks every schedule's invariants, re-runs one seed in 100 to prove determinism, cross-checks
 * a sample with the gate's judge, and on the first violation shrinks it to a minimal replayable
 * tape.
 */
import { realTimers } from './ambient-traps.js';
import { ChoiceTape } from './choice-tape.js';
import { checkInvariants } from './invariants/check-invariants.js';
import { FULL_CHAIN_CHECK_EVERY } from './invariants/ledger-intact.js';
import { crossCheckWithJudge, type JudgeComparison } from './judge-cross-check.js';
import { type ReplayFile, replayFileFor } from './replay-file.js';
import type { ScheduleEvidence, Violation } from './schedule-evidence.js';
import { type ShrinkResult, shrinkChoices } from './shrink.js';
import {
  runSchedule,
  type ScheduleOptions,
  type ScheduleRun,
  type TraceEntry,
} from './simulation.js';
import { createSqliteTier, type ExploreStoreTier } from './sqlite-tier.js';

/** Options of {@link explore}. */
export interface ExploreOptions {
  /** A built-in workload (`refund`, `refund-and-close`, `approvals`, `compensation`, `mix`). @default 'mix' */
  readonly workload?: string;
  /** Stop after this many seconds of wall time. @default 10 when `schedules` is not set */
  readonly seconds?: number;
  /** Stop after this many schedules. */
  readonly schedules?: number;
  /** The first seed; schedule i uses seed + i. @default 1 */
  readonly seed?: number;
  /** Breakages to switch on (test-only: `docs/explore.md` lists them). */
  readonly breakages?: readonly string[];
  /** Shrink the first violation. @default true */
  readonly shrink?: boolean;
  /** At most this many replays while shrinking. @default 800 */
  readonly shrinkBudget?: number;
  /** Cross-check one schedule in this many with the gate's judge (and every failure). @default 64 */
  readonly judgeEvery?: number;
  /** Re-run one schedule in this many and compare. @default 100 */
  readonly determinismEvery?: number;
  /** Called about every `progressEveryMs` with the counters so far. */
  readonly onProgress?: (progress: ExploreProgress) => void;
  /** @default 250 */
  readonly progressEveryMs?: number;
  /** Only these invariants count (others are ignored); for hunting one defect class. */
  readonly only?: readonly string[];
  /**
   * With breakages on: a violation counts only if the same seed without the breakages does not
   * show it too (so a defect already in the guard does not pass for a caught breakage).
   * @default true when breakages are set
   */
  readonly differential?: boolean;
  /**
   * The store every schedule runs on: the memory store, or the slower SQLite tier (a fresh file
   * per schedule, through the real adapter). Ignored when `scheduleOptions.openStore` is set.
   * @default 'memory'
   */
  readonly store?: ExploreStoreTier;
  /** Extra schedule options (a store opener, guard breakage switches, `avoid`). */
  readonly scheduleOptions?: Omit<ScheduleOptions, 'workload' | 'breakages' | 'trace'>;
}

/** Counters reported while exploring. */
export interface ExploreProgress {
  readonly schedules: number;
  readonly elapsedMs: number;
  readonly schedulesPerSecond: number;
  /** Distinct (fault × phase × actor) cells hit so far. */
  readonly cells: number;
}

/** The first violation found, shrunk. */
export interface ExploreFailure {
  readonly seed: number;
  readonly workload: string;
  readonly violation: Violation;
  readonly violations: readonly Violation[];
  readonly detectedAfterMs: number;
  readonly shrunk: ShrinkResult | undefined;
  readonly judge: JudgeComparison;
  /** Replays the (shrunk) failure. */
  readonly replay: ReplayFile;
}

/** What an exploration did. */
export interface ExploreReport {
  readonly workload: string;
  readonly store: ExploreStoreTier;
  readonly breakages: readonly string[];
  readonly firstSeed: number;
  readonly schedules: number;
  readonly elapsedMs: number;
  readonly schedulesPerSecond: number;
  readonly cells: readonly string[];
  readonly judgeChecks: number;
  readonly determinismChecks: number;
  /** Explorer violations the judge did not name (its blind spots), on the sample. */
  readonly judgeBlindSpots: readonly string[];
  /** Schedules the explorer passed but the gate's judge failed (the first 20), for a person. */
  readonly judgeDisagreements: readonly (Violation & { readonly seed: number })[];
  /** Violations skipped because the unbroken guard shows them too (differential mode). */
  readonly maskedByBaseline: number;
  readonly failure: ExploreFailure | undefined;
}

/** A digest of what a schedule did, for the determinism re-run. */
function digestOf(run: ScheduleRun): string {
  const evidence = run.evidence;
  return [
    evidence.head?.hash ?? '-',
    evidence.steps,
    evidence.writes.map((write) => `${write.objectId}@${write.step}`).join(','),
    evidence.failures.length,
    run.choices.length,
  ].join('|');
}

/** Runs one schedule from `choices` (or a seed) and checks it. */
export async function runAndCheck(
  tape: ChoiceTape,
  options: ScheduleOptions,
  rehashLedger = true,
): Promise<{ readonly run: ScheduleRun; readonly violations: Violation[] }> {
  const run = await runSchedule(tape, options);
  const violations = await checkInvariants(run.evidence, { rehashLedger });
  return { run, violations };
}

/** Replays a recorded schedule; with `trace`, records the decisions for a timeline. */
export async function replayRecorded(
  file: Pick<ReplayFile, 'workload' | 'breakages' | 'choices'> & {
    readonly avoid?: readonly string[];
    readonly store?: ExploreStoreTier | undefined;
  },
  options: {
    readonly trace?: TraceEntry[];
    readonly scheduleOptions?: ExploreOptions['scheduleOptions'];
  } = {},
): Promise<{ readonly evidence: ScheduleEvidence; readonly violations: Violation[] }> {
  const tier =
    file.store === 'sqlite' && options.scheduleOptions?.openStore === undefined
      ? await createSqliteTier()
      : undefined;
  try {
    const { run, violations } = await runAndCheck(ChoiceTape.fromChoices(file.choices), {
      ...options.scheduleOptions,
      ...(tier === undefined ? {} : { openStore: tier.openStore }),
      workload: file.workload,
      breakages: file.breakages,
      avoid: file.avoid ?? [],
      ...(options.trace === undefined ? {} : { trace: options.trace }),
    });
    return { evidence: run.evidence, violations };
  } finally {
    await tier?.close();
  }
}

const yieldToEventLoop = () => new Promise<void>((resolve) => realTimers.setImmediate(resolve));

/** Explores schedules until the budget runs out or a violation is found (then shrinks it). */
export async function explore(options: ExploreOptions = {}): Promise<ExploreReport> {
  const store = options.store ?? 'memory';
  if (store === 'memory' || options.scheduleOptions?.openStore !== undefined) {
    return exploreOn(options, store);
  }
  const tier = await createSqliteTier();
  try {
    return await exploreOn(
      { ...options, scheduleOptions: { ...options.scheduleOptions, openStore: tier.openStore } },
      store,
    );
  } finally {
    await tier.close();
  }
}

async function exploreOn(options: ExploreOptions, store: ExploreStoreTier): Promise<ExploreReport> {
  const workload = options.workload ?? 'mix';
  const breakages = [...(options.breakages ?? [])];
  const firstSeed = options.seed ?? 1;
  const scheduleOptions: ScheduleOptions = { ...options.scheduleOptions, workload, breakages };
  const budgetMs =
    (options.seconds ?? (options.schedules === undefined ? 10 : Number.POSITIVE_INFINITY)) * 1000;
  const maxSchedules = options.schedules ?? Number.POSITIVE_INFINITY;
  const judgeEvery = options.judgeEvery ?? 64;
  const determinismEvery = options.determinismEvery ?? 100;
  const started = realTimers.performanceNow();
  const cells = new Set<string>();
  const blindSpots = new Set<string>();
  let schedules = 0;
  let judgeChecks = 0;
  let determinismChecks = 0;
  let lastProgress = started;
  let failure: ExploreFailure | undefined;
  let maskedByBaseline = 0;
  const judgeDisagreements: (Violation & { readonly seed: number })[] = [];
  const differential = options.differential ?? breakages.length > 0;
  const baselineOptions: ScheduleOptions = { ...options.scheduleOptions, workload, breakages: [] };
  const elapsed = () => realTimers.performanceNow() - started;

  while (schedules < maxSchedules && elapsed() < budgetMs) {
    const seed = (firstSeed + schedules) >>> 0;
    const index = schedules;
    schedules += 1;
    const { run, violations } = await runAndCheck(
      ChoiceTape.fromSeed(seed),
      scheduleOptions,
      index % FULL_CHAIN_CHECK_EVERY === 0,
    );
    for (const cell of run.cells) cells.add(cell);
    if (index % determinismEvery === 0) {
      determinismChecks += 1;
      const again = await runSchedule(ChoiceTape.fromChoices(run.choices), scheduleOptions);
      if (digestOf(again) !== digestOf(run)) {
        violations.unshift({
          invariant: 'deterministic',
          effect: '-',
          message: `seed ${seed} replayed differently (${digestOf(run)} then ${digestOf(again)})`,
        });
      }
    }
    if (options.only !== undefined) {
      const only = new Set(options.only);
      for (let at = violations.length - 1; at >= 0; at--) {
        if (!only.has(violations[at]?.invariant ?? '')) violations.splice(at, 1);
      }
    }
    if (violations.length > 0 && differential) {
      const baseline = await runAndCheck(ChoiceTape.fromChoices(run.choices), baselineOptions);
      const known = new Set(
        baseline.violations.map((found) => `${found.invariant}|${found.effect}`),
      );
      const before = violations.length;
      for (let at = violations.length - 1; at >= 0; at--) {
        const found = violations[at];
        if (found !== undefined && known.has(`${found.invariant}|${found.effect}`))
          violations.splice(at, 1);
      }
      if (violations.length < before) maskedByBaseline += 1;
    }
    if (violations.length === 0 && index % judgeEvery === 0) {
      judgeChecks += 1;
      // A disagreement is reported, not failed on: one of the two is wrong, and a person decides.
      for (const disagreement of crossCheckWithJudge(run.evidence, violations).disagreements) {
        if (judgeDisagreements.length < 20) judgeDisagreements.push({ seed, ...disagreement });
      }
    }
    const [first] = violations;
    if (first !== undefined) {
      const detectedAfterMs = elapsed();
      const full = await checkInvariants(run.evidence);
      const judge = crossCheckWithJudge(run.evidence, full);
      judgeChecks += 1;
      for (const spot of judge.blindSpots) blindSpots.add(spot);
      const shrunk =
        options.shrink === false ||
        first.invariant === 'deterministic' ||
        first.invariant === 'judge_agrees'
          ? undefined
          : await shrinkChoices(
              run.choices,
              first,
              async (choices) => {
                const replayed = await runAndCheck(
                  ChoiceTape.fromChoices(choices),
                  scheduleOptions,
                );
                return { choices: replayed.run.choices, violations: replayed.violations };
              },
              options.shrinkBudget,
            );
      failure = {
        seed,
        workload,
        violation: first,
        violations,
        detectedAfterMs,
        shrunk,
        judge,
        replay: {
          ...replayFileFor(
            workload,
            breakages,
            options.scheduleOptions?.avoid ?? [],
            seed,
            shrunk?.choices ?? run.choices,
            shrunk?.violation ?? first,
          ),
          ...(store === 'sqlite' ? { store } : {}),
        },
      };
      break;
    }
    const now = realTimers.performanceNow();
    if (now - lastProgress >= (options.progressEveryMs ?? 250)) {
      lastProgress = now;
      options.onProgress?.({
        schedules,
        elapsedMs: now - started,
        schedulesPerSecond: schedules / ((now - started) / 1000),
        cells: cells.size,
      });
      await yieldToEventLoop();
    }
  }
  const elapsedMs = elapsed();
  return {
    workload,
    store,
    breakages,
    firstSeed,
    schedules,
    elapsedMs,
    schedulesPerSecond: schedules / Math.max(elapsedMs / 1000, 1e-9),
    cells: [...cells].sort(),
    judgeChecks,
    determinismChecks,
    judgeBlindSpots: [...blindSpots],
    maskedByBaseline,
    judgeDisagreements,
    failure,
  };
}
