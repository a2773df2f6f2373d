/**
 * `sideguard sandbox serve …`: starts the sandbox for humans, prints where it listens and how to
 * call it, and shuts down cleanly on SIGINT/SIGTERM. Decisions live in `src/sandbox`.
 */
import { readFile } from 'node:fs/promises';
import { type Command, InvalidArgumentError } from 'commander';
import { parseFaultPlanJson } from '../sandbox/fault-plan.js';
import { SandboxConfigError } from '../sandbox/sandbox-errors.js';
import type { ProviderName } from '../sandbox/sandbox-types.js';
import { type RunningSandbox, startSandbox } from '../sandbox/start-sandbox.js';
import { CliError, ExitCode } from './cli-errors.js';
import { registerSandboxControlCommands } from './sandbox-control-command.js';

interface ServeOptions {
  readonly stateDir: string;
  readonly seed?: number;
  readonly port: number;
  readonly host?: string;
  readonly controlPort: number;
  readonly controlHost?: string;
  readonly controlSocket?: string;
  readonly faults?: string;
  readonly tokenFile?: string;
  readonly ignoreIdempotency?: string[];
  readonly provider?: string[];
}

function integerOption(name: string, min: number, max: number) {
  return (value: string): number => {
    const parsed = /^\d+$/.test(value) ? Number(value) : Number.NaN;
    if (!Number.isSafeInteger(parsed) || parsed < min || parsed > max) {
      throw new InvalidArgumentError(`${name} must be an integer from ${min} to ${max}`);
    }
    return parsed;
  };
}

function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

/** Registers `sideguard sandbox`: `serve`, and `reset`/`export`/`observe` for a running one. */
export function registerSandboxCommand(program: Command): void {
  const sandbox = program
    .command('sandbox')
    .description('Stateful, provider-shaped APIs with faults at the commit point');
  sandbox
    .command('serve')
    .description(
      'Serve the payments, crm, issues and orders providers (or those named by --provider) until interrupted',
    )
    .option('--state-dir <dir>', 'directory for state, journal and snapshots', '.sideguard/sandbox')
    .option(
      '--seed <n>',
      'seed for data, ids and probabilistic faults (default: stored seed, else 1)',
      integerOption('--seed', 0, 2 ** 32 - 1),
    )
    .option(
      '--port <n>',
      'data-plane port (0 = any free port)',
      integerOption('--port', 0, 65_535),
      4510,
    )
    .option(
      '--host <address>',
      'data-plane address (0.0.0.0 or :: for every interface; the control plane stays on 127.0.0.1)',
    )
    .option(
      '--control-port <n>',
      'control-plane port (0 = any free port)',
      integerOption('--control-port', 0, 65_535),
      4511,
    )
    .option('--control-host <address>', 'control-plane address (default 127.0.0.1)')
    .option(
      '--control-socket <path>',
      'serve the control plane on this Unix socket (mode 0600) instead of a port',
    )
    .option('--faults <file>', 'fault plan JSON to load at start (and restore on reset)')
    .option(
      '--token-file <file>',
      'read the control token from this file (default: $SIDEGUARD_SANDBOX_TOKEN, else generated)',
    )
    .option(
      '--provider <name>',
      'serve this provider (repeatable; default: payments, crm, issues, orders; retail is opt-in)',
      collect,
    )
    .option(
      '--ignore-idempotency <provider>',
      'play a provider that ignores Idempotency-Key (repeatable; only: payments)',
      collect,
    )
    .action(async (options: ServeOptions) => {
      try {
        await serve(options);
      } catch (error) {
        process.stderr.write(
          `sideguard sandbox: ${error instanceof Error ? error.message : String(error)}\n`,
        );
        // Bad options, files or plans are bad input (2), like every other command's.
        const errno = (error as { code?: unknown } | null)?.code;
        process.exitCode =
          error instanceof SandboxConfigError ||
          error instanceof CliError ||
          (typeof errno === 'string' &&
            /^E(NOENT|NOTDIR|ISDIR|ACCES|PERM|ROFS|ADDRINUSE)$/.test(errno))
            ? ExitCode.usage
            : ExitCode.failed;
      }
    });
  registerSandboxControlCommands(sandbox);
}

async function serve(options: ServeOptions): Promise<void> {
  const faults =
    options.faults === undefined
      ? undefined
      : parseFaultPlanJson(
          await readText(options.faults, 'fault plan'),
          `fault plan ${options.faults}`,
        );
  const controlToken =
    options.tokenFile === undefined
      ? undefined
      : (await readText(options.tokenFile, 'token file')).trim();
  const idempotency: Record<string, 'ignore'> = {};
  for (const provider of options.ignoreIdempotency ?? []) idempotency[provider] = 'ignore';

  const running = await startSandbox({
    stateDir: options.stateDir,
    port: options.port,
    ...(options.host === undefined ? {} : { host: options.host }),
    ...(options.controlHost === undefined ? {} : { controlHost: options.controlHost }),
    ...(options.seed === undefined ? {} : { seed: options.seed }),
    ...(options.controlSocket === undefined
      ? { controlPort: options.controlPort }
      : { controlSocket: options.controlSocket }),
    ...(faults === undefined ? {} : { faults }),
    ...(controlToken === undefined ? {} : { controlToken }),
    idempotency,
    ...(options.provider === undefined
      ? {}
      : { providers: options.provider.flatMap(providerNames) as ProviderName[] }),
  });
  printBanner(running, options);

  await new Promise<void>((resolve) => {
    const stop = (signal: NodeJS.Signals) => {
      process.stdout.write(`\n${signal}: stopping the sandbox…\n`);
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      running.close().then(resolve, (error: unknown) => {
        process.stderr.write(
          `sideguard sandbox: failed to close cleanly: ${error instanceof Error ? error.message : String(error)}\n`,
        );
        process.exitCode = 1;
        resolve();
      });
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}

/** `--provider payments,retail` and `--provider payments --provider retail` mean the same. */
function providerNames(value: string): string[] {
  return value
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
}

async function readText(file: string, what: string): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    throw new CliError(
      `Failed to read ${what} ${file}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`,
    );
  }
}

/** A first request to type, for a provider that is actually served. */
function tryLines(running: RunningSandbox): string[] {
  if (running.providers.includes('payments'))
    return [
      `  try: curl -s '${running.dataUrl}/v1/refunds?limit=3' -H 'Authorization: Bearer sk_test_sideguard_agent'`,
    ];
  if (running.providers.includes('retail'))
    return [
      `  try: curl -s '${running.dataUrl}/retail/v1/get_user_details?user_id=yusuf_rossi_9620' -H 'Authorization: Bearer retail_test_sideguard_agent'`,
    ];
  return [];
}

function printBanner(running: RunningSandbox, options: ServeOptions): void {
  const control = running.controlUrl ?? `unix:${running.controlSocket ?? ''}`;
  const token =
    running.controlTokenSource === 'generated'
      ? `generated, shown once: ${running.controlToken}`
      : running.controlTokenSource === 'environment'
        ? 'from $SIDEGUARD_SANDBOX_TOKEN'
        : `from ${options.tokenFile ?? 'option'}`;
  const lines = [
    `sideguard sandbox: ${running.providers.join(', ')} (seed ${running.seed}, state ${running.stateDir})`,
    `  data plane:    ${running.dataUrl}${options.host === undefined || running.dataUrl.includes(options.host) ? '' : ` (listening on ${options.host})`}`,
    `  control plane: ${control}`,
    `  control token: ${token}`,
    ...tryLines(running),
    '  stop with Ctrl-C',
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}
