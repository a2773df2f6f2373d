/**
 * Opening a store a command only reads (`ledger head`, `ledger export`): a PostgreSQL URL, or an
 * SQLite file that must already exist (opening a missing path would create an empty store, and an
 * auditor wants an error instead).
 */
import { existsSync } from 'node:fs';
import type { GuardStore } from '../core/store.js';
import { CliError } from './cli-errors.js';

/** Opens an existing store for reading: a PostgreSQL URL, or an SQLite file that must exist. */
export async function openExistingStore(location: string, schema: string): Promise<GuardStore> {
  if (/^postgres(ql)?:\/\//.test(location)) {
    const { createPostgresStore } = await import('../stores/postgres/index.js');
    return createPostgresStore({ connectionString: location, schema });
  }
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(location)) {
    throw new CliError(
      `--store ${location.replace(/\/\/[^@/]*@/, '//***@')} is not supported: use postgres://… or an SQLite file path`,
    );
  }
  const path = location.startsWith('sqlite:') ? location.slice('sqlite:'.length) : location;
  // Opening a missing SQLite path would create an empty store: an auditor wants an error.
  if (!existsSync(path)) throw new CliError(`--store ${path}: no such SQLite file`);
  const { createSqliteStore } = await import('../stores/sqlite/index.js');
  return createSqliteStore({ path });
}
