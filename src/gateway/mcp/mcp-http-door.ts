/**
 * `/mcp` over streamable HTTP: one web-standard `fetch` handler serving both protocol eras
 * (the SDK's `createMcpHandler`: 2026-07-28 per request, 2025-era clients through its stateless
 * fallback). Agents authenticate with `Authorization: Bearer <agent key>` on every request; a
 * missing or unknown key is answered `401` before any MCP handling. Host and Origin are checked
 * against an allow-list (DNS rebinding), reserved `x-sideguard-*` headers are refused.
 */
import {
  createMcpHandler,
  hostHeaderValidationResponse,
  originValidationResponse,
} from '@modelcontextprotocol/server';
import { authenticateAgent, presentedKey } from '../agent-identity.js';
import type { AgentIdentity } from '../decide-call.js';
import { decideCall } from '../decide-call.js';
import { RESERVED_HEADER_PREFIX } from '../header-policy.js';
import { mcpDecisionEvent, recordDecision } from './mcp-call-tool.js';
import type { McpGateway } from './mcp-gateway.js';
import { createMcpServerFactory } from './mcp-server-factory.js';

/** Options of the HTTP door. */
export interface McpHttpDoorOptions {
  /**
   * Host names (no port) requests may address; `null` accepts any (behind a proxy that checks).
   * @default localhost, 127.0.0.1 and [::1]
   */
  readonly allowedHostnames?: readonly string[] | null;
  /** Origin host names a browser-based client may send. @default the allowed host names */
  readonly allowedOriginHostnames?: readonly string[];
}

/** The `/mcp` handler: mount `fetch` at `/mcp` on the gateway's main port. */
export interface McpHttpDoor {
  fetch(request: Request): Promise<Response>;
  /** Aborts in-flight 2026-07-28 exchanges. */
  close(): Promise<void>;
}

const LOCAL_HOSTNAMES = ['localhost', '127.0.0.1', '[::1]'];

/** An RFC 9457 problem answer with the code an agent can branch on. */
function problem(
  status: number,
  code: string,
  hint: string,
  headers: Readonly<Record<string, string>> = {},
): Response {
  return new Response(JSON.stringify({ type: 'about:blank', status, title: code, code, hint }), {
    status,
    headers: { 'content-type': 'application/problem+json', ...headers },
  });
}

/** Creates the door. The gateway's tables decide; this only translates HTTP. */
export function createMcpHttpDoor(
  gateway: McpGateway,
  options: McpHttpDoorOptions = {},
): McpHttpDoor {
  const agents = new Map(gateway.table.agents.map((agent) => [agent.id, agent]));
  const factory = createMcpServerFactory(gateway, (context): AgentIdentity => {
    const agent = agents.get(context.authInfo?.clientId ?? '');
    return agent === undefined ? { kind: 'missing' } : { kind: 'agent', agent };
  });
  const handler = createMcpHandler(factory, {
    maxRequestBodySize: gateway.table.server.bodyLimitBytes,
    onerror: (error) =>
      gateway.hooks.onProblem?.(`MCP HTTP: ${error.message.replace(/\s+/g, ' ').slice(0, 300)}`),
  });
  const hostnames =
    options.allowedHostnames === undefined ? LOCAL_HOSTNAMES : options.allowedHostnames;
  const origins = options.allowedOriginHostnames ?? hostnames ?? [];

  return {
    async fetch(request) {
      if (hostnames !== null) {
        const refused =
          hostHeaderValidationResponse(request, [...hostnames]) ??
          originValidationResponse(request, [...origins]);
        if (refused !== undefined) return refused;
      }
      for (const name of request.headers.keys()) {
        if (name.toLowerCase().startsWith(RESERVED_HEADER_PREFIX)) {
          return problem(
            400,
            'reserved_header',
            `Headers starting with ${RESERVED_HEADER_PREFIX} belong to the gateway; remove ${name}.`,
          );
        }
      }
      const identity = authenticateAgent(
        gateway.table.agents,
        presentedKey(request.headers.get('authorization') ?? undefined),
      );
      if (identity.kind !== 'agent') {
        const refusal = decideCall(gateway.table, identity, { kind: 'action', actionType: '' });
        if (refusal.kind === 'deny' || refusal.kind === 'miss') {
          await recordDecision(
            gateway,
            mcpDecisionEvent(gateway, identity, refusal, { code: refusal.reason }, null),
          );
          return problem(401, refusal.reason, refusal.hint, {
            'www-authenticate': `Bearer realm="sideguard", error="${identity.kind === 'missing' ? 'invalid_request' : 'invalid_token'}"`,
          });
        }
      }
      return handler.fetch(request, {
        authInfo: {
          // The key itself never travels further than this check.
          token: 'verified',
          clientId: identity.kind === 'agent' ? identity.agent.id : '',
          scopes: [],
        },
      });
    },
    close: () => handler.close(),
  };
}
