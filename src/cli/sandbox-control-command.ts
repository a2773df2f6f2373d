/**
 * `sideguard sandbox reset|export|observe`: talk to a running sandbox's control plane. The
 * address comes from `--control-url`/`--control-socket` or the environment, the token from
 * `--token-file` or `$SIDEGUARD_SANDBOX_TOKEN`. Bad input — flags, a token the plane refuses, an
 * address where nothing listens — is one line on stderr and exit 2.
 */
import { readFile, writeFile } from 'node:fs/promises';
import type { Command } from 'commander';
import {
  SandboxControlClient,
  type SandboxControlClientConfig,
} from '../sandbox/control-client.js';
import type { SandboxObservations } from '../sandbox/observations.js';
import { SandboxControlError } from '../sandbox/sandbox-errors.js';
import { controlTokenEnvironmentVariable } from '../sandbox/start-options.js';
import { CliError, ExitCode } from './cli-errors.js';

/** Environment variable naming the control plane's URL (`http://…`) when no flag does. */
export const controlUrlEnvironmentVariable = 'SIDEGUARD_SANDBOX_CONTROL_URL';

/** Where `sideguard sandbox serve` puts the control plane by default. */
export const defaultControlUrl = 'http://127.0.0.1:4511';

interface ControlOptions {
  readonly controlUrl?: string;
  readonly controlSocket?: string;
  readonly tokenFile?: string;
  readonly json?: boolean;
  readonly output?: string;
}

/** Adds `reset`, `export` and `observe` under `sideguard sandbox`. */
export function registerSandboxControlCommands(sandbox: Command): void {
  const withControl = (command: Command): Command =>
    command
      .option(
        '--control-url <url>',
        `the control plane (default: $${controlUrlEnvironmentVariable}, else ${defaultControlUrl})`,
      )
      .option('--control-socket <path>', 'the control plane on a Unix socket instead')
      .option(
        '--token-file <file>',
        `the control token (default: $${controlTokenEnvironmentVariable})`,
      );

  withControl(sandbox.command('reset'))
    .description('Return a running sandbox to its seed: state, receipts, observations, fault plan')
    .option('--json', 'print the control plane’s answer as JSON')
    .action(async (options: ControlOptions) => {
      const { client, where } = await connect(options);
      const answer = await ask(where, () => client.reset());
      process.stdout.write(
        options.json
          ? `${JSON.stringify(answer)}\n`
          : `reset: seed ${answer.seed}, state digest ${answer.digest.slice(0, 12)}…\n`,
      );
    });

  withControl(sandbox.command('export'))
    .description('Print (or write) a running sandbox’s state, receipts, requests and fault trace')
    .option('--output <file>', 'write the export document to this file instead of stdout')
    .action(async (options: ControlOptions) => {
      const { client, where } = await connect(options);
      const document = await ask(where, () => client.export());
      const text = `${JSON.stringify(document, null, 2)}\n`;
      if (options.output === undefined) {
        process.stdout.write(text);
        return;
      }
      try {
        await writeFile(options.output, text);
      } catch (error) {
        throw new CliError(
          `cannot write ${options.output} (${(error as NodeJS.ErrnoException).code ?? String(error)})`,
        );
      }
      const { writes, requests } = document.observations;
      process.stdout.write(
        `export: ${options.output} (seed ${document.seed}, ${plural(writes.total, 'write')}, ${plural(requests.length, 'request')})\n`,
      );
    });

  withControl(sandbox.command('observe'))
    .description(
      'Summarise what a running sandbox saw: writes, requests, faults, requests in flight',
    )
    .option('--json', 'print the full observations document as JSON')
    .action(async (options: ControlOptions) => {
      const { client, where } = await connect(options);
      const observations = await ask(where, () => client.observations());
      process.stdout.write(
        options.json
          ? `${JSON.stringify(observations, null, 2)}\n`
          : formatObservations(observations),
      );
    });
}

/** The readable summary `observe` prints. */
export function formatObservations(observations: SandboxObservations): string {
  const byOperation = Object.entries(observations.writes.byOperation)
    .map(([operation, count]) => `${operation} ${count}`)
    .join(', ');
  const faults = new Map<string, number>();
  for (const entry of observations.trace) {
    const kind = entry.fault ?? 'none';
    faults.set(kind, (faults.get(kind) ?? 0) + 1);
  }
  const lines = [
    `writes: ${observations.writes.total}${byOperation === '' ? '' : ` (${byOperation})`}`,
    `requests: ${observations.requests.length} finished, ${observations.inFlight.length} in flight, ${observations.droppedEntryCount} dropped from the log`,
    ...observations.inFlight.map(
      (request) =>
        `  in flight: ${request.requestId} ${request.method} ${request.provider ?? '-'}.${request.operation ?? request.path} ${request.phase} (fault ${request.fault ?? 'none'}, write ${request.writeOutcome})`,
    ),
    `faults: ${plural(observations.trace.length, 'decision')}${
      faults.size === 0
        ? ''
        : ` (${[...faults]
            .sort(([a], [b]) => (a < b ? -1 : 1))
            .map(([kind, count]) => `${kind} ${count}`)
            .join(', ')})`
    }`,
  ];
  return `${lines.join('\n')}\n`;
}

const plural = (count: number, noun: string): string => `${count} ${noun}${count === 1 ? '' : 's'}`;

async function connect(
  options: ControlOptions,
): Promise<{ client: SandboxControlClient; where: string }> {
  if (options.controlUrl !== undefined && options.controlSocket !== undefined) {
    throw new CliError('use --control-url or --control-socket, not both');
  }
  const token = await readToken(options.tokenFile);
  if (options.controlSocket !== undefined) {
    return {
      client: new SandboxControlClient({ socketPath: options.controlSocket, token }),
      where: `unix:${options.controlSocket}`,
    };
  }
  const fromEnvironment = process.env[controlUrlEnvironmentVariable];
  const [url, source] =
    options.controlUrl !== undefined
      ? [options.controlUrl, '--control-url']
      : fromEnvironment !== undefined && fromEnvironment !== ''
        ? [fromEnvironment, `$${controlUrlEnvironmentVariable}`]
        : [defaultControlUrl, 'the default control URL'];
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new CliError(`${source} ${JSON.stringify(url)} is not an http:// URL`);
  }
  if (parsed.protocol !== 'http:' || parsed.port === '') {
    throw new CliError(
      `${source} ${JSON.stringify(url)} is not an http:// URL with a port (like ${defaultControlUrl})`,
    );
  }
  const config: SandboxControlClientConfig = { url: parsed.origin, token };
  return { client: new SandboxControlClient(config), where: parsed.origin };
}

async function readToken(file: string | undefined): Promise<string> {
  if (file !== undefined) {
    try {
      return (await readFile(file, 'utf8')).trim();
    } catch (error) {
      throw new CliError(
        `cannot read the token file ${file} (${(error as NodeJS.ErrnoException).code ?? String(error)})`,
      );
    }
  }
  const token = process.env[controlTokenEnvironmentVariable];
  if (token === undefined || token === '') {
    throw new CliError(
      `no control token: pass --token-file FILE or set ${controlTokenEnvironmentVariable} (the token \`sideguard sandbox serve\` printed or was given)`,
    );
  }
  return token;
}

/** One control call; an unreachable plane or a refused token is bad input (exit 2). */
async function ask<T>(where: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (!(error instanceof SandboxControlError)) throw error;
    if (error.code === 'sandbox_control_unreachable') {
      const reason = (error.cause as NodeJS.ErrnoException | undefined)?.code ?? error.message;
      throw new CliError(
        `cannot reach the sandbox control plane at ${where} (${reason}): is \`sideguard sandbox serve\` running there? Pass --control-url or --control-socket, or set ${controlUrlEnvironmentVariable}`,
      );
    }
    if (error.status === 401) {
      throw new CliError(
        `the control plane at ${where} refused the token (401): use the token the sandbox was started with`,
      );
    }
    throw new CliError(`the control plane at ${where} failed: ${error.message}`, ExitCode.failed);
  }
}
