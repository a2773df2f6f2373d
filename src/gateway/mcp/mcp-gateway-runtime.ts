/**
 * Opens what `sideguard mcp` runs on from a loaded config: the configured store (an SQLite file
 * relative to the config, or PostgreSQL), a guard over it with the deployment's key ring, and the
 * MCP door's gateway. Closing stops the upstream servers, then the store.
 */
import { isAbsolute, resolve } from 'node:path';
import type { KeyRing } from '../../core/key-ring.js';
import type { GuardStore } from '../../core/store.js';
import { createGuard } from '../../create-guard.js';
import { createPostgresStore } from '../../stores/postgres/index.js';
import { createSqliteStore } from '../../stores/sqlite/index.js';
import type { LoadedGatewayConfig } from '../config-loader.js';
import type { McpDoorHooks } from './mcp-door-hooks.js';
import { createMcpGateway, type McpGateway } from './mcp-gateway.js';

/** The store a config names: `postgres://…`, `sqlite:PATH` or a path. */
export type ConfiguredStore =
  | { readonly kind: 'sqlite'; readonly path: string }
  | { readonly kind: 'postgres'; readonly url: string; readonly schema: string };

/** Where `store` points, relative paths against the config's directory. */
export function configuredStore(loaded: LoadedGatewayConfig): ConfiguredStore {
  const value = loaded.config.store ?? '.sideguard/gateway.db';
  if (/^postgres(ql)?:\/\//.test(value)) {
    return { kind: 'postgres', url: value, schema: loaded.config.storeSchema ?? 'sideguard' };
  }
  const path = value.startsWith('sqlite:') ? value.slice('sqlite:'.length) : value;
  return { kind: 'sqlite', path: isAbsolute(path) ? path : resolve(loaded.directory, path) };
}

async function openStore(location: ConfiguredStore): Promise<GuardStore> {
  return location.kind === 'sqlite'
    ? createSqliteStore({ path: location.path })
    : createPostgresStore({ connectionString: location.url, schema: location.schema });
}

/** An opened MCP gateway and what closes it. */
export interface OpenedMcpGateway {
  readonly gateway: McpGateway;
  readonly store: GuardStore;
  close(): Promise<void>;
}

/** Options of `openMcpGateway`. */
export interface OpenMcpGatewayOptions {
  readonly keyRing: KeyRing;
  readonly hooks?: McpDoorHooks;
  /** Where stdio upstream children's stderr goes. @default 'inherit' */
  readonly upstreamStderr?: 'inherit' | 'ignore';
  /** An already open store (tests, or a host sharing one). @default the configured store */
  readonly store?: GuardStore;
}

/** Opens the store and assembles the gateway. */
export async function openMcpGateway(
  loaded: LoadedGatewayConfig,
  options: OpenMcpGatewayOptions,
): Promise<OpenedMcpGateway> {
  const store = options.store ?? (await openStore(configuredStore(loaded)));
  try {
    const gateway = createMcpGateway({
      config: loaded.config,
      table: loaded.table,
      guard: createGuard({ store, keyRing: options.keyRing }),
      file: loaded.file,
      directory: loaded.directory,
      ...(options.hooks === undefined ? {} : { hooks: options.hooks }),
      ...(options.upstreamStderr === undefined ? {} : { upstreamStderr: options.upstreamStderr }),
    });
    return {
      gateway,
      store,
      async close() {
        await gateway.close();
        if (options.store === undefined) await store.close();
      },
    };
  } catch (error) {
    if (options.store === undefined) await store.close();
    throw error;
  }
}
