/**
 * `sideguard mcp --config FILE`: the gateway's MCP door over stdio, for MCP clients that launch
 * their servers (`command: npx sideguard mcp --config …`). stdout carries only the protocol;
 * everything for people goes to stderr. The agent's key comes from `SIDEGUARD_AGENT_KEY` and the
 * key ring from `SIDEGUARD_KEYS`; either missing, or an unknown key, stops it before it serves.
 */
import type { Command } from 'commander';
import { keyRingFromEnvironmentValue } from '../core/key-ring.js';
import { GatewayConfigError } from '../gateway/config-compile.js';
import { loadGatewayConfig, locateConfigFile } from '../gateway/config-loader.js';
import { openMcpGateway } from '../gateway/mcp/mcp-gateway-runtime.js';
import {
  AGENT_KEY_ENVIRONMENT_VARIABLE,
  serveMcpOverStdio,
  stdioIdentity,
} from '../gateway/mcp/mcp-stdio-door.js';
import { describeMcpUpstreamTools, formatMcpToolReport } from '../gateway/mcp/mcp-tool-report.js';
import { createMcpUpstreamPool } from '../gateway/mcp/mcp-upstream-pool.js';
import { CliError, ExitCode } from './cli-errors.js';

interface McpOptions {
  readonly config?: string;
  readonly quietUpstreams?: boolean;
  readonly printTools?: boolean;
}

const say = (line: string) => process.stderr.write(`sideguard mcp: ${line}\n`);

/** Registers `sideguard mcp`. */
export function registerMcpCommand(program: Command): void {
  program
    .command('mcp')
    .description(
      `Serve the gateway as an MCP server on stdio (agent key in $${AGENT_KEY_ENVIRONMENT_VARIABLE})`,
    )
    .option('--config <file>', 'the gateway config (default: ./sideguard.config.ts or .mjs)')
    .option('--quiet-upstreams', "discard the upstream MCP servers' stderr")
    .option(
      '--print-tools',
      "print each upstream MCP server's tools with their current digests (to pin in toolDigest) and exit",
    )
    .action(async (options: McpOptions) => {
      try {
        if (options.printTools === true) await printTools(options);
        else await serveMcp(options);
      } catch (error) {
        say(error instanceof Error ? error.message : String(error));
        process.exitCode =
          error instanceof CliError
            ? error.exitCode
            : error instanceof GatewayConfigError
              ? ExitCode.usage
              : ExitCode.failed;
      }
    });
}

function keyRingFromEnvironment() {
  const value = process.env.SIDEGUARD_KEYS;
  if (value === undefined || value.trim() === '') {
    throw new CliError(
      "SIDEGUARD_KEYS is not set: the gateway needs the deployment key ring (create one with `sideguard keys generate` and put it in the MCP server entry's env)",
    );
  }
  try {
    return keyRingFromEnvironmentValue(value);
  } catch (error) {
    throw new CliError(`SIDEGUARD_KEYS: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** Connects to every upstream MCP server, prints its tools and digests on stdout, and exits. */
async function printTools(options: McpOptions): Promise<void> {
  const loaded = await loadGatewayConfig(locateConfigFile(options.config, process.cwd()));
  const pool = createMcpUpstreamPool(loaded.table, {
    directory: loaded.directory,
    stderr: options.quietUpstreams === true ? 'ignore' : 'inherit',
  });
  try {
    const reports = await describeMcpUpstreamTools(loaded.table, pool);
    process.stdout.write(`${formatMcpToolReport(reports).join('\n')}\n`);
    const unhealthy = reports.some(
      (report) =>
        report.kind === 'unavailable' ||
        report.missing.length > 0 ||
        report.tools.some((row) => row.pin === 'changed'),
    );
    if (unhealthy) process.exitCode = ExitCode.failed;
  } finally {
    await pool.close();
  }
}

async function serveMcp(options: McpOptions): Promise<void> {
  const loaded = await loadGatewayConfig(locateConfigFile(options.config, process.cwd()));
  const keyRing = keyRingFromEnvironment();
  const opened = await openMcpGateway(loaded, {
    keyRing,
    hooks: { onProblem: say },
    upstreamStderr: options.quietUpstreams === true ? 'ignore' : 'inherit',
  });
  const identity = stdioIdentity(opened.gateway, process.env[AGENT_KEY_ENVIRONMENT_VARIABLE]);
  if (identity.kind !== 'agent') {
    await opened.close();
    throw new CliError(
      identity.kind === 'missing'
        ? `${AGENT_KEY_ENVIRONMENT_VARIABLE} is not set: put the agent's gateway key in the env of the MCP server entry (agents in ${loaded.file})`
        : `${AGENT_KEY_ENVIRONMENT_VARIABLE} is not the key of any agent in ${loaded.file}; use the key configured for this agent`,
    );
  }
  const handle = serveMcpOverStdio(opened.gateway, {
    agentKey: process.env[AGENT_KEY_ENVIRONMENT_VARIABLE],
  });
  say(
    `serving ${loaded.file} to agent "${identity.agent.id}" on stdio (protocol 2025-11-25 and 2026-07-28)`,
  );
  await new Promise<void>((resolve) => {
    let stopping = false;
    const stop = () => {
      if (stopping) return;
      stopping = true;
      handle
        .close()
        .then(() => opened.close())
        .catch((error: unknown) => {
          say(`failed to close cleanly: ${error instanceof Error ? error.message : String(error)}`);
          process.exitCode = ExitCode.failed;
        })
        .finally(resolve);
    };
    // The client closing stdin ends the connection (the MCP stdio binding's shutdown signal).
    process.stdin.once('end', stop);
    process.stdin.once('close', stop);
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
}
