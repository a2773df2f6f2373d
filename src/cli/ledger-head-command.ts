/**
 * `sideguard ledger head --store URL --tenant T`: prints a tenant's chain head as JSON, for an
 * auditor to keep outside the store and check later exports against (`ledger verify
 * --expect-head`).
 */
import { existsSync } from 'node:fs';
import type { Command } from 'commander';
import { ContractViolationError } from '../core/errors.js';
import { readLedgerAnchor } from '../core/ledger-anchor.js';
import type { GuardStore } from '../core/store.js';
import { CliError } from './cli-errors.js';

interface HeadOptions {
  readonly store: string;
  readonly tenant: string;
  readonly schema: string;
}

/** Opens an existing store for reading: a PostgreSQL URL, or an SQLite file that must exist. */
async function openExistingStore(location: string, schema: string): Promise<GuardStore> {
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

/** Registers `sideguard ledger head` under the `ledger` command. */
export function registerLedgerHeadCommand(ledger: Command): void {
  ledger
    .command('head')
    .description(
      'Print a tenant chain head as JSON {tenant, sequence, hash, at}: keep it outside the store and pass it to `ledger verify --expect-head` later',
    )
    .requiredOption('--store <url>', 'postgres://… or an SQLite file holding the ledger')
    .requiredOption('--tenant <name>', 'the tenant whose chain head to print')
    .option('--schema <name>', 'the PostgreSQL schema of the store', 'sideguard')
    .action(async (options: HeadOptions) => {
      const store = await openExistingStore(options.store, options.schema);
      try {
        const anchor = await readLedgerAnchor(store, options.tenant).catch((error: unknown) => {
          // A tenant name the guard would refuse is bad input (exit 2), not a failed check.
          if (error instanceof ContractViolationError)
            throw new CliError(`--tenant: ${error.message}`);
          throw error;
        });
        if (anchor === undefined) {
          throw new CliError(
            `tenant ${JSON.stringify(options.tenant)} has no ledger in this store`,
          );
        }
        process.stdout.write(`${JSON.stringify(anchor)}\n`);
      } finally {
        await store.close();
      }
    });
}
