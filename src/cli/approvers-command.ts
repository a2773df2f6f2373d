/**
 * `sideguard approvers hash`: prints the `scrypt$…` line for an approver's secret, to put in the
 * config's `approvers` (the config keeps only the hash). The secret comes from `--secret-file` or
 * `SIDEGUARD_APPROVER_SECRET`, never the command line. Exit 0 printed, 2 bad input.
 */
import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { APPROVER_SECRET_VARIABLE } from './approvals-command.js';
import { printable } from './approvals-output.js';
import { CliError } from './cli-errors.js';

async function secretFrom(secretFile: string | undefined): Promise<string> {
  if (secretFile !== undefined) {
    const text = await readFile(secretFile, 'utf8').catch((error: unknown) => {
      throw new CliError(
        `--secret-file ${printable(secretFile)}: ${(error as NodeJS.ErrnoException).code ?? 'unreadable'}`,
      );
    });
    return text.replace(/\r?\n$/, '');
  }
  const secret = process.env[APPROVER_SECRET_VARIABLE];
  if (secret === undefined || secret === '') {
    throw new CliError(
      `no secret to hash: pass --secret-file FILE or set ${APPROVER_SECRET_VARIABLE} (never the secret itself on the command line)`,
    );
  }
  return secret;
}

export function registerApproversCommand(program: Command): void {
  program
    .command('approvers')
    .description('Work with approver credentials')
    .command('hash')
    .description("Print the hash line of an approver's secret for the config's approvers")
    .option(
      '--secret-file <file>',
      `read the secret from a file (else $${APPROVER_SECRET_VARIABLE})`,
    )
    .action(async (options: { readonly secretFile?: string }) => {
      const { hashApproverSecret, MIN_APPROVER_SECRET_LENGTH } = await import(
        '../approvals/approver-secret.js'
      );
      const secret = await secretFrom(options.secretFile);
      if (secret.length < MIN_APPROVER_SECRET_LENGTH) {
        throw new CliError(
          `the secret is ${secret.length} characters; use at least ${MIN_APPROVER_SECRET_LENGTH} (e.g. \`openssl rand -base64 24\`)`,
        );
      }
      process.stdout.write(`${await hashApproverSecret(secret)}\n`);
    });
}
