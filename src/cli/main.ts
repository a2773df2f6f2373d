#!/usr/bin/env node
/**
 * The `sideguard` command. It only translates arguments into calls of the public API and
 * prints results; every decision lives in the library.
 */
import { readFileSync } from 'node:fs';
import { Command, CommanderError } from 'commander';
import { SideguardError } from '../core/errors.js';
import { registerApprovalsCommands } from './approvals-command.js';
import { registerApproversCommand } from './approvers-command.js';
import { CliError, ExitCode } from './cli-errors.js';
import { registerConfigCommand } from './config-command.js';
import { registerExploreCommand } from './explore-command.js';
import { registerKeysCommand } from './keys-command.js';
import { registerLedgerCommand } from './ledger-command.js';
import { registerMcpCommand } from './mcp-command.js';
import { registerSandboxCommand } from './sandbox-command.js';
import { registerServeCommands } from './serve-command.js';
import { registerShadowCommand } from './shadow-command.js';
import { registerSweepCommand } from './sweep-command.js';
import { registerVerifyCommands } from './verify-commands.js';
import { registerWorldCommand } from './world-command.js';

function packageVersion(): string {
  try {
    const text = readFileSync(new URL('../../package.json', import.meta.url), 'utf8');
    return String((JSON.parse(text) as { version?: unknown }).version ?? 'unknown');
  } catch {
    return 'unknown';
  }
}

// `sideguard … | head` closes the pipe early: that is the reader's choice, not an error.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw error;
  });
}

const program = new Command();
program
  .name('sideguard')
  .version(packageVersion(), '-v, --version', 'print the version')
  .description('Make AI agents’ side effects happen at most once, with authority and evidence.')
  .showHelpAfterError('(run `sideguard --help` for usage)')
  // Usage errors must exit 2 (bad input), not 1 (a failed safety check); subcommands registered
  // below inherit this.
  .exitOverride();

registerVerifyCommands(program);
registerLedgerCommand(program);
registerKeysCommand(program);
registerSandboxCommand(program);
registerExploreCommand(program);
registerServeCommands(program);
registerConfigCommand(program);
registerShadowCommand(program);
registerMcpCommand(program);
registerSweepCommand(program);
registerApprovalsCommands(program);
registerApproversCommand(program);
registerWorldCommand(program);

/** Errors from the file system or the network stack that mean the user's input is unusable. */
const INPUT_ERRNO = new Set([
  'ENOENT',
  'ENOTDIR',
  'EISDIR',
  'EACCES',
  'EPERM',
  'EROFS',
  'EADDRINUSE',
  'EEXIST',
]);

/** Library error codes that mean the user's input (a file, a flag, an environment value) is unusable. */
const INPUT_CODES = new Set([
  'verifier_input_invalid',
  'key_ring_environment_invalid',
  'ledger_file_unreadable',
  'ledger_head_invalid',
  'ledger_head_ambiguous',
  'gateway_config_invalid',
  'gateway_sandbox_missing',
  'store_schema_name_invalid',
  'store_driver_missing',
  'store_config_invalid',
]);

/** 0 success, 1 a check failed (unsafe evidence, a broken chain), 2 bad input or usage. */
function exitCodeFor(error: unknown): number {
  if (error instanceof CliError) return error.exitCode;
  if (error instanceof SideguardError) {
    return INPUT_CODES.has(error.code) ? ExitCode.usage : ExitCode.failed;
  }
  const errno = (error as { code?: unknown } | null)?.code;
  return typeof errno === 'string' && INPUT_ERRNO.has(errno) ? ExitCode.usage : ExitCode.failed;
}

program.parseAsync(process.argv).catch((error: unknown) => {
  if (error instanceof CommanderError) {
    // Commander already printed its message (and the help hint).
    const done = ['commander.helpDisplayed', 'commander.help', 'commander.version'].includes(
      error.code,
    );
    process.exitCode = done ? ExitCode.ok : ExitCode.usage;
    return;
  }
  const message = error instanceof Error ? error.message : String(error);
  process.stderr.write(`sideguard: ${message}\n`);
  process.exitCode = exitCodeFor(error);
});
