/**
 * The MCP part of `sideguard config check`: the tool names the MCP door will serve (two things
 * with one name is a problem), and — unless told not to start the upstream servers — each
 * wrapped tool's current digest next to its pin. A pin that no longer matches, or a bound tool
 * the server does not serve, is a problem whose message carries the digest to review and pin.
 */
import { dirname } from 'node:path';
import type { ConfigProblem } from '../config-schema.js';
import type { GatewayConfig } from '../config-types.js';
import type { GatewayTable } from '../gateway-table.js';
import { buildMcpToolDirectory } from './mcp-tool-directory.js';
import {
  describeMcpUpstreamTools,
  formatMcpToolReport,
  type McpUpstreamReport,
} from './mcp-tool-report.js';
import { createMcpUpstreamPool } from './mcp-upstream-pool.js';

/** What the check found. */
export interface McpConfigCheck {
  /** The tool names the door serves, in order. */
  readonly tools: readonly string[];
  /** Upstream MCP servers as listed now (empty when not connected). */
  readonly upstreams: readonly McpUpstreamReport[];
  readonly problems: readonly ConfigProblem[];
  /** The report for a terminal. */
  readonly lines: readonly string[];
}

/** What the check needs of a loaded config. */
export interface McpConfigCheckInput {
  readonly file: string;
  readonly config: Pick<GatewayConfig, 'bindings'>;
  readonly table: GatewayTable;
}

function pinProblems(
  input: McpConfigCheckInput,
  reports: readonly McpUpstreamReport[],
): ConfigProblem[] {
  const indexOf = (name: string) => input.config.bindings.findIndex((b) => b.name === name);
  const problems: ConfigProblem[] = [];
  for (const report of reports) {
    if (report.kind !== 'listed') continue;
    for (const row of report.tools) {
      if (row.pin !== 'changed' || row.binding === null) continue;
      problems.push({
        path: `bindings[${indexOf(row.binding)}].toolDigest`,
        message: `tool "${row.tool}" of upstream "${report.upstream}" is now ${row.digest}; review its description and schema, then pin that digest`,
      });
    }
    for (const binding of report.missing) {
      problems.push({
        path: `bindings[${indexOf(binding)}].tool`,
        message: `upstream "${report.upstream}" does not serve this tool (any more); check the name or remove the binding`,
      });
    }
  }
  return problems;
}

/** Checks the MCP door's names and, when `connect`, every upstream tool pin. */
export async function checkMcpConfig(
  input: McpConfigCheckInput,
  options: { readonly connect: boolean },
): Promise<McpConfigCheck> {
  const directory = buildMcpToolDirectory(input.table, input.config);
  const tools = [...directory.targets.keys()];
  const lines = [`mcp tools (served at /mcp and by \`sideguard mcp\`): ${tools.join(', ')}`];
  const hasUpstreams = [...input.table.upstreams.values()].some((u) => u.kind === 'mcp');
  if (!options.connect || !hasUpstreams) {
    if (hasUpstreams) lines.push('mcp upstreams: not started (--no-upstreams)');
    return { tools, upstreams: [], problems: directory.problems, lines };
  }
  const pool = createMcpUpstreamPool(input.table, {
    directory: dirname(input.file),
    stderr: 'ignore',
  });
  try {
    const upstreams = await describeMcpUpstreamTools(input.table, pool);
    return {
      tools,
      upstreams,
      problems: [...directory.problems, ...pinProblems(input, upstreams)],
      lines: [...lines, 'mcp upstream tools (current digests):', ...formatMcpToolReport(upstreams)],
    };
  } finally {
    await pool.close();
  }
}
