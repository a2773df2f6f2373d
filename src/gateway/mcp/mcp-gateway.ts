/**
 * What the MCP door runs on: the compiled config, the guard, the upstream MCP servers, the
 * executable actions of tool bindings and the hooks other parts plug in (the decision log,
 * shadow state, the in-client approval round trip of issue 11). Both transports (stdio and
 * streamable HTTP) serve from one `McpGateway`; it holds no per-agent state.
 */
import type { ActionDefinition } from '../../core/action.js';
import { keyedDigest } from '../../core/commitment.js';
import type { Guard } from '../../core/guard.js';
import { KeyPurpose, type KeyRing } from '../../core/key-ring.js';
import { compileGatewayConfig, GatewayConfigError } from '../config-compile.js';
import type { GatewayConfig } from '../config-types.js';
import { createExecutionCapture, type ExecutionCapture } from '../execution-capture.js';
import type { GatewayTable } from '../gateway-table.js';
import type { GuardedCallContext } from '../guarded-call.js';
import { type ActionExecutable, actionExecutables } from './mcp-action-executables.js';
import { bindMcpToolWrite } from './mcp-bound-action.js';
import type { McpDoorHooks } from './mcp-door-hooks.js';
import { stableJson } from './mcp-tool-digest.js';
import { buildMcpToolDirectory, type McpToolDirectory } from './mcp-tool-directory.js';
import { createMcpUpstreamPool, type McpUpstreamPool } from './mcp-upstream-pool.js';

/** The MCP door's view of one gateway. */
export interface McpGateway {
  readonly table: GatewayTable;
  readonly directory: McpToolDirectory;
  readonly guard: Guard;
  /** The guard's key ring (keyed digests, signed `requestState`s). */
  readonly keyRing: KeyRing;
  readonly guardedCall: GuardedCallContext;
  readonly pool: McpUpstreamPool;
  /** The executable action of each MCP tool write binding, by binding name. */
  readonly boundActions: ReadonlyMap<string, ActionDefinition>;
  /** What runs when a declared action is called as a tool, by action type. */
  readonly actionExecutables: ReadonlyMap<string, ActionExecutable>;
  readonly hooks: McpDoorHooks;
  /** How the gateway names itself to MCP clients. */
  readonly serverInfo: { readonly name: string; readonly version: string };
  /** Milliseconds since the epoch (event times). */
  now(): number;
  /**
   * A keyed digest (HMAC with the key ring's current key) of tool arguments, for decision events:
   * equal arguments give equal digests, and nobody without the key can test a guess (I8).
   */
  digestArguments(args: unknown): string;
  /** Closes the upstream connections (the guard's store belongs to whoever opened it). */
  close(): Promise<void>;
}

/** What `createMcpGateway` needs. */
export interface McpGatewayConfig {
  /** The gateway config (what `defineConfig` returns); compiled unless `table` is given. */
  readonly config?: GatewayConfig;
  /** The compiled config, when the host compiled it already (`sideguard serve`). */
  readonly table?: GatewayTable;
  readonly guard: Guard;
  /** The guard's key ring (for keyed digests in decision events). */
  readonly keyRing: KeyRing;
  /** The guarded-call settings. @default the guard, the capture, the config's in-progress wait */
  readonly guardedCall?: GuardedCallContext;
  /** The config file, named in config errors. @default '(config)' */
  readonly file?: string;
  /** Relative stdio `cwd`s resolve against it (the config file's directory). @default cwd */
  readonly directory?: string;
  /** Shared with the HTTP door when both run in one process. @default a new one */
  readonly capture?: ExecutionCapture;
  /**
   * The HTTP door's executable actions by binding name (`runtime.http`), so an action bound to
   * one HTTP route runs through it when called as a tool. @default none
   */
  readonly httpExecutables?: ReadonlyMap<string, ActionDefinition>;
  /** @default a pool over the table's MCP upstreams */
  readonly pool?: McpUpstreamPool;
  readonly hooks?: McpDoorHooks;
  /** Where stdio upstream children's stderr goes. @default 'inherit' */
  readonly upstreamStderr?: 'inherit' | 'ignore';
  /** Milliseconds, for the in-progress wait only. @default Date.now */
  readonly now?: () => number;
  readonly sleep?: (ms: number) => Promise<void>;
  /** @default { name: 'sideguard', version: '0.1.0' } */
  readonly serverInfo?: { readonly name: string; readonly version: string };
}

/** The keyed-digest domain of MCP tool arguments in decision events. */
const ARGUMENTS_DOMAIN = 'sideguard/gateway/mcp-arguments/v1';

const defaultSleep = (ms: number): Promise<void> =>
  new Promise((resolve) => {
    setTimeout(resolve, ms);
  });

function tableOf(config: McpGatewayConfig, file: string): GatewayTable {
  if (config.table !== undefined) return config.table;
  if (config.config === undefined) throw new TypeError('createMcpGateway needs config or table');
  const compiled = compileGatewayConfig(config.config);
  if (compiled.kind === 'invalid') throw new GatewayConfigError(file, compiled.problems);
  return compiled.table;
}

/**
 * Assembles the door's gateway. @throws GatewayConfigError for a config with problems, or when
 * two served tools would share a name (an action's tool name, a binding name, or
 * `sideguard_proposal`).
 */
export function createMcpGateway(config: McpGatewayConfig): McpGateway {
  const file = config.file ?? '(config)';
  const table = tableOf(config, file);
  const directory = buildMcpToolDirectory(table, config.config);
  if (directory.problems.length > 0) throw new GatewayConfigError(file, directory.problems);
  const capture = config.capture ?? createExecutionCapture();
  const hooks = config.hooks ?? {};
  const pool =
    config.pool ??
    createMcpUpstreamPool(table, {
      directory: config.directory ?? process.cwd(),
      ...(config.upstreamStderr === undefined ? {} : { stderr: config.upstreamStderr }),
      onProblem: (upstream, message) =>
        hooks.onProblem?.(`upstream MCP server "${upstream}": ${message}`),
    });
  const boundActions = new Map<string, ActionDefinition>();
  for (const tools of table.toolBindings.values()) {
    for (const binding of tools.values()) {
      if (binding.access === 'write') {
        boundActions.set(binding.name, bindMcpToolWrite(binding, { pool, capture }));
      }
    }
  }
  const now = config.now ?? Date.now;
  const { keyRing } = config;
  return {
    table,
    directory,
    guard: config.guard,
    keyRing,
    guardedCall: config.guardedCall ?? {
      guard: config.guard,
      capture,
      inProgressWaitMs: table.server.inProgressWaitMs,
      now,
      sleep: config.sleep ?? defaultSleep,
    },
    pool,
    boundActions,
    actionExecutables: actionExecutables(table, boundActions, config.httpExecutables ?? new Map()),
    hooks,
    serverInfo: config.serverInfo ?? { name: 'sideguard', version: '0.1.0' },
    now,
    digestArguments(args) {
      let text: string;
      try {
        text = stableJson(args);
      } catch {
        return 'undigestable';
      }
      return keyedDigest(keyRing, KeyPurpose.commitment, keyRing.current, ARGUMENTS_DOMAIN, text);
    },
    close: () => pool.close(),
  };
}
