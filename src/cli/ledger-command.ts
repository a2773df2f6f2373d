/**
 * `sideguard ledger verify FILE`: checks a JSONL ledger export's hash chains, streaming. The
 * verification is library code (`verifyLedgerFile`, entry `sideguard/verify`); this only prints.
 */
import type { Command } from 'commander';
import { verifyLedgerFile } from '../verify/ledger-file.js';
import { type ExpectedHead, parseExpectedHead } from '../verify/ledger-lines.js';
import { ExitCode } from './cli-errors.js';
import { registerLedgerExportCommand } from './ledger-export-command.js';
import { registerLedgerHeadCommand } from './ledger-head-command.js';

/** Registers `sideguard ledger …`. */
export function registerLedgerCommand(program: Command): void {
  const ledger = program.command('ledger').description('Work with exported ledgers (JSONL)');
  registerLedgerHeadCommand(ledger);
  registerLedgerExportCommand(ledger);
  ledger
    .command('verify')
    .description('Check the hash chain of a JSONL ledger export and name the first bad entry')
    .argument('<file>', 'a ledger exported as JSONL (one sealed event per line)')
    .option('--json', 'print the verdict as JSON')
    .option(
      '--expect-head <head>',
      'the head the chain must end at, SEQUENCE:HASH or TENANT@SEQUENCE:HASH (detects entries cut from the end; repeatable)',
      (value: string, previous: ExpectedHead[] = []) => [...previous, parseExpectedHead(value)],
    )
    .action(async (file: string, options: { json?: boolean; expectHead?: ExpectedHead[] }) => {
      const verdict = await verifyLedgerFile(file, { expectedHeads: options.expectHead ?? [] });
      if (options.json) {
        process.stdout.write(`${JSON.stringify(verdict)}\n`);
      } else if (verdict.kind === 'valid') {
        const heads = verdict.tenants
          .map((t) => `${t.tenant}@${t.headSequence}:${t.headHash}`)
          .join(', ');
        process.stdout.write(
          `PASS ledger ${file}: ${verdict.entries} entries, ${verdict.tenants.length} tenant chain(s) intact; heads ${heads}${options.expectHead === undefined ? ' (record a head and pass it as --expect-head to detect entries cut from the end)' : ''}\n`,
        );
      } else {
        const where = [
          verdict.tenant === null ? undefined : `tenant ${verdict.tenant}`,
          verdict.sequence === null ? undefined : `sequence ${verdict.sequence}`,
        ].filter((part) => part !== undefined);
        const context = where.length === 0 ? '' : ` (${where.join(', ')})`;
        process.stdout.write(
          `FAIL ledger ${file}: ${verdict.reason}${context}: ${verdict.message}\n`,
        );
      }
      process.exitCode = verdict.kind === 'valid' ? ExitCode.ok : ExitCode.failed;
    });
}
