/**
 * The benchmark's retail tools as an MCP server (SDK v2, streamable HTTP on loopback): each call
 * goes to the sandbox's retail API once. An answer from the API is a tool result (a benchmark
 * error string is an `isError` result: nothing was written). No answer, or a 5xx, is a JSON-RPC
 * internal error: the server cannot know whether the write landed, and says so.
 */
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import {
  type CallToolResult,
  createMcpHandler,
  hostHeaderValidationResponse,
  ProtocolError,
  Server,
  type Tool,
} from '@modelcontextprotocol/server';
import { retailToolArguments } from '../../sandbox/providers/retail/retail-provider.js';
import { calculate } from './retail-calculator.js';
import { retailToolDefinitions } from './retail-tool-definitions.js';

/** Options of {@link startRetailMcpServer}. */
export interface RetailMcpServerOptions {
  /** The sandbox data plane, e.g. `http://127.0.0.1:5501`. */
  readonly dataUrl: string;
  /** A retail API key of the sandbox (`retail_agent` role for writes). */
  readonly apiKey: string;
  /** How long one API request may take before the call fails as unknown, in ms. @default 10_000 */
  readonly requestTimeoutMs?: number;
}

/** A running retail MCP server. */
export interface RunningRetailMcpServer {
  /** `http://127.0.0.1:PORT/mcp`. */
  readonly url: string;
  close(): Promise<void>;
}

/** The JSON-RPC code of "the call may have run": never one the gateway reads as a refusal. */
const OUTCOME_UNKNOWN_CODE = -32603;

const text = (value: string, isError = false): CallToolResult => ({
  content: [{ type: 'text', text: value }],
  ...(isError ? { isError: true } : {}),
});

/** Calls the retail API for one tool; throws `ProtocolError` when the outcome is unknown. */
async function callRetailApi(
  options: RetailMcpServerOptions,
  tool: string,
  args: Readonly<Record<string, unknown>>,
  write: boolean,
): Promise<CallToolResult> {
  const url = new URL(`/retail/v1/${tool}`, options.dataUrl);
  if (!write) {
    for (const [name, value] of Object.entries(args)) url.searchParams.set(name, String(value));
  }
  let response: Response;
  let body: unknown;
  try {
    response = await fetch(url, {
      method: write ? 'POST' : 'GET',
      headers: {
        authorization: `Bearer ${options.apiKey}`,
        ...(write ? { 'content-type': 'application/json' } : {}),
      },
      ...(write ? { body: JSON.stringify(args) } : {}),
      signal: AbortSignal.timeout(options.requestTimeoutMs ?? 10_000),
    });
    body = await response.json();
  } catch {
    throw new ProtocolError(
      OUTCOME_UNKNOWN_CODE,
      `The retail API did not answer ${tool}; it may or may not have run`,
    );
  }
  if (response.status >= 500 || response.status === 429) {
    throw new ProtocolError(
      OUTCOME_UNKNOWN_CODE,
      `The retail API answered ${tool} with HTTP ${response.status}; it may or may not have run`,
    );
  }
  const result = (body as { result?: unknown }).result;
  if (response.status === 200) {
    return text(typeof result === 'string' ? result : JSON.stringify(result));
  }
  const message = (body as { error?: { message?: unknown } }).error?.message;
  return text(typeof message === 'string' ? message : `Error: HTTP ${response.status}`, true);
}

/** The MCP server for one request (the handler builds one per exchange). */
function retailServer(options: RetailMcpServerOptions): Server {
  const server = new Server(
    { name: 'tau-bench-retail', version: '1.0.0' },
    { capabilities: { tools: {} } },
  );
  server.setRequestHandler('tools/list', async () => ({
    tools: retailToolDefinitions as unknown as Tool[],
  }));
  server.setRequestHandler('tools/call', async (request) => {
    const { name } = request.params;
    const args = (request.params.arguments ?? {}) as Record<string, unknown>;
    if (name === 'calculate') return text(calculate(String(args.expression ?? '')));
    if (name === 'think') return text('');
    if (name === 'transfer_to_human_agents') return text('Transfer successful');
    if (!Object.hasOwn(retailToolArguments, name)) {
      throw new ProtocolError(-32602, `Unknown tool: ${name}`);
    }
    return callRetailApi(options, name, args, !READ_TOOLS.has(name));
  });
  return server;
}

/** The tools that only read (GET); the others write (POST). */
const READ_TOOLS = new Set([
  'find_user_id_by_email',
  'find_user_id_by_name_zip',
  'get_user_details',
  'get_order_details',
  'get_product_details',
  'list_all_product_types',
]);

/** Serves the retail tools on 127.0.0.1 (a free port). */
export async function startRetailMcpServer(
  options: RetailMcpServerOptions,
): Promise<RunningRetailMcpServer> {
  const handler = createMcpHandler(() => retailServer(options));
  const server = serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch: (request) => {
      if (new URL(request.url).pathname !== '/mcp') {
        return Promise.resolve(new Response('not found', { status: 404 }));
      }
      return Promise.resolve(
        hostHeaderValidationResponse(request, ['127.0.0.1', 'localhost']) ?? handler.fetch(request),
      );
    },
  });
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    async close() {
      await handler.close();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        (server as unknown as { closeAllConnections?: () => void }).closeAllConnections?.();
      });
    },
  };
}
