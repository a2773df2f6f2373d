/**
 * The shape of `sideguard.config.ts` (or `.mjs`) and `defineConfig`, the typed identity function a
 * config file default-exports. Types and one identity function only, so the root entry
 * (`sideguard`) can export `defineConfig` without loading a server, SDK or driver.
 */

import type { ApproverConfig } from '../approvals/approver-registry.js';
import type {
  ActionDefinition,
  ExecuteContext,
  VerifyContext,
  VerifyResult,
} from '../core/action.js';
import type { Receipt } from '../core/store.js';

/**
 * How the gateway treats an upstream: `live` forwards reads and executes guarded writes against
 * `baseUrl`; `sandbox` does the same against the built-in sandbox; `shadow` forwards reads but
 * records writes instead of sending them; `replay` answers reads from recorded cases and records
 * writes like `shadow` (nothing leaves the gateway).
 */
export const UpstreamMode = {
  live: 'live',
  sandbox: 'sandbox',
  shadow: 'shadow',
  replay: 'replay',
} as const;
export type UpstreamMode = (typeof UpstreamMode)[keyof typeof UpstreamMode];

/** The built-in sandbox providers an upstream in `sandbox` mode can stand for. */
export type SandboxProviderName = 'payments' | 'crm' | 'issues' | 'orders';

/** Where agents reach an HTTP upstream on the gateway. */
export type HttpMount =
  /** A path prefix on the main port, e.g. `/crm` (for clients that take a base URL with a path). */
  | { readonly prefix: string }
  /** A port of its own on the gateway's host (for clients that take only host and port, as `stripe` does). */
  | { readonly port: number };

/** An HTTP API the agent already calls. */
export interface HttpUpstreamConfig {
  readonly kind: 'http';
  /** The real API, e.g. `https://api.stripe.com`. Required unless `mode` is `sandbox`. */
  readonly baseUrl?: string;
  /** @default 'live' */
  readonly mode?: UpstreamMode;
  readonly mount: HttpMount;
  /**
   * Headers the gateway adds to every upstream request: the provider's credentials. Agents never
   * hold them; whatever credential an agent sends is removed before forwarding.
   */
  readonly credentials?: { readonly headers: Readonly<Record<string, string>> };
  /** In `sandbox` mode: the built-in provider; its default writer key is injected when `credentials` is unset. */
  readonly sandboxProvider?: SandboxProviderName;
  /** Forward GET/HEAD requests no binding declares (they are `miss` otherwise). @default false */
  readonly passReads?: boolean;
  /** How long one upstream request may take before its outcome is unknown, in ms. @default 10_000 */
  readonly timeoutMs?: number;
  /** The header carrying the provider idempotency key on guarded writes; `null` sends none. @default 'Idempotency-Key' */
  readonly idempotencyHeader?: string | null;
  /** `replay` mode: the cases file written by `sideguard record`, relative to the config file. */
  readonly replayCases?: string;
}

/** How the gateway reaches an upstream MCP server. */
export type McpTransportConfig =
  | {
      readonly stdio: {
        readonly command: string;
        readonly args?: readonly string[];
        readonly env?: Readonly<Record<string, string>>;
        /** Relative to the config file. @default the config file's directory */
        readonly cwd?: string;
      };
    }
  | { readonly url: string; readonly headers?: Readonly<Record<string, string>> };

/** An MCP server the agent already uses, wrapped by the gateway. */
export interface McpUpstreamConfig {
  readonly kind: 'mcp';
  readonly transport: McpTransportConfig;
  /** @default 'live' */
  readonly mode?: Exclude<UpstreamMode, 'sandbox'>;
  /** How long one upstream tool call may take, in ms. @default 30_000 */
  readonly timeoutMs?: number;
}

export type UpstreamConfig = HttpUpstreamConfig | McpUpstreamConfig;

/** An agent's HTTP request as a binding's `toInput` sees it (credentials already removed). */
export interface BoundHttpRequest {
  readonly method: string;
  /** The path relative to the upstream mount, e.g. `/v1/refunds`. */
  readonly path: string;
  /** Route parameters (`:id`), percent-decoded. */
  readonly params: Readonly<Record<string, string>>;
  /** Query parameters; a repeated name gives its values in order. */
  readonly query: Readonly<Record<string, string | readonly string[]>>;
  /** Parsed JSON, a parsed form (bracket notation one level deep), or `undefined` when empty. */
  readonly body: unknown;
  /** Lower-case request headers without credentials, cookies or hop-by-hop headers. */
  readonly headers: Readonly<Record<string, string>>;
}

/** The upstream request a guarded write sends, built from the proposal's input alone. */
export interface UpstreamRequestSpec {
  /** @default the bound route's method */
  readonly method?: string;
  /** Path relative to the upstream's `baseUrl`, e.g. `/v1/refunds`. */
  readonly path: string;
  readonly query?: Readonly<Record<string, string | readonly string[]>>;
  /** A form-encoded body (Stripe); nested objects are not expanded, use `metadata[key]` names. */
  readonly form?: Readonly<Record<string, string>>;
  /** A JSON body. */
  readonly json?: unknown;
  /** Extra headers (never credentials: those come from the upstream's `credentials`). */
  readonly headers?: Readonly<Record<string, string>>;
}

/** An upstream's answer, as bindings see it. */
export interface UpstreamResponse {
  readonly status: number;
  /** Lower-case header names, in arrival order. */
  readonly headers: readonly (readonly [string, string])[];
  readonly body: Uint8Array;
  /** The body parsed as JSON, or `undefined` when it is not JSON. */
  json(): unknown;
}

/** What one upstream request produced; network failures are values, never exceptions. */
export type UpstreamReply =
  | ({ readonly kind: 'response' } & UpstreamResponse)
  /**
   * No (complete) response. `not_sent`: the connection was refused before anything was sent;
   * `timeout` and `lost`: the request may have reached the upstream.
   */
  | { readonly kind: 'no_response'; readonly reason: 'not_sent' | 'timeout' | 'lost' };

/** Sends requests to one upstream with its credentials, its timeout and no retries. */
export interface UpstreamClient {
  request(spec: UpstreamRequestSpec & { readonly method: string }): Promise<UpstreamReply>;
}

/** What a write binding's `verify` is given: the guard's context plus a client for the upstream. */
export interface BindingVerifyContext extends VerifyContext {
  readonly upstream: UpstreamClient;
}

/** A read the agent may make: forwarded (or answered from shadow/replay state). */
export interface HttpReadBindingConfig {
  /** Unique; roles grant bindings by name. */
  readonly name: string;
  readonly upstream: string;
  /** `METHOD /path/:param`, e.g. `GET /v1/refunds/:id`; a trailing `/*` matches any rest. */
  readonly route: string;
  readonly read: true;
  readonly tool?: never;
}

/**
 * A write bound to an action: the request becomes the action's input, the guard decides, and the
 * gateway sends the request `toRequest` builds from the committed input — once, with the
 * provider idempotency key derived from the effect. Input types are checked by the action's
 * contract at run time; annotate the parameters with your action's input type.
 */
export interface HttpWriteBindingConfig {
  readonly name: string;
  readonly upstream: string;
  /** `METHOD /path/:param`, e.g. `POST /v1/refunds`. */
  readonly route: string;
  readonly read?: false;
  readonly tool?: never;
  /** The action (or its `namespace.name@version`), declared in `actions`. */
  readonly action: ActionDefinition | string;
  /** The agent's request → the action's input (validated by the contract). */
  toInput(request: BoundHttpRequest): unknown;
  /** The committed input → the upstream request. Runs at execution, possibly in another process. */
  toRequest(input: never, context: ExecuteContext): UpstreamRequestSpec;
  /**
   * Asks the upstream whether the effect exists after an unknown outcome. Return `output` (see
   * `responseOutput`) to give the agent the found object when the original response was lost.
   * @default the action's own `verify`
   */
  verify?(input: never, context: BindingVerifyContext): Promise<VerifyResult>;
  /** The receipt of a 2xx response. @default `{ id: body.id, provider: upstream }` */
  receipt?(response: UpstreamResponse): Receipt | undefined;
}

/** An upstream MCP tool's answer (the `tools/call` result), as bindings see it. */
export interface UpstreamToolResult {
  readonly content: readonly Readonly<Record<string, unknown>>[];
  readonly structuredContent?: unknown;
  readonly isError?: boolean;
}

/** What one upstream tool call produced; failures are values, never exceptions. */
export type UpstreamToolReply =
  | ({ readonly kind: 'result' } & UpstreamToolResult)
  /** The upstream answered with a JSON-RPC error (it refused the request itself). */
  | { readonly kind: 'error'; readonly code: number; readonly message: string }
  /**
   * No answer. `not_sent`: the server could not be started or reached, nothing was sent;
   * `timeout` and `lost`: the call may have reached the server.
   */
  | { readonly kind: 'no_response'; readonly reason: 'not_sent' | 'timeout' | 'lost' };

/** Calls tools of one upstream MCP server through the gateway's connection (no retries). */
export interface UpstreamToolCaller {
  callTool(name: string, args: Readonly<Record<string, unknown>>): Promise<UpstreamToolReply>;
}

/** What a tool binding's `verify` is given: the guard's context plus the upstream's tools. */
export interface McpBindingVerifyContext extends VerifyContext {
  readonly upstream: UpstreamToolCaller;
}

/** An upstream MCP tool the agent may call, pinned to the definition it was reviewed with. */
export interface McpToolBindingConfig {
  readonly name: string;
  readonly upstream: string;
  /** The tool's name on the upstream server. */
  readonly tool: string;
  readonly route?: never;
  /**
   * `sha256:<hex>` of the tool's definition (name, description, schemas) when it was bound; a
   * changed tool is refused (`upstream_tool_changed`). `sideguard config check` prints it.
   */
  readonly toolDigest: string;
  /** A read tool: forwarded unguarded. Exactly one of `read` and `action`. */
  readonly read?: true;
  /** A write tool: the call becomes this action's proposal. */
  readonly action?: ActionDefinition | string;
  /** Tool arguments → the action's input. @default the arguments unchanged */
  toInput?(args: Readonly<Record<string, unknown>>): unknown;
  /** The committed input → the upstream tool's arguments. @default the input unchanged */
  toArguments?(input: never, context: ExecuteContext): Readonly<Record<string, unknown>>;
  /**
   * Asks the upstream whether the effect exists after an unknown outcome (e.g. with one of its
   * read tools through `context.upstream`). @default the action's own `verify`
   */
  verify?(input: never, context: McpBindingVerifyContext): Promise<VerifyResult>;
  /** The receipt of a successful call. @default the provider idempotency key, provider = upstream */
  receipt?(result: UpstreamToolResult): Receipt | undefined;
  /**
   * What an `isError` result of a write tool means. `unknown` (safe: the tool may have failed
   * after writing, so the guard verifies and never resends blindly) or `not_applied` (the tool
   * reports errors only before it writes, like an HTTP 4xx: the effect is released).
   * @default 'unknown'
   */
  readonly toolErrors?: 'unknown' | 'not_applied';
}

export type BindingConfig = HttpReadBindingConfig | HttpWriteBindingConfig | McpToolBindingConfig;

/** An agent allowed through the gateway. */
export interface AgentConfig {
  /** Recorded as the proposal's agent. */
  readonly id: string;
  /** On whose behalf the agent acts (the proposal's principal). */
  readonly principal: string;
  /**
   * SHA-256 (hex) of the agent's API key, which it sends as `Authorization: Bearer <key>` (or as
   * a Basic user name). Exactly one of `keySha256` and `key`.
   */
  readonly keySha256?: string;
  /** The key itself (e.g. from the environment); hashed at load and never kept. */
  readonly key?: string;
  readonly roles: readonly string[];
  /** @default the config's `tenant` */
  readonly tenant?: string;
}

/** What a role may use. */
export interface RoleConfig {
  /**
   * Binding names; `UPSTREAM:*` grants every binding of an upstream and its passed reads;
   * `action:namespace.name@version` grants a declared action as a tool; `*` grants everything.
   */
  readonly bindings: readonly string[];
}

/** Refuses matching calls before anything else is considered. */
export interface DenyRuleConfig {
  readonly upstream: string;
  /** @default every method */
  readonly method?: string;
  /** Segment-safe: `/admin` matches `/admin` and `/admin/x`, never `/administrator`. */
  readonly pathPrefix?: string;
  /** An MCP tool name. */
  readonly tool?: string;
  /** Why, for the agent's hint. @default 'a deny rule matches' */
  readonly reason?: string;
}

/** The gateway's own listener and limits. */
export interface GatewayServerConfig {
  /** @default '127.0.0.1' */
  readonly host?: string;
  /** The main port (prefix mounts, and later `/mcp`); 0 picks a free one. @default 4400 */
  readonly port?: number;
  /** Largest request body, in bytes; larger gets 413. @default 262_144 */
  readonly bodyLimitBytes?: number;
  /** How long a duplicate waits for the original call still executing before 409, in ms. @default 15_000 */
  readonly inProgressWaitMs?: number;
}

/** The built-in sandbox, started by `sideguard serve` when an upstream uses `sandbox` mode. */
export interface GatewaySandboxConfig {
  /** Relative to the config file. @default '.sideguard/sandbox' */
  readonly stateDir?: string;
  readonly seed?: number;
  /** A fault plan (see docs/sandbox.md). */
  readonly faults?: unknown;
}

/** Everything in `sideguard.config.ts`. */
export interface GatewayConfig {
  /**
   * Where proposals, the ledger and gateway state live: `postgres://…` (several processes),
   * `sqlite:PATH` or a path (relative to the config file). @default '.sideguard/gateway.db'
   */
  readonly store?: string;
  /** PostgreSQL schema. @default 'sideguard' */
  readonly storeSchema?: string;
  /** The tenant of agents that name none. @default 'default' */
  readonly tenant?: string;
  readonly actions: readonly ActionDefinition[];
  readonly upstreams: Readonly<Record<string, UpstreamConfig>>;
  readonly bindings: readonly BindingConfig[];
  readonly agents: readonly AgentConfig[];
  readonly roles: Readonly<Record<string, RoleConfig>>;
  readonly deny?: readonly DenyRuleConfig[];
  readonly server?: GatewayServerConfig;
  readonly sandbox?: GatewaySandboxConfig;
  /** Where people approve (issue 11 serves it); pending answers link to `consoleUrl/proposals/ID`. */
  readonly approvals?: ApprovalsConsoleConfig;
  /**
   * The people who may log in to approve (declared authorities) or resolve (declared operators),
   * each with a secret stored only as a hash (`sideguard approvers hash`). @default none
   */
  readonly approvers?: readonly ApproverConfig[];
  /** The sweeper `sideguard serve` runs: expires due proposals, reconciles due verifications. */
  readonly sweeper?: GatewaySweeperConfig;
  /** Where "approval needed" and "stuck proposal" notices go. @default none */
  readonly notifications?: GatewayNotificationsConfig;
}

/** The sweeper inside `sideguard serve` (`sideguard sweep` runs one pass for cron). */
export interface GatewaySweeperConfig {
  /** @default true */
  readonly enabled?: boolean;
  /** Time between passes (from the end of one to the start of the next), 100 ms to 1 day. @default 5_000 */
  readonly intervalMs?: number;
}

/** A webhook that receives notices as signed JSON POSTs (see docs/notifications.md). */
export interface WebhookNotificationConfig {
  /** `https://…` (or `http://` for a receiver on this machine). */
  readonly url: string;
  /** The environment variable holding the signing secret (at least 32 characters). */
  readonly secretEnv: string;
  /** One delivery attempt's timeout, in ms. @default 5_000 */
  readonly timeoutMs?: number;
  /** Attempts per notice before it is dropped (and counted). @default 6 */
  readonly maxAttempts?: number;
  /** Notices waiting at most; more are dropped (and counted). @default 1_000 */
  readonly queueLimit?: number;
}

/** Notifications of the gateway. */
export interface GatewayNotificationsConfig {
  readonly webhook?: WebhookNotificationConfig;
}

/** The approvals console: a control port of its own, loopback unless configured. */
export interface ApprovalsConsoleConfig {
  /** The console's public URL, for links in pending answers. @default the console's own URL */
  readonly consoleUrl?: string;
  /** @default '127.0.0.1' */
  readonly host?: string;
  /** The console's port; 0 picks a free one. Without it, `sideguard serve` starts no console. */
  readonly port?: number;
}

/** Returns the config unchanged, typed. A config file does `export default defineConfig({ … })`. */
export function defineConfig(config: GatewayConfig): GatewayConfig {
  return config;
}
