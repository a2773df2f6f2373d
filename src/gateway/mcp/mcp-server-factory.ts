/**
 * The MCP server the door serves, built per connection (stdio) or per request (HTTP) by the
 * SDK v2 serving entries, which pick the protocol era: `2025-11-25` after an `initialize`
 * handshake, `2026-07-28` for per-request envelopes. One factory backs both eras. The low-level
 * `Server` is used on purpose: the tool set is the gateway's config, arguments are checked by
 * the guard's contracts (so a violation is a result with a code, not an SDK error), and
 * annotations come from the declarations.
 */
import {
  type CallToolResult,
  type McpRequestContext,
  type McpServerFactory,
  Server,
} from '@modelcontextprotocol/server';
import type { AgentIdentity } from '../decide-call.js';
import { callMcpTool } from './mcp-call-tool.js';
import type { McpGateway } from './mcp-gateway.js';
import { listMcpTools } from './mcp-tool-catalog.js';
import { doorErrorReply, McpDoorCode } from './mcp-tool-reply.js';

/** What the agent's MCP client reads when it connects. */
export const GATEWAY_INSTRUCTIONS =
  'Sideguard gateway: every write tool here is guarded. A call with the same effect-defining ' +
  'arguments is one effect, so retrying is safe and returns the original result. A refusal is a ' +
  'tool result with isError and a code plus a hint saying what to change. When a call waits for ' +
  'approval the result says so at once with a proposal id: check it with sideguard_proposal.';

/** Resolves who is calling from the serving context (stdio: fixed; HTTP: the bearer key). */
export type IdentityOf = (context: McpRequestContext) => AgentIdentity;

/** Builds the factory both serving entries call. */
export function createMcpServerFactory(
  gateway: McpGateway,
  identityOf: IdentityOf,
): McpServerFactory {
  const verify = gateway.hooks.requestStateVerify;
  return (requestContext) => {
    const identity = identityOf(requestContext);
    const server = new Server(gateway.serverInfo, {
      capabilities: { tools: { listChanged: false } },
      instructions: GATEWAY_INSTRUCTIONS,
      ...(verify === undefined ? {} : { requestState: { verify } }),
    });
    server.setRequestHandler('tools/list', async () => ({
      tools: await listMcpTools(gateway, identity),
    }));
    server.setRequestHandler('tools/call', async (request, context) => {
      try {
        const answer = await callMcpTool(gateway, identity, {
          name: request.params.name,
          arguments: request.params.arguments ?? {},
          era: requestContext.era,
          context,
        });
        return 'content' in answer
          ? server.projectCallToolResult(answer as CallToolResult, undefined)
          : answer;
      } catch (error) {
        gateway.hooks.onProblem?.(
          `tools/call ${request.params.name} failed inside the gateway: ${error instanceof Error ? error.message : String(error)}`,
        );
        return doorErrorReply(
          null,
          McpDoorCode.gateway_error,
          'The gateway could not complete this call (its store or an internal step failed). Calling again later with the same arguments is safe.',
        );
      }
    });
    return server;
  };
}
