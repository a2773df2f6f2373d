/**
 * `sideguard ledger export --store URL --tenant T [--output FILE]`: writes a tenant's ledger as
 * JSONL, streamed page by page (constant memory however long the chain), up to the head the store
 * holds when the export starts. Check it with `sideguard ledger verify FILE --expect-head …`.
 */
import { createWriteStream } from 'node:fs';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Command } from 'commander';
import { checkTenant } from '../core/argument-checks.js';
import { ContractViolationError } from '../core/errors.js';
import { exportLedgerChunks } from '../core/guard/ledger-access.js';
import { CliError } from './cli-errors.js';
import { openExistingStore } from './existing-store.js';

interface ExportOptions {
  readonly store: string;
  readonly tenant: string;
  readonly schema: string;
  readonly output?: string;
}

/** Registers `sideguard ledger export` under the `ledger` command. */
export function registerLedgerExportCommand(ledger: Command): void {
  ledger
    .command('export')
    .description(
      "Write a tenant's ledger as JSONL (one sealed event per line), streamed; check it with `ledger verify`",
    )
    .requiredOption('--store <url>', 'postgres://… or an SQLite file holding the ledger')
    .requiredOption('--tenant <name>', 'the tenant whose ledger to export')
    .option('--schema <name>', 'the PostgreSQL schema of the store', 'sideguard')
    .option('--output <file>', 'write to this file instead of standard output')
    .action(async (options: ExportOptions) => {
      const tenant = checkedTenant(options.tenant);
      const store = await openExistingStore(options.store, options.schema);
      try {
        if ((await store.ledgerHead(tenant)) === undefined) {
          throw new CliError(`tenant ${JSON.stringify(tenant)} has no ledger in this store`);
        }
        let events = 0;
        const counted = async function* () {
          for await (const chunk of exportLedgerChunks({ store }, { tenant })) {
            for (let at = chunk.indexOf('\n'); at !== -1; at = chunk.indexOf('\n', at + 1)) {
              events += 1;
            }
            yield chunk;
          }
        };
        if (options.output === undefined) {
          await pipeline(Readable.from(counted()), process.stdout, { end: false });
        } else {
          await pipeline(Readable.from(counted()), createWriteStream(options.output));
          process.stderr.write(
            `sideguard ledger export: ${events} events of tenant ${tenant} → ${options.output}\n`,
          );
        }
      } finally {
        await store.close();
      }
    });
}

/** A tenant name the guard would refuse is bad input (exit 2), not a failed export. */
function checkedTenant(tenant: string): string {
  try {
    return checkTenant(tenant);
  } catch (error) {
    if (error instanceof ContractViolationError) throw new CliError(`--tenant: ${error.message}`);
    throw error;
  }
}
