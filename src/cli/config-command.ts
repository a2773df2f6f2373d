/**
 * `sideguard config check`: loads the config exactly as `serve` would, prints the resolved
 * upstreams, routes, tools and agents, and every problem with the file, the path inside it and
 * what to change. Exit 0 when it can run, 2 on any problem.
 */
import { relative } from 'node:path';

/** A path relative to the working directory when it lies below it. */
const shownPath = (file: string): string => {
  const path = relative(process.cwd(), file);
  return path === '' || path.startsWith('..') ? file : path;
};

import type { Command } from 'commander';
import { CliError, ExitCode } from './cli-errors.js';

type Gateway = typeof import('../gateway/index.js');
type Loaded = Awaited<ReturnType<Gateway['loadGatewayConfig']>>;

function describeTable(loaded: Loaded): string[] {
  const { table } = loaded;
  const lines = ['upstreams:'];
  for (const [name, upstream] of table.upstreams) {
    const config = upstream.config;
    const where =
      config.kind === 'http'
        ? 'prefix' in config.mount
          ? `prefix ${config.mount.prefix}`
          : `port ${config.mount.port}`
        : 'stdio' in config.transport
          ? `stdio ${config.transport.stdio.command}`
          : `url ${config.transport.url}`;
    const target = config.kind === 'http' ? (config.baseUrl ?? 'the built-in sandbox') : '';
    lines.push(
      `  ${name.padEnd(16)} ${config.kind.padEnd(4)} ${upstream.mode.padEnd(7)} ${where}${target === '' ? '' : ` → ${target}`}${upstream.passReads ? ' (passes reads)' : ''}`,
    );
  }
  lines.push('routes:');
  for (const [upstream, bindings] of table.httpBindings) {
    for (const binding of bindings) {
      const route = `${binding.pattern.method} ${binding.pattern.template}`;
      const target = binding.access === 'write' ? `guarded → ${binding.action?.typeName}` : 'read';
      lines.push(
        `  ${upstream.padEnd(16)} ${route.padEnd(40)} ${target.padEnd(36)} (${binding.name})`,
      );
    }
  }
  const tools = [...table.toolBindings].flatMap(([upstream, bindings]) =>
    [...bindings.values()].map((binding) => {
      const target = binding.access === 'write' ? `guarded → ${binding.action?.typeName}` : 'read';
      return `  ${upstream.padEnd(16)} ${binding.tool.padEnd(28)} ${target.padEnd(36)} pinned ${binding.toolDigest} (${binding.name})`;
    }),
  );
  if (tools.length > 0) lines.push('tools:', ...tools);
  lines.push('actions:', ...[...table.actions.keys()].map((name) => `  ${name}`));
  lines.push('agents:');
  for (const agent of table.agents) {
    lines.push(
      `  ${agent.id.padEnd(16)} principal ${agent.principal}, tenant ${agent.tenant}, roles ${agent.roles.join(', ') || '(none)'}`,
    );
  }
  return lines;
}

/** Registers `config check`. */
export function registerConfigCommand(program: Command): void {
  const config = program.command('config').description('Check the gateway configuration');
  config
    .command('check')
    .description('Load the config as `serve` would; print routes, tools, agents and every problem')
    .option('--config <file>', 'the config file (default: sideguard.config.{ts,mts,mjs,js} here)')
    .option('--json', 'print a JSON document instead')
    .option('--no-upstreams', 'do not start upstream MCP servers to check their pinned tools')
    .action(async (options: { config?: string; json?: boolean; upstreams?: boolean }) => {
      const gateway = await import('../gateway/index.js');
      // The MCP door's tool names, and each wrapped tool's current digest next to its pin.
      const { checkMcpConfig } = await import('../gateway/mcp/mcp-config-check.js');
      let loaded: Loaded;
      let mcp: Awaited<ReturnType<typeof checkMcpConfig>>;
      try {
        loaded = await gateway.loadGatewayConfig(
          gateway.locateConfigFile(options.config, process.cwd()),
        );
        mcp = await checkMcpConfig(loaded, { connect: options.upstreams !== false });
        if (mcp.problems.length > 0) {
          throw new gateway.GatewayConfigError(loaded.file, mcp.problems);
        }
      } catch (error) {
        if (!(error instanceof gateway.GatewayConfigError)) throw error;
        const shown = shownPath(error.file);
        if (options.json === true) {
          process.stdout.write(
            `${JSON.stringify({ file: error.file, ok: false, problems: error.problems }, null, 2)}\n`,
          );
        } else {
          const count = `${error.problems.length} problem${error.problems.length === 1 ? '' : 's'}`;
          process.stdout.write(
            `${shown}: ${count}\n${error.problems.map((p) => `  ${p.path}: ${p.message}`).join('\n')}\n`,
          );
        }
        throw new CliError(
          `${shown}: the config has ${error.problems.length} problem(s); fix them and run \`sideguard config check\` again`,
          ExitCode.usage,
        );
      }
      if (options.json === true) {
        const routes = [...loaded.table.httpBindings.values()].flat().map((binding) => ({
          upstream: binding.upstream,
          route: `${binding.pattern.method} ${binding.pattern.template}`,
          binding: binding.name,
          access: binding.access,
          action: binding.action?.typeName ?? null,
        }));
        process.stdout.write(
          `${JSON.stringify(
            {
              file: loaded.file,
              ok: true,
              problems: [],
              routes,
              mcp: { tools: mcp.tools, upstreams: mcp.upstreams },
            },
            null,
            2,
          )}\n`,
        );
        return;
      }
      const shown = shownPath(loaded.file);
      process.stdout.write(
        `${shown}: ok\n${[...describeTable(loaded), ...mcp.lines].join('\n')}\n`,
      );
    });
}
