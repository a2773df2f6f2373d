/**
 * What the upstream MCP servers serve right now, next to what the config pins: each tool with
 * its current digest and the binding that pins it (matching or not). `sideguard config check`
 * and `sideguard mcp --print-tools` print it so an operator can review a tool and pin it.
 */
import type { GatewayTable } from '../gateway-table.js';
import { toolDefinitionDigest } from './mcp-tool-digest.js';
import type { McpUpstreamPool } from './mcp-upstream-pool.js';

/** One upstream tool and its pin. */
export interface McpToolReportRow {
  readonly tool: string;
  readonly digest: string;
  /** The binding of this tool, if any. */
  readonly binding: string | null;
  /** `pinned`: the binding's digest is current; `changed`: it is not; `unbound`: no binding. */
  readonly pin: 'pinned' | 'changed' | 'unbound';
}

/** One upstream MCP server. */
export type McpUpstreamReport =
  | {
      readonly upstream: string;
      readonly kind: 'listed';
      readonly tools: readonly McpToolReportRow[];
      /** Bindings whose tool the server does not serve (any more). */
      readonly missing: readonly string[];
    }
  | { readonly upstream: string; readonly kind: 'unavailable'; readonly reason: string };

/** Lists every MCP upstream's tools (all at once) and sets them against the bindings. */
export async function describeMcpUpstreamTools(
  table: GatewayTable,
  pool: McpUpstreamPool,
): Promise<McpUpstreamReport[]> {
  const upstreams = [...table.upstreams.values()].filter((upstream) => upstream.kind === 'mcp');
  return Promise.all(
    upstreams.map(async ({ name }): Promise<McpUpstreamReport> => {
      const listed = await pool.connection(name)?.listTools();
      if (listed === undefined || listed.kind === 'unavailable') {
        return { upstream: name, kind: 'unavailable', reason: listed?.reason ?? 'not connected' };
      }
      const bindings = table.toolBindings.get(name) ?? new Map();
      const tools = listed.tools.map((tool): McpToolReportRow => {
        const digest = toolDefinitionDigest(tool);
        const binding = bindings.get(tool.name);
        return {
          tool: tool.name,
          digest,
          binding: binding?.name ?? null,
          pin:
            binding === undefined
              ? 'unbound'
              : binding.toolDigest === digest
                ? 'pinned'
                : 'changed',
        };
      });
      const served = new Set(listed.tools.map((tool) => tool.name));
      const missing = [...bindings.values()]
        .filter((binding) => !served.has(binding.tool))
        .map((binding) => binding.name);
      return { upstream: name, kind: 'listed', tools, missing };
    }),
  );
}

/** The report as lines for a terminal. */
export function formatMcpToolReport(reports: readonly McpUpstreamReport[]): string[] {
  const lines: string[] = [];
  for (const report of reports) {
    if (report.kind === 'unavailable') {
      lines.push(`upstream ${report.upstream}: unavailable (${report.reason})`);
      continue;
    }
    lines.push(`upstream ${report.upstream}: ${report.tools.length} tools`);
    for (const row of report.tools) {
      const pin =
        row.pin === 'unbound'
          ? 'not bound'
          : row.pin === 'pinned'
            ? `pinned by binding ${row.binding}`
            : `DIFFERS from the toolDigest of binding ${row.binding}: review the tool, then pin this digest`;
      lines.push(`  ${row.tool}  ${row.digest}  ${pin}`);
    }
    for (const binding of report.missing) {
      lines.push(`  binding ${binding}: its tool is not served by this upstream`);
    }
  }
  return lines;
}
