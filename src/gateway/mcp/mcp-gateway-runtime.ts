/**
 * The MCP door on the gateway's shared runtime (`openGatewayRuntime`): the same guard, store,
 * gateway state, decision log and execution capture as the HTTP door, so one effect is one
 * proposal whichever door it came through. `mcpGatewayOfRuntime` is what `/mcp` on
 * `sideguard serve` mounts; `openMcpGateway` is what `sideguard mcp` (stdio) runs.
 */
import { dirname } from 'node:path';
import type { KeyRing } from '../../core/key-ring.js';
import type { LoadedGatewayConfig } from '../config-loader.js';
import type { GatewayConfig } from '../config-types.js';
import { type GatewayRuntime, openGatewayRuntime } from '../gateway-runtime.js';
import { recordShadowWrite } from '../rehearsal-state.js';
import type { McpDoorHooks } from './mcp-door-hooks.js';
import { createMcpGateway, type McpGateway } from './mcp-gateway.js';

/** Options of {@link mcpGatewayOfRuntime}. */
export interface McpGatewayOfRuntimeOptions {
  /** The config file: relative stdio `cwd`s resolve against its directory. */
  readonly configFile: string;
  /** The config itself, so a naming problem can point at a binding's index. */
  readonly config?: GatewayConfig;
  /** Added to the runtime's own hooks (decision log, shadow state). */
  readonly hooks?: Pick<McpDoorHooks, 'onProblem' | 'pendingApproval' | 'requestStateVerify'>;
  /** Where stdio upstream children's stderr goes. @default 'inherit' */
  readonly upstreamStderr?: 'inherit' | 'ignore';
}

/** The shadow state key of an MCP tool write (never a path, so no HTTP read can match it). */
export const mcpShadowResource = (tool: string): string => `mcp:tools/${tool}`;

/** The MCP door's gateway over a running gateway's runtime. Close it before the runtime. */
export function mcpGatewayOfRuntime(
  runtime: GatewayRuntime,
  options: McpGatewayOfRuntimeOptions,
): McpGateway {
  return createMcpGateway({
    table: runtime.table,
    ...(options.config === undefined ? {} : { config: options.config }),
    guard: runtime.guard,
    keyRing: runtime.keyRing,
    capture: runtime.capture,
    guardedCall: runtime.guardedCall,
    httpExecutables: new Map(
      [...runtime.http.values()].flatMap((upstream) => [...upstream.actions]),
    ),
    file: options.configFile,
    directory: dirname(options.configFile),
    now: () => runtime.now(),
    ...(options.upstreamStderr === undefined ? {} : { upstreamStderr: options.upstreamStderr }),
    hooks: {
      ...options.hooks,
      onDecision: (event) => runtime.decisions.record(event),
      onShadowWrite: (write) =>
        recordShadowWrite(runtime.state, runtime.keyRing, {
          tenant: write.tenant,
          upstream: write.upstream,
          resource: mcpShadowResource(write.tool),
          method: 'CALL',
          recordedAtMs: runtime.now(),
          contentType: 'application/json',
          body: Buffer.from(JSON.stringify(write.arguments), 'utf8'),
        }),
    },
  });
}

/** An opened MCP gateway and what closes it. */
export interface OpenedMcpGateway {
  readonly gateway: McpGateway;
  readonly runtime: GatewayRuntime;
  /** Stops the upstream servers, flushes the decision log, closes the stores. */
  close(): Promise<void>;
}

/** Options of {@link openMcpGateway}. */
export interface OpenMcpGatewayOptions {
  /** @default the ring in `SIDEGUARD_KEYS` */
  readonly keyRing?: KeyRing;
  readonly hooks?: McpGatewayOfRuntimeOptions['hooks'];
  readonly upstreamStderr?: 'inherit' | 'ignore';
  /**
   * The data URL of the sandbox a `sideguard serve` runs, for `sandbox`-mode upstreams. Without
   * it, writes bound to them are unavailable in this process. @default none
   */
  readonly sandboxDataUrl?: string;
}

/**
 * Opens the configured store and state, the HTTP upstreams' transports (a `sandbox`-mode one only
 * with `sandboxDataUrl`) and the MCP gateway.
 */
export async function openMcpGateway(
  loaded: LoadedGatewayConfig,
  options: OpenMcpGatewayOptions = {},
): Promise<OpenedMcpGateway> {
  const runtime = await openGatewayRuntime(loaded, {
    sandboxUpstreams: 'skip',
    ...(options.sandboxDataUrl === undefined ? {} : { sandboxDataUrl: options.sandboxDataUrl }),
    ...(options.keyRing === undefined ? {} : { keyRing: options.keyRing }),
    onDecisionLogError: (error) =>
      options.hooks?.onProblem?.(
        `a batch of decision events was not written (${error instanceof Error ? error.message : String(error)})`,
      ),
  });
  try {
    const gateway = mcpGatewayOfRuntime(runtime, {
      configFile: loaded.file,
      config: loaded.config,
      ...(options.hooks === undefined ? {} : { hooks: options.hooks }),
      ...(options.upstreamStderr === undefined ? {} : { upstreamStderr: options.upstreamStderr }),
    });
    return {
      gateway,
      runtime,
      async close() {
        await gateway.close();
        await runtime.close();
      },
    };
  } catch (error) {
    await runtime.close();
    throw error;
  }
}
