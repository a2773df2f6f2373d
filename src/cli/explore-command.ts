/**
 * `sideguard explore`: searches fault schedules deterministically over the guard and a provider
 * model; on a violation prints the invariant, the effect and the replay file and exits 1.
 * `--replay FILE` replays one recorded schedule.
 */
import { writeFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { type ExploreReport, explore, replayRecorded } from '../explore/explorer.js';
import { timelineOf, writeFailureArtifacts } from '../explore/failure-artifacts.js';
import { openTriggers } from '../explore/open-findings.js';
import { readReplayFile } from '../explore/replay-file.js';
import { KNOWN_BREAKAGES } from '../explore/simulation.js';
import { ExploreStoreTier } from '../explore/sqlite-tier.js';
import { CliError, ExitCode } from './cli-errors.js';

interface ExploreCommandOptions {
  readonly seconds?: string;
  readonly schedules?: string;
  readonly seed?: string;
  readonly workload: string;
  readonly json?: boolean;
  readonly replay?: string;
  readonly outDir: string;
  readonly breakage?: string[];
  readonly only?: string[];
  readonly shrink: boolean;
  readonly avoidOpen?: boolean;
  readonly store: string;
}

function positiveInteger(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const parsed = Number(value);
  if (!Number.isSafeInteger(parsed) || parsed < 0) {
    throw new CliError(`--${name} must be a non-negative integer, got ${JSON.stringify(value)}`);
  }
  return parsed;
}

const collect = (value: string, previous: string[] = []) => [...previous, value];

function progressLine(
  progress: { schedules: number; schedulesPerSecond: number; cells: number; elapsedMs: number },
  budget: string,
): string {
  return `\r[explore] ${progress.schedules} schedules  ${progress.schedulesPerSecond.toFixed(0)}/s  coverage ${progress.cells} cells  ${(progress.elapsedMs / 1000).toFixed(1)} s${budget}   `;
}

function storeTier(value: string): ExploreStoreTier {
  if (value === ExploreStoreTier.memory || value === ExploreStoreTier.sqlite) return value;
  throw new CliError(`--store must be memory or sqlite, got ${JSON.stringify(value)}`);
}

function summary(report: ExploreReport): string {
  const seeds = `seeds ${report.firstSeed}…${report.firstSeed + report.schedules - 1}`;
  return `${report.schedules} schedules in ${(report.elapsedMs / 1000).toFixed(1)} s (${report.schedulesPerSecond.toFixed(0)}/s), workload ${report.workload}, ${report.store} store, ${seeds}; ${report.cells.length} coverage cells (fault × phase × actor); ${report.judgeChecks} judge cross-checks, ${report.determinismChecks} determinism re-runs`;
}

async function runReplay(path: string, json: boolean): Promise<void> {
  const file = await readReplayFile(path);
  const { violations } = await replayRecorded(file);
  const timelinePath = `${path.replace(/(\.replay)?\.json$/, '')}.timeline.md`;
  await writeFile(timelinePath, await timelineOf(file));
  if (json) {
    process.stdout.write(
      `${JSON.stringify({ replay: path, violations, timeline: timelinePath }, null, 2)}\n`,
    );
  } else if (violations[0] === undefined) {
    process.stdout.write(`PASS replay ${path}: no violation\ntimeline: ${timelinePath}\n`);
  } else {
    const [first] = violations;
    process.stdout.write(
      `FAIL replay ${path}: ${first.invariant} on ${first.effect}\n  ${first.message}\ntimeline: ${timelinePath}\n`,
    );
  }
  process.exitCode = violations.length > 0 ? ExitCode.failed : ExitCode.ok;
}

export function registerExploreCommand(program: Command): void {
  program
    .command('explore')
    .description('Search fault schedules deterministically; exit 1 on a violated invariant')
    .option('--seconds <n>', 'explore for this many seconds (default 10 unless --schedules)')
    .option('--schedules <n>', 'explore this many schedules')
    .option('--seed <s>', 'the first seed (default: from the clock, printed)')
    .option(
      '--workload <name>',
      'refund | refund-and-close | approvals | compensation | mix',
      'mix',
    )
    .option(
      '--store <tier>',
      'memory | sqlite (the real SQLite adapter, a fresh file per schedule; slower)',
      'memory',
    )
    .option('--json', 'print the report as JSON')
    .option('--replay <file>', 'replay one recorded schedule and write its timeline')
    .option('--out-dir <dir>', 'where failure artifacts go', '.sideguard/explore')
    .option(
      '--breakage <name>',
      `switch on a deliberate breakage (test-only; repeatable): ${KNOWN_BREAKAGES.join(', ')}`,
      collect,
    )
    .option('--only <invariant>', 'count only this invariant (repeatable)', collect)
    .option('--no-shrink', 'keep the failing seed as found')
    .option(
      '--avoid-open',
      "leave out the triggers of open core findings (the short tier's setting)",
    )
    .action(async (options: ExploreCommandOptions) => {
      if (options.replay !== undefined) {
        await runReplay(options.replay, options.json === true);
        return;
      }
      const store = storeTier(options.store);
      const seconds = positiveInteger('seconds', options.seconds);
      const schedules = positiveInteger('schedules', options.schedules);
      const seed = positiveInteger('seed', options.seed) ?? Date.now() % 1_000_000_000;
      const budget =
        seconds !== undefined
          ? ` / ${seconds} s`
          : schedules !== undefined
            ? ` / ${schedules}`
            : ' / 10 s';
      const tty = process.stderr.isTTY && options.json !== true;
      let report: ExploreReport;
      try {
        report = await explore({
          workload: options.workload,
          store,
          seed,
          ...(seconds === undefined ? {} : { seconds }),
          ...(schedules === undefined ? {} : { schedules }),
          ...(options.breakage === undefined ? {} : { breakages: options.breakage }),
          ...(options.only === undefined ? {} : { only: options.only }),
          shrink: options.shrink,
          ...(options.avoidOpen ? { scheduleOptions: { avoid: openTriggers() } } : {}),
          ...(tty
            ? { onProgress: (progress) => process.stderr.write(progressLine(progress, budget)) }
            : {}),
        });
      } catch (error) {
        if (error instanceof RangeError) throw new CliError(error.message);
        throw error;
      }
      if (tty) process.stderr.write('\n');
      const failure = report.failure;
      const artifacts =
        failure === undefined
          ? undefined
          : await writeFailureArtifacts(options.outDir, failure.replay);
      if (options.json) {
        process.stdout.write(`${JSON.stringify({ ...report, artifacts }, null, 2)}\n`);
      } else if (failure === undefined || artifacts === undefined) {
        process.stdout.write(`PASS explore: ${summary(report)}\n`);
        for (const disagreement of report.judgeDisagreements) {
          process.stdout.write(`  note: seed ${disagreement.seed}: ${disagreement.message}\n`);
        }
      } else {
        const shrunk = failure.shrunk;
        const violation = failure.replay.violation ?? failure.violation;
        process.stdout.write(
          [
            `FAIL explore: ${violation.invariant} on ${violation.effect}`,
            `  ${violation.message}`,
            `  seed ${failure.seed} (workload ${failure.workload}), found after ${(failure.detectedAfterMs / 1000).toFixed(1)} s and ${report.schedules} schedules${shrunk === undefined ? '' : `; shrunk to ${shrunk.choices.length} choices in ${shrunk.replays} replays`}`,
            `  gate's judge: ${failure.judge.judgeFailed.length === 0 ? 'passes every invariant (a blind spot)' : failure.judge.judgeFailed.join('; ')}`,
            `  replay:   ${artifacts.replay}   (sideguard explore --replay ${artifacts.replay})`,
            `  timeline: ${artifacts.timeline}`,
            `  test:     ${artifacts.test}`,
            '',
          ].join('\n'),
        );
      }
      process.exitCode = failure === undefined ? ExitCode.ok : ExitCode.failed;
    });
}
