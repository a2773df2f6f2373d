/**
 * The resolved configuration both doors decide on: upstreams, bindings indexed by upstream (most
 * specific route first), agents with hashed keys, role grants and deny rules. Built once by
 * `compileGatewayConfig`; immutable and free of I/O.
 */
import type { ActionDefinition } from '../core/action.js';
import type {
  GatewayServerConfig,
  HttpReadBindingConfig,
  HttpWriteBindingConfig,
  McpToolBindingConfig,
  UpstreamConfig,
  UpstreamMode,
} from './config-types.js';
import type { RoutePattern } from './route-pattern.js';

/** An upstream with its defaults applied. */
export interface CompiledUpstream {
  readonly name: string;
  readonly kind: 'http' | 'mcp';
  readonly mode: UpstreamMode;
  /** Undeclared reads are forwarded instead of `miss`. */
  readonly passReads: boolean;
  readonly config: UpstreamConfig;
}

/** An HTTP route bound to a read or to an action. */
export interface CompiledHttpBinding {
  readonly kind: 'http';
  readonly name: string;
  readonly upstream: string;
  readonly pattern: RoutePattern;
  readonly access: 'read' | 'write';
  /** The declared action (writes only). */
  readonly action: ActionDefinition | undefined;
  readonly config: HttpReadBindingConfig | HttpWriteBindingConfig;
}

/** An upstream MCP tool bound to a read or to an action. */
export interface CompiledToolBinding {
  readonly kind: 'tool';
  readonly name: string;
  readonly upstream: string;
  readonly tool: string;
  readonly toolDigest: string;
  readonly access: 'read' | 'write';
  readonly action: ActionDefinition | undefined;
  readonly config: McpToolBindingConfig;
}

export type CompiledBinding = CompiledHttpBinding | CompiledToolBinding;

/** An agent; its key is kept only as a SHA-256 digest. */
export interface CompiledAgent {
  readonly id: string;
  readonly principal: string;
  readonly keySha256: Uint8Array;
  readonly roles: readonly string[];
  readonly tenant: string;
}

/** A deny rule with its prefix split into segments. */
export interface CompiledDenyRule {
  readonly upstream: string;
  readonly method: string | undefined;
  readonly prefix: readonly string[] | undefined;
  readonly tool: string | undefined;
  readonly reason: string;
}

/** The gateway's own limits, defaults applied. */
export interface ResolvedServerConfig {
  readonly host: string;
  readonly port: number;
  readonly bodyLimitBytes: number;
  readonly inProgressWaitMs: number;
}

/** Everything the decision function and the doors read. */
export interface GatewayTable {
  readonly tenant: string;
  readonly upstreams: ReadonlyMap<string, CompiledUpstream>;
  /** Per upstream, most specific route first. */
  readonly httpBindings: ReadonlyMap<string, readonly CompiledHttpBinding[]>;
  /** Per upstream, by tool name. */
  readonly toolBindings: ReadonlyMap<string, ReadonlyMap<string, CompiledToolBinding>>;
  /** Declared actions by `namespace.name@version`. */
  readonly actions: ReadonlyMap<string, ActionDefinition>;
  readonly agents: readonly CompiledAgent[];
  /** Role → granted binding names and wildcards. */
  readonly roles: ReadonlyMap<string, readonly string[]>;
  readonly deny: readonly CompiledDenyRule[];
  readonly server: ResolvedServerConfig;
  readonly consoleUrl: string | undefined;
}

/** Server defaults, shared by the compiler and `config check`. */
export const SERVER_DEFAULTS: Required<GatewayServerConfig> = {
  host: '127.0.0.1',
  port: 4400,
  bodyLimitBytes: 262_144,
  inProgressWaitMs: 15_000,
};
