/** `sideguard gate`, `sideguard run --case NAME` and `sideguard report --case NAME`. */
import type { Command } from 'commander';
import {
  defaultScenarioDirectory,
  formatGateSummary,
  reportScenario,
  runGate,
  writeIndexHtml,
} from '../verify/gate.js';
import { loadScenarioCatalogue } from '../verify/scenario-fixtures.js';
import { VerifierInputError } from '../verify/verifier-errors.js';
import { ExitCode } from './cli-errors.js';

interface CommonOptions {
  readonly outputDir: string;
  readonly store?: string;
  readonly scenarios?: string;
  readonly json?: boolean;
}

const progressToStderr = (line: string): void => {
  if (process.stderr.isTTY) process.stderr.write(`${line}\n`);
};

export function registerVerifyCommands(program: Command): void {
  program
    .command('gate')
    .description('Run every seeded scenario against the sandbox and fail on unsafe evidence')
    .option('--output-dir <dir>', 'where ledgers, reports and sandbox state go', '.demo')
    .option(
      '--store <url>',
      'postgres://… or an SQLite file (default: an SQLite file in the output directory)',
    )
    .option('--scenarios <dir>', 'a scenario directory (cases.json, scenarios.json, plans/)')
    .option('--json', 'print the gate summary as JSON')
    .option('--list', 'list the scenarios (name: description) and run nothing')
    .action(async (options: CommonOptions & { list?: boolean }) => {
      if (options.list) {
        const catalogue = await loadScenarioCatalogue(
          options.scenarios ?? defaultScenarioDirectory,
        );
        for (const scenario of catalogue.scenarios) {
          process.stdout.write(`${scenario.name}: ${scenario.description}\n`);
        }
        return;
      }
      const run = await runGate({
        outputDir: options.outputDir,
        ...(options.store === undefined ? {} : { store: options.store }),
        ...(options.scenarios === undefined ? {} : { scenarioDirectory: options.scenarios }),
        progress: progressToStderr,
      });
      process.stdout.write(
        options.json ? `${JSON.stringify(run.summary, null, 2)}\n` : formatGateSummary(run.summary),
      );
      if (!options.json) {
        process.stderr.write(
          `reports: ${run.outputDir}/reports/index.html (${(run.summary.durationMs / 1000).toFixed(1)} s)\n`,
        );
      }
      process.exitCode = run.summary.passed ? ExitCode.ok : ExitCode.failed;
    });

  program
    .command('run')
    .description('Run one scenario and write its evidence and reports')
    .requiredOption('--case <name>', 'the scenario to run (see fixtures/verifier/scenarios.json)')
    .option('--output-dir <dir>', 'where ledgers, reports and sandbox state go', '.demo')
    .option('--store <url>', 'postgres://… or an SQLite file')
    .option('--scenarios <dir>', 'a scenario directory')
    .action(async (options: CommonOptions & { case: string }) => {
      const run = await runGate({
        outputDir: options.outputDir,
        only: [options.case],
        writeSummary: false,
        ...(options.store === undefined ? {} : { store: options.store }),
        ...(options.scenarios === undefined ? {} : { scenarioDirectory: options.scenarios }),
      });
      const [line] = formatGateSummary(run.summary).split('\n').slice(1);
      process.stdout.write(`${line}\nreport: ${run.outputDir}/reports/${options.case}.md\n`);
      process.exitCode = run.summary.passed ? ExitCode.ok : ExitCode.failed;
    });

  program
    .command('report')
    .description('Regenerate a scenario report from the evidence files on disk alone')
    .requiredOption('--case <name>', 'the scenario whose evidence to judge')
    .option('--output-dir <dir>', 'the directory a previous gate or run wrote', '.demo')
    .option('--scenarios <dir>', 'a scenario directory')
    .action(async (options: CommonOptions & { case: string }) => {
      const catalogue = await loadScenarioCatalogue(options.scenarios ?? defaultScenarioDirectory);
      const scenario = catalogue.scenarios.find((s) => s.name === options.case);
      if (scenario === undefined) {
        throw new VerifierInputError(
          `unknown scenario ${JSON.stringify(options.case)}; known scenarios: ${catalogue.scenarios.map((s) => s.name).join(', ')}`,
        );
      }
      const report = await reportScenario(options.outputDir, catalogue, scenario);
      await writeIndexHtml(options.outputDir);
      process.stdout.write(
        `- ${report.scenario}: ${report.label} writes=${report.external_write_count} passed=${report.passed}\nreport: ${options.outputDir}/reports/${report.scenario}.md\n`,
      );
      process.exitCode = report.passed ? ExitCode.ok : ExitCode.failed;
    });
}
