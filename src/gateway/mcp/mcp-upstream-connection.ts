/**
 * The gateway's connection to one upstream MCP server (stdio child or streamable HTTP), through
 * the official SDK v2 client. Connects lazily, notices when the server goes away and connects
 * again on a later call — never by re-sending the call that failed (no hidden retries). Every
 * failure is a value that says whether the call can have reached the server.
 */
import {
  Client,
  ProtocolError,
  SdkError,
  SdkErrorCode,
  StreamableHTTPClientTransport,
  type Tool,
} from '@modelcontextprotocol/client';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import type { UpstreamToolReply } from '../config-types.js';

/** How to start or reach the server, already resolved (absolute `cwd`). */
export type McpUpstreamEndpoint =
  | {
      readonly kind: 'stdio';
      readonly command: string;
      readonly args: readonly string[];
      /** Added to the SDK's safe default environment (PATH, HOME, …); nothing else is inherited. */
      readonly env: Readonly<Record<string, string>>;
      readonly cwd: string;
      /** Where the child's stderr goes. @default 'inherit' */
      readonly stderr?: 'inherit' | 'ignore';
    }
  | {
      readonly kind: 'http';
      readonly url: string;
      readonly headers: Readonly<Record<string, string>>;
    };

/** What listing the server's tools produced. */
export type ToolListReply =
  | { readonly kind: 'tools'; readonly tools: readonly Tool[] }
  | { readonly kind: 'unavailable'; readonly reason: string };

/** One upstream MCP server, as the gateway uses it. */
export interface McpUpstreamConnection {
  /** The server's current tool definitions, read fresh (never from a cache). */
  listTools(): Promise<ToolListReply>;
  /** Calls a tool once, waiting at most the connection's `timeoutMs` for the answer. */
  callTool(name: string, args: Readonly<Record<string, unknown>>): Promise<UpstreamToolReply>;
  /** Stops the child process or closes the HTTP session. Later calls connect again. */
  close(): Promise<void>;
}

/** The gateway's name towards upstream servers. */
const CLIENT_INFO = { name: 'sideguard-gateway', version: '0.1.0' } as const;

/** JSON-RPC error codes that prove the server refused the request before running the tool. */
const REFUSED_BEFORE_RUNNING = new Set([-32700, -32600, -32601, -32602]);

/** A short, single-line description of an error (never a stack, never the arguments). */
const describe = (error: unknown): string =>
  (error instanceof Error ? error.message : String(error)).split('\n')[0]?.slice(0, 200) ??
  'unknown error';

function transportOf(endpoint: McpUpstreamEndpoint) {
  if (endpoint.kind === 'stdio') {
    return new StdioClientTransport({
      command: endpoint.command,
      args: [...endpoint.args],
      env: { ...getDefaultEnvironment(), ...endpoint.env },
      cwd: endpoint.cwd,
      stderr: endpoint.stderr ?? 'inherit',
    });
  }
  return new StreamableHTTPClientTransport(new URL(endpoint.url), {
    requestInit: { headers: { ...endpoint.headers } },
    // Resuming a broken stream is the client re-sending on its own: the gateway decides that.
    reconnectionOptions: {
      maxRetries: 0,
      initialReconnectionDelay: 1_000,
      maxReconnectionDelay: 1_000,
      reconnectionDelayGrowFactor: 1,
    },
  });
}

/** Maps a thrown call failure to whether the call can have reached the server. */
export function toolCallFailure(error: unknown): UpstreamToolReply {
  if (error instanceof ProtocolError) {
    return REFUSED_BEFORE_RUNNING.has(error.code)
      ? { kind: 'error', code: error.code, message: describe(error) }
      : { kind: 'no_response', reason: 'lost' };
  }
  if (error instanceof SdkError && error.code === SdkErrorCode.RequestTimeout) {
    return { kind: 'no_response', reason: 'timeout' };
  }
  if (error instanceof SdkError && error.code === SdkErrorCode.NotConnected) {
    return { kind: 'no_response', reason: 'not_sent' };
  }
  // Closed connections, send failures and results that fail validation: it may have run.
  return { kind: 'no_response', reason: 'lost' };
}

/**
 * Listings that are always fresh for the caller — each one starts after the call that asked
 * for it arrived — yet shared: callers arriving while a listing runs (it may have started
 * before them) all wait for the one listing that starts when it ends. At most two listings of
 * one server are ever in flight, however many calls check their pins at once.
 */
export function freshListings<T>(list: () => Promise<T>): { fresh(): Promise<T> } {
  let running: Promise<T> | undefined;
  let queued: Promise<T> | undefined;
  const start = (): Promise<T> => {
    const listing = list();
    running = listing;
    const clear = () => {
      if (running === listing) running = undefined;
    };
    listing.then(clear, clear);
    return listing;
  };
  return {
    fresh() {
      if (running === undefined) return start();
      if (queued === undefined) {
        const next = () => {
          queued = undefined;
          return start();
        };
        queued = running.then(next, next);
      }
      return queued;
    },
  };
}

/** How long starting (or reaching) a server and its handshake may take, in ms. */
export const MCP_CONNECT_TIMEOUT_MS = 30_000;

/** Options of one connection. */
export interface McpUpstreamConnectionOptions {
  /** How long listing tools or one tool call may take, in ms (connecting has its own bound). */
  readonly timeoutMs: number;
  /** Hears about connect failures (for the operator's log). @default ignore */
  readonly onProblem?: (message: string) => void;
}

/** A connection to one upstream server. */
export function createMcpUpstreamConnection(
  endpoint: McpUpstreamEndpoint,
  options: McpUpstreamConnectionOptions,
): McpUpstreamConnection {
  const { timeoutMs } = options;
  const limits = { timeout: timeoutMs, maxTotalTimeout: timeoutMs };
  let connected: Promise<Client> | undefined;

  const connect = (): Promise<Client> => {
    if (connected !== undefined) return connected;
    const client = new Client(CLIENT_INFO, {
      // stdio servers today speak the 2025 handshake; probing spawns a second child. HTTP probes.
      versionNegotiation: { mode: endpoint.kind === 'http' ? 'auto' : 'legacy' },
    });
    const attempt = (async () => {
      client.onclose = () => {
        if (connected === attempt) connected = undefined;
      };
      // A cold start (spawning node, loading an SDK) is slower than a call: its own bound.
      await client.connect(transportOf(endpoint), {
        timeout: MCP_CONNECT_TIMEOUT_MS,
        maxTotalTimeout: MCP_CONNECT_TIMEOUT_MS,
      });
      return client;
    })();
    connected = attempt;
    attempt.catch((error: unknown) => {
      if (connected === attempt) connected = undefined;
      options.onProblem?.(`could not connect: ${describe(error)}`);
      void client.close().catch(() => {});
    });
    return attempt;
  };

  const listOnce = async (): Promise<ToolListReply> => {
    let client: Client;
    try {
      client = await connect();
    } catch (error) {
      return { kind: 'unavailable', reason: describe(error) };
    }
    try {
      // Kept out of the client's cache: re-deriving its per-tool views (output validators)
      // after each refresh costs more than the round trip itself.
      const listed = await client.listTools(undefined, { ...limits, cacheMode: 'bypass' });
      return { kind: 'tools', tools: listed.tools };
    } catch (error) {
      return { kind: 'unavailable', reason: describe(error) };
    }
  };
  const listings = freshListings(listOnce);

  return {
    listTools: () => listings.fresh(),
    async callTool(name, args) {
      let client: Client;
      try {
        client = await connect();
      } catch {
        return { kind: 'no_response', reason: 'not_sent' };
      }
      try {
        const result = await client.callTool({ name, arguments: { ...args } }, limits);
        return {
          kind: 'result',
          content: (result.content ?? []) as readonly Readonly<Record<string, unknown>>[],
          ...(result.structuredContent === undefined
            ? {}
            : { structuredContent: result.structuredContent }),
          ...(result.isError === true ? { isError: true } : {}),
        };
      } catch (error) {
        return toolCallFailure(error);
      }
    },
    async close() {
      const current = connected;
      connected = undefined;
      if (current === undefined) return;
      try {
        await (await current).close();
      } catch {
        // A server that never connected has nothing to close.
      }
    },
  };
}
