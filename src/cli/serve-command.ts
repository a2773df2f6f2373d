/**
 * `sideguard serve` and `sideguard record`: run the gateway from a config file until SIGINT or
 * SIGTERM. `record` also captures every forwarded response and, on stop, writes them to a cases
 * file that a `replay`-mode upstream answers from. The gateway is loaded lazily, so other
 * commands do not pay for it.
 */
import { writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { CliError } from './cli-errors.js';

interface ServeOptions {
  readonly config?: string;
  readonly host?: string;
  readonly port?: string;
  readonly upstreamPort?: readonly string[];
}

function parsePort(value: string, what: string): number {
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    throw new CliError(`${what} must be a port from 0 to 65535, got ${JSON.stringify(value)}`);
  }
  return port;
}

function upstreamPorts(values: readonly string[] | undefined): Record<string, number> {
  const ports: Record<string, number> = {};
  for (const value of values ?? []) {
    const [name, port] = value.split('=');
    if (name === undefined || name === '' || port === undefined) {
      throw new CliError(`--upstream-port takes NAME=PORT, got ${JSON.stringify(value)}`);
    }
    ports[name] = parsePort(port, `--upstream-port ${name}`);
  }
  return ports;
}

const collect = (value: string, previous: readonly string[] = []) => [...previous, value];

async function start(options: ServeOptions, recordSession?: string) {
  const gateway = await import('../gateway/index.js');
  const { mcpServeExtension } = await import('../gateway/mcp/mcp-serve-extension.js');
  const file = gateway.locateConfigFile(options.config, process.cwd());
  const served = await gateway.serveGateway({
    configFile: file,
    // The MCP door: `/mcp` on the main port (streamable HTTP, both protocol eras).
    extensions: [
      mcpServeExtension({
        configFile: file,
        hooks: {
          onProblem: (message) => process.stderr.write(`sideguard gateway: ${message}\n`),
        },
      }),
    ],
    ...(options.host === undefined ? {} : { host: options.host }),
    ...(options.port === undefined ? {} : { port: parsePort(options.port, '--port') }),
    upstreamPorts: upstreamPorts(options.upstreamPort),
    ...(recordSession === undefined ? {} : { recordSession }),
  });
  const lines = [
    `sideguard gateway: ${served.loaded.file}`,
    `  store: ${served.runtime.storeDescription}`,
    ...served.listeners.map((listener) => `  ${listener.name.padEnd(22)} ${listener.url}`),
    `  MCP clients (streamable HTTP) at ${served.url}/mcp`,
    ...Object.entries(served.upstreamUrls).map(
      ([name, url]) => `  agents reach ${name.padEnd(12)} at ${url}`,
    ),
    ...(served.sandbox === undefined ? [] : [`  sandbox data plane:    ${served.sandbox.dataUrl}`]),
    ...(served.console === undefined ? [] : [`  approvals console:     ${served.console.url}`]),
    ...(recordSession === undefined ? [] : [`  recording session ${recordSession}`]),
    '  stop with Ctrl-C',
    // One machine-readable line for scripts and tests.
    `ready ${JSON.stringify({ url: served.url, upstreams: served.upstreamUrls, ...(served.console === undefined ? {} : { console: served.console.url }) })}`,
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
  return served;
}

function untilSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const stop = (signal: NodeJS.Signals) => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve(signal);
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}

/** `sideguard console`: only the approvals console, on the config's (shared) store. */
async function startConsoleOnly(options: ServeOptions) {
  const gateway = await import('../gateway/index.js');
  const { createConsole } = await import('../console/console-server.js');
  const file = gateway.locateConfigFile(options.config, process.cwd());
  const loaded = await gateway.loadGatewayConfig(file);
  const runtime = await gateway.openGatewayRuntime(loaded);
  try {
    const settings = loaded.config.approvals ?? {};
    const running = await createConsole({
      guard: runtime.guard,
      store: runtime.store,
      actions: runtime.table.actions.values(),
      approvers: loaded.config.approvers ?? [],
      defaultTenant: runtime.table.tenant,
      host: options.host ?? settings.host ?? '127.0.0.1',
      port:
        options.port === undefined ? (settings.port ?? 4402) : parsePort(options.port, '--port'),
    });
    const lines = [
      `sideguard console: ${loaded.file}`,
      `  store: ${runtime.storeDescription}`,
      `  approvals console at ${running.url} (${(loaded.config.approvers ?? []).length} approver(s))`,
      '  stop with Ctrl-C',
      `ready ${JSON.stringify({ url: running.url, upstreams: {} })}`,
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
    return {
      close: async () => {
        await running.close();
        await runtime.close();
      },
    };
  } catch (error) {
    await runtime.close();
    throw error;
  }
}

/** Registers `serve`, `record` and `console`. */
export function registerServeCommands(program: Command): void {
  program
    .command('console')
    .description('Run only the approvals console on the config’s store (for hosts sharing it)')
    .option('--config <file>', 'the config file (default: sideguard.config.{ts,mts,mjs,js} here)')
    .option('--host <host>', 'listen address (default: the config’s approvals.host, 127.0.0.1)')
    .option('--port <port>', 'console port (default: the config’s approvals.port, 4402)')
    .action(async (options: ServeOptions) => {
      const running = await startConsoleOnly(options);
      const signal = await untilSignal();
      process.stdout.write(`${signal}: stopping the console…\n`);
      await running.close();
    });
  program
    .command('serve')
    .description('Run the gateway: agents call their APIs through it (sideguard.config.ts)')
    .option('--config <file>', 'the config file (default: sideguard.config.{ts,mts,mjs,js} here)')
    .option('--host <host>', 'listen address (default: the config’s server.host, 127.0.0.1)')
    .option('--port <port>', 'main port (default: the config’s server.port, 4400)')
    .option('--upstream-port <name=port>', 'override an upstream’s own port (repeatable)', collect)
    .action(async (options: ServeOptions) => {
      const served = await start(options);
      const signal = await untilSignal();
      process.stdout.write(`${signal}: stopping the gateway…\n`);
      await served.close();
    });
  program
    .command('record')
    .description('Run the gateway and record forwarded responses as replay cases')
    .requiredOption('--out <file>', 'where to write the cases when stopped')
    .option('--session <name>', 'recording session (processes sharing a store may share one)')
    .option('--config <file>', 'the config file (default: sideguard.config.{ts,mts,mjs,js} here)')
    .option('--host <host>', 'listen address')
    .option('--port <port>', 'main port')
    .option('--upstream-port <name=port>', 'override an upstream’s own port (repeatable)', collect)
    .action(async (options: ServeOptions & { out: string; session?: string }) => {
      const session = options.session ?? `record-${new Date().toISOString().replace(/[:.]/g, '-')}`;
      if (!/^[A-Za-z0-9._-]{1,128}$/.test(session)) {
        throw new CliError('--session takes letters, digits, ".", "_" and "-" (at most 128)');
      }
      const served = await start(options, session);
      const signal = await untilSignal();
      process.stdout.write(`${signal}: writing the recorded cases…\n`);
      try {
        const { exportReplayCases } = await import('../gateway/index.js');
        await served.runtime.decisions.flush();
        const cases = await exportReplayCases(
          served.runtime.state,
          served.runtime.keyRing,
          session,
        );
        const out = resolve(options.out);
        await writeFile(out, cases.text, 'utf8');
        process.stdout.write(`recorded ${cases.count} case(s) of session ${session} to ${out}\n`);
      } finally {
        await served.close();
      }
    });
}
