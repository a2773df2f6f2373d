/** Opens the store a verifier run uses, from `--store` (an SQLite path or a PostgreSQL URL). */
import { join } from 'node:path';
import type { GuardStore } from '../core/store.js';
import { createPostgresStore } from '../stores/postgres/index.js';
import { createSqliteStore } from '../stores/sqlite/index.js';
import { VerifierInputError } from './verifier-errors.js';

/** Where a verifier run's store is, so a second process (the crash worker) can reopen it. */
export type StoreLocation =
  | { readonly kind: 'sqlite'; readonly path: string }
  | { readonly kind: 'postgres'; readonly url: string; readonly schema: string };

/**
 * Turns `--store` into a location. `postgres://…` / `postgresql://…` → PostgreSQL (a fresh
 * schema per run); `sqlite:PATH` or a plain path → SQLite; nothing → `OUTPUT/gate-store.db`.
 */
export function parseStoreLocation(
  value: string | undefined,
  outputDir: string,
  runId: string,
): StoreLocation {
  if (value === undefined || value === '')
    // Not `sideguard.db`: the gate's store must never be mistaken for an application's.
    return { kind: 'sqlite', path: join(outputDir, 'gate-store.db') };
  if (/^postgres(ql)?:\/\//.test(value)) {
    return {
      kind: 'postgres',
      url: value,
      schema: `sideguard_gate_${runId.replace(/[^a-z0-9]/g, '')}`,
    };
  }
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(value)) {
    throw new VerifierInputError(
      `--store ${value.replace(/\/\/[^@/]*@/, '//***@')} is not supported: use postgres://… or an SQLite file path`,
    );
  }
  return {
    kind: 'sqlite',
    path: value.startsWith('sqlite:') ? value.slice('sqlite:'.length) : value,
  };
}

/** Opens (and migrates) the store at a location. */
export async function openStore(location: StoreLocation): Promise<GuardStore> {
  return location.kind === 'sqlite'
    ? createSqliteStore({ path: location.path })
    : createPostgresStore({ connectionString: location.url, schema: location.schema });
}

/** A description safe to print (no password). */
export function describeStore(location: StoreLocation): string {
  return location.kind === 'sqlite'
    ? `sqlite:${location.path}`
    : `${location.url.replace(/\/\/[^@/]*@/, '//***@')} (schema ${location.schema})`;
}
