#!/usr/bin/env node
/**
 * The `sideguard` command. It only translates arguments into calls of the public API and
 * prints results; every decision lives in the library.
 */
import { readFileSync } from 'node:fs';
import { Command } from 'commander';
import { SideguardError } from '../core/errors.js';
import { CliError, ExitCode } from './cli-errors.js';
import { registerKeysCommand } from './keys-command.js';
import { registerLedgerCommand } from './ledger-command.js';
import { registerSandboxCommand } from './sandbox-command.js';
import { registerVerifyCommands } from './verify-commands.js';

function packageVersion(): string {
  try {
    const text = readFileSync(new URL('../../package.json', import.meta.url), 'utf8');
    return String((JSON.parse(text) as { version?: unknown }).version ?? 'unknown');
  } catch {
    return 'unknown';
  }
}

const program = new Command();
program
  .name('sideguard')
  .version(packageVersion(), '-v, --version', 'print the version')
  .description('Make AI agents’ side effects happen at most once, with authority and evidence.')
  .showHelpAfterError('(run `sideguard --help` for usage)');

registerVerifyCommands(program);
registerLedgerCommand(program);
registerKeysCommand(program);
registerSandboxCommand(program);

program.parseAsync(process.argv).catch((error: unknown) => {
  const message = error instanceof Error ? error.message : String(error);
  process.stderr.write(`sideguard: ${message}\n`);
  process.exitCode =
    error instanceof CliError
      ? error.exitCode
      : error instanceof SideguardError &&
          (error.code === 'verifier_input_invalid' || error.code === 'key_ring_environment_invalid')
        ? ExitCode.usage
        : 1;
});
