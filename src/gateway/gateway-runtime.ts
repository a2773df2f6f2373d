/**
 * Everything a running gateway shares between its doors, opened from a loaded config: the guard
 * on the configured store, the gateway state beside it, one transport per HTTP upstream with its
 * bound (executable) actions, the replay cases, the decision log. The doors are thin; this is
 * the context object they are given.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { ActionDefinition } from '../core/action.js';
import { ConfigurationError } from '../core/errors.js';
import type { Guard, GuardEventSink } from '../core/guard.js';
import { type KeyRing, keyRingFromEnvironmentValue } from '../core/key-ring.js';
import type { GuardStore } from '../core/store.js';
import { createGuard } from '../create-guard.js';
import { builtInProviders } from '../sandbox/providers/provider-registry.js';
import { createMemoryStore } from '../stores/memory/memory-store.js';
import { GatewayConfigError } from './config-compile.js';
import type { LoadedGatewayConfig } from './config-loader.js';
import type { HttpUpstreamConfig } from './config-types.js';
import { createDecisionLog, type DecisionLog } from './decision-log.js';
import { createExecutionCapture, type ExecutionCapture } from './execution-capture.js';
import type { GatewayTable } from './gateway-table.js';
import type { GuardedCallContext } from './guarded-call.js';
import { bindHttpWrite } from './http-bound-action.js';
import { parseReplayCases, ReplayBook } from './rehearsal-state.js';
import type { GatewayStateStore } from './state/gateway-state.js';
import { createMemoryGatewayState } from './state/memory-gateway-state.js';
import { createUpstreamTransport, type UpstreamTransport } from './upstream-transport.js';

/** Where the guard's store and the gateway state live. */
export type GatewayStoreLocation =
  | { readonly kind: 'memory' }
  | { readonly kind: 'sqlite'; readonly path: string }
  | { readonly kind: 'postgres'; readonly url: string; readonly schema: string };

/**
 * Reads `store` from the config: `memory` (one process, nothing kept), `postgres://…`, or
 * `sqlite:PATH` / a path relative to the config file. @default '.sideguard/gateway.db'
 */
export function parseGatewayStore(
  value: string | undefined,
  directory: string,
  schema = 'sideguard',
): GatewayStoreLocation {
  const text = value ?? '.sideguard/gateway.db';
  if (text === 'memory') return { kind: 'memory' };
  if (/^postgres(ql)?:\/\//.test(text)) return { kind: 'postgres', url: text, schema };
  const path = text.startsWith('sqlite:') ? text.slice('sqlite:'.length) : text;
  return { kind: 'sqlite', path: resolve(directory, path) };
}

/** A description safe to print (no password). */
export function describeGatewayStore(location: GatewayStoreLocation): string {
  if (location.kind === 'memory') return 'memory';
  if (location.kind === 'sqlite') return `sqlite:${location.path}`;
  return `${location.url.replace(/\/\/[^@/]*@/, '//***@')} (schema ${location.schema})`;
}

/** Opens the guard's store and the gateway state at one location. */
export async function openGatewayStores(
  location: GatewayStoreLocation,
): Promise<{ store: GuardStore; state: GatewayStateStore }> {
  switch (location.kind) {
    case 'memory':
      return { store: createMemoryStore(), state: createMemoryGatewayState() };
    case 'sqlite': {
      const { createSqliteStore } = await import('../stores/sqlite/index.js');
      const { createSqliteGatewayState } = await import('./state/sqlite-gateway-state.js');
      const store = createSqliteStore({ path: location.path });
      return { store, state: createSqliteGatewayState({ path: location.path }) };
    }
    case 'postgres': {
      const { createPostgresStore } = await import('../stores/postgres/index.js');
      const { createPostgresGatewayState } = await import('./state/postgres-gateway-state.js');
      const store = await createPostgresStore({
        connectionString: location.url,
        schema: location.schema,
      });
      const state = await createPostgresGatewayState({
        connectionString: location.url,
        schema: location.schema,
      }).catch(async (error: unknown) => {
        await store.close();
        throw error;
      });
      return { store, state };
    }
  }
}

/** One HTTP upstream ready to serve: its transport and its bindings' executable actions. */
export interface HttpUpstreamRuntime {
  readonly name: string;
  readonly transport: UpstreamTransport;
  /** Binding name → the action whose executor sends the bound request. */
  readonly actions: ReadonlyMap<string, ActionDefinition>;
}

/** The running gateway's shared context. */
export interface GatewayRuntime {
  readonly table: GatewayTable;
  readonly guard: Guard;
  readonly keyRing: KeyRing;
  readonly store: GuardStore;
  readonly state: GatewayStateStore;
  readonly decisions: DecisionLog;
  readonly capture: ExecutionCapture;
  readonly http: ReadonlyMap<string, HttpUpstreamRuntime>;
  readonly replay: ReplayBook;
  /** Forwarded responses are recorded into this session (`sideguard record`). */
  readonly recordSession: string | undefined;
  readonly storeDescription: string;
  readonly guardedCall: GuardedCallContext;
  /** Milliseconds since the epoch. */
  now(): number;
  /** Flushes the decision log, closes transports and stores. Idempotent. */
  close(): Promise<void>;
}

/** Options of {@link openGatewayRuntime}. */
export interface GatewayRuntimeOptions {
  /** @default the ring in `SIDEGUARD_KEYS` */
  readonly keyRing?: KeyRing;
  /** @default the config's `store` */
  readonly store?: GatewayStoreLocation;
  /** The data URL of the sandbox `sandbox`-mode upstreams use (started by `sideguard serve`). */
  readonly sandboxDataUrl?: string;
  /** Record forwarded responses into this session. */
  readonly recordSession?: string;
  /** Called when the decision log cannot write a batch. @default print one line to stderr */
  readonly onDecisionLogError?: (error: unknown) => void;
  /**
   * What to do with a `sandbox`-mode upstream when `sandboxDataUrl` is not given: `require`
   * refuses to open; `skip` opens no transport for it, so writes bound to it are unavailable
   * (`sideguard mcp` on stdio, which starts no sandbox of its own). @default 'require'
   */
  readonly sandboxUpstreams?: 'require' | 'skip';
  /** Receives the guard's durable events (notifications). @default none */
  readonly events?: GuardEventSink;
}

/** The key ring from `SIDEGUARD_KEYS`, or a clear error saying how to make one. */
export function keyRingFromEnvironment(environment: NodeJS.ProcessEnv = process.env): KeyRing {
  const value = environment.SIDEGUARD_KEYS;
  if (value === undefined || value.trim() === '') {
    throw new ConfigurationError(
      'key_ring_environment_invalid',
      'SIDEGUARD_KEYS is not set: the gateway needs a key ring to seal proposals; run `export SIDEGUARD_KEYS="$(npx sideguard keys generate)"` and keep the value secret',
    );
  }
  return keyRingFromEnvironmentValue(value);
}

function upstreamTransport(
  config: HttpUpstreamConfig,
  name: string,
  sandboxDataUrl: string | undefined,
): UpstreamTransport {
  let baseUrl = config.baseUrl;
  let headers = config.credentials?.headers ?? {};
  if (config.mode === 'sandbox') {
    if (sandboxDataUrl === undefined) {
      throw new ConfigurationError(
        'gateway_sandbox_missing',
        `Upstream "${name}" uses sandbox mode but no sandbox is running; start the gateway with \`sideguard serve\`, which starts one`,
      );
    }
    baseUrl = sandboxDataUrl;
    const provider = config.sandboxProvider;
    const key = provider === undefined ? undefined : builtInProviders[provider].defaultKeys[0]?.key;
    if (config.credentials === undefined && key !== undefined) {
      headers = { authorization: `Bearer ${key}` };
    }
  }
  if (baseUrl === undefined) throw new TypeError(`upstream ${name} has no baseUrl`);
  return createUpstreamTransport({
    baseUrl,
    headers: Object.fromEntries(
      Object.entries(headers).map(([header, value]) => [header.toLowerCase(), value]),
    ),
    timeoutMs: config.timeoutMs ?? 10_000,
  });
}

/** Loads the cases files of `replay`-mode upstreams. @throws GatewayConfigError naming the file. */
export function loadReplayBook(loaded: LoadedGatewayConfig): ReplayBook {
  const book = new ReplayBook();
  for (const [name, upstream] of loaded.table.upstreams) {
    const config = upstream.config;
    if (config.kind !== 'http' || upstream.mode !== 'replay' || config.replayCases === undefined) {
      continue;
    }
    const file = resolve(loaded.directory, config.replayCases);
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (error) {
      throw new GatewayConfigError(loaded.file, [
        {
          path: `upstreams.${name}.replayCases`,
          message: `cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? 'error'}); record it with \`sideguard record\``,
        },
      ]);
    }
    const parsed = parseReplayCases(text);
    if (parsed.kind === 'invalid') throw new GatewayConfigError(file, parsed.problems);
    for (const entry of parsed.cases) if (entry.upstream === name) book.add(entry);
  }
  return book;
}

/** Opens everything a loaded config needs. Close it when done. */
export async function openGatewayRuntime(
  loaded: LoadedGatewayConfig,
  options: GatewayRuntimeOptions = {},
): Promise<GatewayRuntime> {
  const keyRing = options.keyRing ?? keyRingFromEnvironment();
  const replay = loadReplayBook(loaded);
  const location =
    options.store ??
    parseGatewayStore(loaded.config.store, loaded.directory, loaded.config.storeSchema);
  const { store, state } = await openGatewayStores(location);
  const guard = createGuard({
    store,
    keyRing,
    ...(options.events === undefined ? {} : { events: options.events }),
  });
  const capture = createExecutionCapture();
  const http = new Map<string, HttpUpstreamRuntime>();
  for (const [name, upstream] of loaded.table.upstreams) {
    if (upstream.config.kind !== 'http') continue;
    if (
      upstream.mode === 'sandbox' &&
      options.sandboxDataUrl === undefined &&
      options.sandboxUpstreams === 'skip'
    ) {
      continue;
    }
    const config = upstream.config;
    const transport = upstreamTransport(config, name, options.sandboxDataUrl);
    const actions = new Map<string, ActionDefinition>();
    for (const binding of loaded.table.httpBindings.get(name) ?? []) {
      if (binding.access !== 'write') continue;
      actions.set(
        binding.name,
        bindHttpWrite(binding, {
          transport,
          idempotencyHeader:
            config.idempotencyHeader === undefined ? 'Idempotency-Key' : config.idempotencyHeader,
          capture,
        }),
      );
    }
    http.set(name, { name, transport, actions });
  }
  const decisions = createDecisionLog(store, {
    onError:
      options.onDecisionLogError ??
      ((error) => process.stderr.write(`sideguard gateway: ${(error as Error).message}\n`)),
  });
  let closed: Promise<void> | undefined;
  const now = () => Date.now();
  return {
    table: loaded.table,
    guard,
    keyRing,
    store,
    state,
    decisions,
    capture,
    http,
    replay,
    recordSession: options.recordSession,
    storeDescription: describeGatewayStore(location),
    guardedCall: {
      guard,
      capture,
      inProgressWaitMs: loaded.table.server.inProgressWaitMs,
      now,
      sleep: (ms) => new Promise((done) => setTimeout(done, ms)),
    },
    now,
    close() {
      closed ??= (async () => {
        await decisions.close();
        await Promise.all([...http.values()].map((entry) => entry.transport.close()));
        await state.close();
        await store.close();
      })();
      return closed;
    },
  };
}
