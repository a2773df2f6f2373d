/**
 * What `sideguard mcp` runs, loaded only when the command runs (it brings the MCP SDK, the
 * config loader and the store drivers): serving on stdio, and `--print-tools`.
 */
import { loadGatewayConfig, locateConfigFile } from '../gateway/config-loader.js';
import { keyRingFromEnvironment } from '../gateway/gateway-runtime.js';
import { openMcpGateway } from '../gateway/mcp/mcp-gateway-runtime.js';
import {
  AGENT_KEY_ENVIRONMENT_VARIABLE,
  serveMcpOverStdio,
  stdioIdentity,
} from '../gateway/mcp/mcp-stdio-door.js';
import { describeMcpUpstreamTools, formatMcpToolReport } from '../gateway/mcp/mcp-tool-report.js';
import { createMcpUpstreamPool } from '../gateway/mcp/mcp-upstream-pool.js';
import { CliError, ExitCode } from './cli-errors.js';

/** The options of `sideguard mcp`. */
export interface McpOptions {
  readonly config?: string;
  readonly quietUpstreams?: boolean;
  readonly printTools?: boolean;
  readonly sandboxUrl?: string;
}

const say = (line: string) => process.stderr.write(`sideguard mcp: ${line}\n`);

/** Connects to every upstream MCP server, prints its tools and digests on stdout, and exits. */
export async function printTools(options: McpOptions): Promise<void> {
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

export async function serveMcp(options: McpOptions): Promise<void> {
  const loaded = await loadGatewayConfig(locateConfigFile(options.config, process.cwd()));
  // Checked before anything opens, so a missing key ring is one clear line.
  const keyRing = keyRingFromEnvironment();
  if (options.sandboxUrl !== undefined && !/^https?:\/\/[^/]/.test(options.sandboxUrl)) {
    throw new CliError(
      `--sandbox-url must be an http(s) URL, got ${JSON.stringify(options.sandboxUrl)}`,
    );
  }
  const opened = await openMcpGateway(loaded, {
    keyRing,
    ...(options.sandboxUrl === undefined ? {} : { sandboxDataUrl: options.sandboxUrl }),
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
