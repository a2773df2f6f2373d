/**
 * The gateway's upstream MCP servers: one connection per configured `kind: 'mcp'` upstream,
 * opened on first use, and the current definition (with its digest) of any of their tools.
 */
import { isAbsolute, resolve } from 'node:path';
import type { Tool } from '@modelcontextprotocol/client';
import type { McpUpstreamConfig } from '../config-types.js';
import type { GatewayTable } from '../gateway-table.js';
import { toolDefinitionDigest } from './mcp-tool-digest.js';
import {
  createMcpUpstreamConnection,
  type McpUpstreamConnection,
  type McpUpstreamEndpoint,
} from './mcp-upstream-connection.js';

/** How long one upstream tool call may take when the upstream sets no `timeoutMs`, in ms. */
export const DEFAULT_MCP_UPSTREAM_TIMEOUT_MS = 30_000;

/** A tool's definition as the upstream serves it right now. */
export type CurrentToolDefinition =
  | { readonly kind: 'found'; readonly tool: Tool; readonly digest: string }
  | { readonly kind: 'missing' }
  | { readonly kind: 'unavailable'; readonly reason: string };

/** The upstream MCP servers of one gateway. */
export interface McpUpstreamPool {
  /** The connection of an MCP upstream, or `undefined` when no such upstream is configured. */
  connection(upstream: string): McpUpstreamConnection | undefined;
  /** Lists the upstream's tools now and returns the one named `tool` with its digest. */
  currentTool(upstream: string, tool: string): Promise<CurrentToolDefinition>;
  /** Closes every connection (stops stdio children). */
  close(): Promise<void>;
}

/** Options of the pool. */
export interface McpUpstreamPoolConfig {
  /** Relative `cwd` of stdio upstreams resolve against it (the config file's directory). */
  readonly directory: string;
  /** Where stdio children's stderr goes. @default 'inherit' */
  readonly stderr?: 'inherit' | 'ignore';
  /** Hears about upstreams that cannot be reached, with the upstream's name. @default ignore */
  readonly onProblem?: (upstream: string, message: string) => void;
}

/** The resolved endpoint of an MCP upstream config. */
export function mcpEndpointOf(
  config: McpUpstreamConfig,
  directory: string,
  stderr: 'inherit' | 'ignore' = 'inherit',
): McpUpstreamEndpoint {
  const transport = config.transport;
  if ('url' in transport) {
    return { kind: 'http', url: transport.url, headers: { ...transport.headers } };
  }
  const cwd = transport.stdio.cwd;
  return {
    kind: 'stdio',
    command: transport.stdio.command,
    args: [...(transport.stdio.args ?? [])],
    env: { ...transport.stdio.env },
    cwd: cwd === undefined ? directory : isAbsolute(cwd) ? cwd : resolve(directory, cwd),
    stderr,
  };
}

/** Opens nothing yet: each connection starts on its first use. */
export function createMcpUpstreamPool(
  table: GatewayTable,
  config: McpUpstreamPoolConfig,
): McpUpstreamPool {
  const connections = new Map<string, McpUpstreamConnection>();
  for (const upstream of table.upstreams.values()) {
    if (upstream.config.kind !== 'mcp') continue;
    const upstreamConfig = upstream.config;
    connections.set(
      upstream.name,
      createMcpUpstreamConnection(mcpEndpointOf(upstreamConfig, config.directory, config.stderr), {
        timeoutMs: upstreamConfig.timeoutMs ?? DEFAULT_MCP_UPSTREAM_TIMEOUT_MS,
        onProblem: (message) => config.onProblem?.(upstream.name, message),
      }),
    );
  }
  return {
    connection: (upstream) => connections.get(upstream),
    async currentTool(upstream, tool) {
      const connection = connections.get(upstream);
      if (connection === undefined) return { kind: 'unavailable', reason: 'not an MCP upstream' };
      const listed = await connection.listTools();
      if (listed.kind === 'unavailable') return listed;
      const found = listed.tools.find((candidate) => candidate.name === tool);
      return found === undefined
        ? { kind: 'missing' }
        : { kind: 'found', tool: found, digest: toolDefinitionDigest(found) };
    },
    async close() {
      await Promise.all([...connections.values()].map((connection) => connection.close()));
    },
  };
}
