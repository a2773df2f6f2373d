/**
 * `sideguard world retail`: replays the τ-bench retail tasks' gold actions through the gateway's
 * MCP door (sandbox, retail MCP server and gateway in this process), optionally under a seeded
 * fault plan and with every write sent twice; prints a line per task and a summary, writes a
 * JSON and Markdown report, and exits 1 unless every task matches with no duplicate effect.
 */
import type { Command } from 'commander';
import { loadRetailTasks, RetailSplit } from '../worlds/retail/retail-tasks.js';
import {
  passed,
  type RetailWorldReport,
  summarize,
  summaryText,
  taskLine,
  writeRetailReport,
} from '../worlds/retail/retail-world-report.js';
import { runRetailWorld } from '../worlds/retail/retail-world-runner.js';
import { CliError, ExitCode } from './cli-errors.js';

interface WorldCommandOptions {
  readonly split: string;
  readonly tasks?: string;
  readonly task?: string;
  readonly faults?: string;
  readonly twice?: boolean;
  readonly direct?: boolean;
  readonly json?: boolean;
  readonly out: string;
}

const SOURCE =
  'τ-bench retail (github.com/sierra-research/tau-bench @59a200c6, MIT, © 2024 Sierra; cite arXiv:2406.12045)';

function nonNegative(name: string, value: string): number {
  const parsed = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(parsed)) {
    throw new CliError(`--${name} must be a non-negative integer, got ${JSON.stringify(value)}`);
  }
  return parsed;
}

/** The task indices the options select, checked against the split. */
function selectTasks(options: WorldCommandOptions, split: RetailSplit): number[] {
  const all = loadRetailTasks(split).map((task) => task.index);
  if (options.task !== undefined && options.tasks !== undefined) {
    throw new CliError('Use either --task or --tasks, not both');
  }
  if (options.task !== undefined) {
    const chosen = options.task.split(',').map((part) => nonNegative('task', part.trim()));
    const unknown = chosen.find((index) => !all.includes(index));
    if (unknown !== undefined) {
      throw new CliError(
        `--task ${unknown} is not a task of the ${split} split (indices 0–${all.length - 1})`,
      );
    }
    return chosen;
  }
  if (options.tasks !== undefined) return all.slice(0, nonNegative('tasks', options.tasks));
  return all;
}

function progressBar(done: number, total: number, matching: number): string {
  const width = 30;
  const filled = total === 0 ? width : Math.round((done / total) * width);
  return `\r[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${done}/${total} tasks, ${matching} matching `;
}

/** Registers `sideguard world`. */
export function registerWorldCommand(program: Command): void {
  const world = program
    .command('world')
    .description('replay a public benchmark world through the gateway and judge its end state');
  world
    .command('retail')
    .description(
      "the τ-bench retail domain: replay each task's gold actions through the MCP door and compare the end state with the benchmark's expected changes",
    )
    .option(
      '--split <split>',
      'task split: test, train or dev (only test has expected changes)',
      'test',
    )
    .option('--tasks <n>', 'run the first N tasks of the split')
    .option('--task <ids>', 'run these task indices (comma-separated)')
    .option(
      '--faults <seed>',
      'inject a seeded fault plan (lost answers, hangs, errors before the write)',
    )
    .option('--twice', 'send every write twice')
    .option(
      '--direct',
      'baseline without Sideguard: call the retail API directly, resending a write that got no answer',
    )
    .option('--json', 'print the report as JSON')
    .option('--out <dir>', 'where the report is written', '.sideguard/world')
    .action(async (options: WorldCommandOptions) => {
      if (!Object.hasOwn(RetailSplit, options.split)) {
        throw new CliError(
          `--split must be test, train or dev, got ${JSON.stringify(options.split)}`,
        );
      }
      const split = options.split as RetailSplit;
      const taskIndices = selectTasks(options, split);
      const faultSeed =
        options.faults === undefined ? undefined : nonNegative('faults', options.faults);
      const tty = process.stderr.isTTY === true && options.json !== true;
      let matching = 0;
      const started = Date.now();
      const results = await runRetailWorld({
        split,
        taskIndices,
        ...(faultSeed === undefined ? {} : { faultSeed }),
        twice: options.twice === true,
        direct: options.direct === true,
        onTask: (result, done, total) => {
          if (result.matches === true) matching += 1;
          if (tty) process.stderr.write('\r\x1b[2K');
          if (options.json !== true) process.stdout.write(`${taskLine(result)}\n`);
          if (tty) process.stderr.write(progressBar(done, total, matching));
        },
      });
      if (tty) process.stderr.write('\r\x1b[2K');
      const summary = summarize(results, Date.now() - started);
      const report: RetailWorldReport = {
        format: 'sideguard-world-report',
        version: 1,
        world: 'retail',
        source: SOURCE,
        split,
        faultSeed: faultSeed ?? null,
        twice: options.twice === true,
        direct: options.direct === true,
        passed: passed(summary),
        summary,
        tasks: results,
      };
      const files = await writeRetailReport(options.out, report);
      if (options.json === true) {
        process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
      } else {
        process.stdout.write(
          `${summaryText(report)}\nreport: ${files.markdown} and ${files.json}\n`,
        );
      }
      if (!report.passed) process.exitCode = ExitCode.failed;
    });
}
