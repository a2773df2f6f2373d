/**
 * `sideguard mcp --config FILE`: the gateway's MCP door over stdio, for MCP clients that launch
 * their servers (`command: npx sideguard mcp --config …`). stdout carries only the protocol;
 * everything for people goes to stderr. The agent's key comes from `SIDEGUARD_AGENT_KEY` and the
 * key ring from `SIDEGUARD_KEYS`; either missing, or an unknown key, stops it before it serves.
 */
import type { Command } from 'commander';
import { CliError, ExitCode } from './cli-errors.js';
import type { McpOptions } from './mcp-serve.js';

/** The environment variable with the agent's key (kept here so `--help` loads no SDK). */
const AGENT_KEY_VARIABLE = 'SIDEGUARD_AGENT_KEY';

/** Registers `sideguard mcp`. */
export function registerMcpCommand(program: Command): void {
  program
    .command('mcp')
    .description(
      `Serve the gateway as an MCP server on stdio (agent key in $${AGENT_KEY_VARIABLE})`,
    )
    .option('--config <file>', 'the gateway config (default: ./sideguard.config.ts or .mjs)')
    .option('--quiet-upstreams', "discard the upstream MCP servers' stderr")
    .option(
      '--sandbox-url <url>',
      'data URL of the sandbox a `sideguard serve` runs, for sandbox-mode upstreams',
    )
    .option(
      '--print-tools',
      "print each upstream MCP server's tools with their current digests (to pin in toolDigest) and exit",
    )
    .action(async (options: McpOptions) => {
      try {
        const run = await import('./mcp-serve.js');
        if (options.printTools === true) await run.printTools(options);
        else await run.serveMcp(options);
      } catch (error) {
        process.stderr.write(
          `sideguard mcp: ${error instanceof Error ? error.message : String(error)}\n`,
        );
        // A config that cannot run or a missing key ring is bad input, like a bad option.
        const code = (error as { code?: unknown } | null)?.code;
        process.exitCode =
          error instanceof CliError
            ? error.exitCode
            : code === 'gateway_config_invalid' || code === 'key_ring_environment_invalid'
              ? ExitCode.usage
              : ExitCode.failed;
      }
    });
}
