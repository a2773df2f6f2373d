/**
 * `sideguard mcp`: the door over stdio, for MCP clients that launch their servers. The SDK's
 * `serveStdio` picks the era from the opening exchange (an `initialize` handshake pins
 * 2025-11-25; a `server/discover` probe or an enveloped request is 2026-07-28). A stdio
 * connection has no headers, so the agent's key comes from the environment the client launches
 * the command with (`SIDEGUARD_AGENT_KEY`) and is checked once, before anything is served.
 */
import type { Transport } from '@modelcontextprotocol/server';
import { type StdioServerHandle, serveStdio } from '@modelcontextprotocol/server/stdio';
import { authenticateAgent } from '../agent-identity.js';
import type { AgentIdentity } from '../decide-call.js';
import type { McpGateway } from './mcp-gateway.js';
import { createMcpServerFactory } from './mcp-server-factory.js';

/** The environment variable that carries the agent key of a stdio connection. */
export const AGENT_KEY_ENVIRONMENT_VARIABLE = 'SIDEGUARD_AGENT_KEY';

/** Options of the stdio door. */
export interface McpStdioDoorOptions {
  /** The agent's key (from `SIDEGUARD_AGENT_KEY`). */
  readonly agentKey: string | undefined;
  /** @default the process's stdin and stdout */
  readonly transport?: Transport;
}

/** Who a stdio connection serves: the agent whose key it was launched with. */
export function stdioIdentity(gateway: McpGateway, agentKey: string | undefined): AgentIdentity {
  return authenticateAgent(gateway.table.agents, agentKey === '' ? undefined : agentKey);
}

/**
 * Serves the gateway on stdio for one agent. The caller checks `stdioIdentity` first and refuses
 * to start for a missing or unknown key (a client shows a server that fails to start; it would
 * not show a tool list that is silently empty).
 */
export function serveMcpOverStdio(
  gateway: McpGateway,
  options: McpStdioDoorOptions,
): StdioServerHandle {
  const identity = stdioIdentity(gateway, options.agentKey);
  const factory = createMcpServerFactory(gateway, () => identity);
  return serveStdio(factory, {
    ...(options.transport === undefined ? {} : { transport: options.transport }),
    // One line per problem: a malformed message's validation report spans dozens of lines.
    onerror: (error) =>
      gateway.hooks.onProblem?.(`MCP stdio: ${error.message.replace(/\s+/g, ' ').slice(0, 300)}`),
  });
}
