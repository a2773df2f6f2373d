/** `sideguard ledger verify FILE`: checks a JSONL ledger export's hash chains, streaming. */
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import type { Command } from 'commander';
import { createLedgerChainVerifier, type LedgerChainVerifier } from '../core/ledger.js';
import { CliError, ExitCode } from './cli-errors.js';
import { registerLedgerHeadCommand } from './ledger-head-command.js';

/** The verdict on one ledger file. */
export type LedgerFileVerdict =
  | {
      readonly kind: 'valid';
      readonly file: string;
      readonly entries: number;
      readonly tenants: readonly {
        tenant: string;
        entries: number;
        headSequence: number;
        headHash: string;
      }[];
    }
  | {
      readonly kind: 'invalid';
      readonly file: string;
      readonly line: number;
      readonly tenant: string | null;
      readonly sequence: number | null;
      readonly reason: string;
      readonly message: string;
    };

const MAX_LINE_BYTES = 1024 * 1024;

/** A head the file must end at: `SEQUENCE:HASH`, or `TENANT@SEQUENCE:HASH` for one of several. */
export interface ExpectedHead {
  readonly tenant: string | null;
  readonly sequence: number;
  readonly hash: string;
}

/** Parses `--expect-head` values. */
export function parseExpectedHead(value: string): ExpectedHead {
  const match = /^(?:(.+)@)?(\d{1,15}):([0-9a-f]{64})$/.exec(value.trim());
  if (match === null) {
    throw new CliError(
      `--expect-head ${JSON.stringify(value)} is not SEQUENCE:HASH or TENANT@SEQUENCE:HASH (HASH: 64 hex digits)`,
    );
  }
  return { tenant: match[1] ?? null, sequence: Number(match[2]), hash: match[3] ?? '' };
}

/**
 * Verifies every tenant chain in a JSONL ledger file; stops at the first bad entry. A file
 * alone cannot show that entries were cut from its end: pass the head recorded elsewhere (the
 * store's `ledgerHead`, or the head a previous verify printed) as `expectedHeads`.
 */
export async function verifyLedgerFile(
  file: string,
  expectedHeads: readonly ExpectedHead[] = [],
): Promise<LedgerFileVerdict> {
  let info: Awaited<ReturnType<typeof stat>>;
  try {
    info = await stat(file);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new CliError(
      code === 'ENOENT'
        ? `ledger file ${file} does not exist`
        : `cannot read ledger file ${file} (${code ?? String(error)})`,
    );
  }
  if (!info.isFile()) throw new CliError(`ledger path ${file} is not a file`);
  const verifiers = new Map<string, LedgerChainVerifier>();
  const lines = createInterface({
    input: createReadStream(file, { encoding: 'utf8' }),
    crlfDelay: Infinity,
  });
  let lineNumber = 0;
  let entries = 0;
  const invalid = (
    line: number,
    tenant: string | null,
    sequence: number | null,
    reason: string,
    message: string,
  ) => {
    lines.close();
    return { kind: 'invalid' as const, file, line, tenant, sequence, reason, message };
  };
  try {
    for await (const text of lines) {
      lineNumber += 1;
      if (text.trim() === '') continue;
      if (text.length > MAX_LINE_BYTES) {
        return invalid(
          lineNumber,
          null,
          null,
          'malformed',
          `line ${lineNumber} is longer than 1 MiB`,
        );
      }
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        return invalid(lineNumber, null, null, 'malformed', `line ${lineNumber} is not valid JSON`);
      }
      const tenant =
        typeof parsed === 'object' &&
        parsed !== null &&
        typeof (parsed as { tenant?: unknown }).tenant === 'string'
          ? (parsed as { tenant: string }).tenant
          : '';
      let verifier = verifiers.get(tenant);
      if (verifier === undefined) {
        verifier = createLedgerChainVerifier();
        verifiers.set(tenant, verifier);
      }
      const failure = verifier.push(parsed);
      entries += 1;
      if (failure !== undefined) {
        return invalid(
          lineNumber,
          tenant === '' ? null : tenant,
          failure.sequence,
          failure.reason,
          `line ${lineNumber}: ${failure.message.replace(/^entry \d+/, 'entry')}`,
        );
      }
    }
  } catch (error) {
    throw new CliError(
      `cannot read ledger file ${file} (${(error as NodeJS.ErrnoException).code ?? String(error)})`,
    );
  }
  if (entries === 0) {
    return {
      kind: 'invalid',
      file,
      line: 0,
      tenant: null,
      sequence: null,
      reason: 'empty',
      message: 'the file holds no ledger entries',
    };
  }
  for (const expected of expectedHeads) {
    const tenant = expected.tenant ?? (verifiers.size === 1 ? [...verifiers.keys()][0] : undefined);
    if (tenant === undefined) {
      throw new CliError(
        'the file holds several tenant chains: write --expect-head TENANT@SEQUENCE:HASH',
      );
    }
    const result = verifiers.get(tenant)?.result();
    const head = result?.kind === 'valid' ? result.head : undefined;
    if (head?.sequence !== expected.sequence || head.hash !== expected.hash) {
      return {
        kind: 'invalid',
        file,
        line: lineNumber,
        tenant,
        sequence: head?.sequence ?? null,
        reason: 'head_mismatch',
        message: `the chain ends at sequence ${head?.sequence ?? 0}, expected ${expected.sequence} with the given hash (entries were removed from the end, or the file is another ledger)`,
      };
    }
  }
  const tenants = [...verifiers.entries()].map(([tenant, verifier]) => {
    const result = verifier.result();
    const head = result.kind === 'valid' ? result.head : undefined;
    return {
      tenant,
      entries: result.kind === 'valid' ? result.count : 0,
      headSequence: head?.sequence ?? 0,
      headHash: head?.hash ?? '',
    };
  });
  return { kind: 'valid', file, entries, tenants };
}

/** Registers `sideguard ledger …`. */
export function registerLedgerCommand(program: Command): void {
  const ledger = program.command('ledger').description('Work with exported ledgers (JSONL)');
  registerLedgerHeadCommand(ledger);
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
      const verdict = await verifyLedgerFile(file, options.expectHead ?? []);
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
