/**
 * `sideguard ledger head --store URL --tenant T`: prints a tenant's chain head as JSON, for an
 * auditor to keep outside the store and check later exports against (`ledger verify
 * --expect-head`).
 */
import type { Command } from 'commander';
import { ContractViolationError } from '../core/errors.js';
import { readLedgerAnchor } from '../core/ledger-anchor.js';
import { CliError } from './cli-errors.js';
import { openExistingStore } from './existing-store.js';

interface HeadOptions {
  readonly store: string;
  readonly tenant: string;
  readonly schema: string;
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
