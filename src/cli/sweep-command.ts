/**
 * `sideguard sweep --config FILE`: one sweeper pass for cron — expires due proposals and
 * reconciles due verifications of every declared action in every tenant, printing a progress
 * line per action and tenant (stderr) and a summary (stdout). Exit 0 when the pass ran, 1 when a
 * sweep failed (or, with `--fail-on-unresolved`, when something is still unresolved), 2 for bad
 * input (config, key ring).
 */
import type { Command } from 'commander';
import { ConfigurationError } from '../core/errors.js';
import { CliError, ExitCode } from './cli-errors.js';

interface SweepCommandOptions {
  readonly config?: string;
  readonly tenant?: string;
  readonly json?: boolean;
  readonly failOnUnresolved?: boolean;
}

async function runSweep(options: SweepCommandOptions): Promise<number> {
  const gateway = await import('../gateway/index.js');
  const { sweepOnce } = await import('../gateway/sweeper.js');
  const { sweptActions } = await import('../gateway/sweeper-actions.js');
  const { openGatewayNotifications } = await import('../notify/gateway-notifications.js');
  const loaded = await gateway.loadGatewayConfig(
    gateway.locateConfigFile(options.config, process.cwd()),
  );
  const notifications = openGatewayNotifications({
    config: loaded.config.notifications,
    consoleUrl: loaded.table.consoleUrl,
  });
  const runtime = await gateway.openGatewayRuntime(loaded, {
    sandboxUpstreams: 'skip',
    ...(notifications === undefined ? {} : { events: notifications.events }),
  });
  try {
    const actions = sweptActions(runtime);
    process.stderr.write(
      `sideguard sweep: ${actions.length} action(s) in ${runtime.storeDescription}\n`,
    );
    const summary = await sweepOnce({
      guard: runtime.guard,
      store: runtime.store,
      actions,
      ...(options.tenant === undefined ? {} : { tenant: options.tenant }),
      onProgress: ({ action, tenant, results }) =>
        process.stderr.write(`  swept ${action} in ${tenant}: ${results} due\n`),
    });
    if (options.json === true) {
      process.stdout.write(`${JSON.stringify(summary)}\n`);
    } else {
      process.stdout.write(
        `expired ${summary.expired}, verified ${summary.verified}, released ${summary.released}, still unresolved ${summary.unresolved}, other ${summary.other} (${summary.actions} action(s), ${summary.tenants} tenant(s))\n`,
      );
      for (const error of summary.errors) {
        process.stdout.write(`FAILED ${error.action} in ${error.tenant}: ${error.message}\n`);
      }
    }
    if (summary.errors.length > 0) return ExitCode.failed;
    return options.failOnUnresolved === true && summary.unresolved > 0
      ? ExitCode.failed
      : ExitCode.ok;
  } finally {
    await notifications?.close();
    await runtime.close();
  }
}

/** Registers `sideguard sweep`. */
export function registerSweepCommand(program: Command): void {
  program
    .command('sweep')
    .description('Expire due proposals and reconcile due verifications once (for cron)')
    .option('--config <file>', 'the gateway config (default: ./sideguard.config.ts or .mjs)')
    .option('--tenant <tenant>', 'only this tenant')
    .option('--json', 'print the summary as JSON')
    .option('--fail-on-unresolved', 'exit 1 when a proposal is still unresolved after the pass')
    .action(async (options: SweepCommandOptions) => {
      try {
        process.exitCode = await runSweep(options);
      } catch (error) {
        process.stderr.write(
          `sideguard sweep: ${error instanceof Error ? error.message : String(error)}\n`,
        );
        // A config that cannot run, a missing key ring or webhook secret is bad input.
        process.exitCode =
          error instanceof CliError
            ? error.exitCode
            : error instanceof ConfigurationError
              ? ExitCode.usage
              : ExitCode.failed;
      }
    });
}
