/**
 * `verifyLedgerFile`: verifies a JSONL ledger export on disk, streaming it line by line through
 * `verifyLedgerLines`. What `sideguard ledger verify` runs; exported as `sideguard/verify`.
 */
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { SideguardError } from '../core/errors.js';
import {
  type LedgerLinesVerdict,
  type VerifyLedgerOptions,
  verifyLedgerLines,
} from './ledger-lines.js';

/** The verdict on one ledger file: the lines' verdict and the file it is about. */
export type LedgerFileVerdict = LedgerLinesVerdict & { readonly file: string };

/**
 * Verifies every tenant chain in a JSONL ledger file; stops at the first bad entry. A file alone
 * cannot show that entries were cut from its end: pass the head recorded elsewhere (the store's
 * `ledgerHead`, or a head a previous verify printed) in `expectedHeads`. Throws `SideguardError`
 * `ledger_file_unreadable` when the file is missing, not a file or unreadable.
 */
export async function verifyLedgerFile(
  file: string,
  options: VerifyLedgerOptions = {},
): Promise<LedgerFileVerdict> {
  const unreadable = (detail: string, cause?: unknown) =>
    new SideguardError('ledger_file_unreadable', detail, {
      data: { file },
      ...(cause === undefined ? {} : { cause }),
    });
  try {
    if (!(await stat(file)).isFile()) throw unreadable(`ledger path ${file} is not a file`);
  } catch (error) {
    if (error instanceof SideguardError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    throw unreadable(
      code === 'ENOENT'
        ? `ledger file ${file} does not exist`
        : `cannot read ledger file ${file} (${code ?? String(error)})`,
      error,
    );
  }
  const lines = createInterface({
    input: createReadStream(file, { encoding: 'utf8' }),
    crlfDelay: Number.POSITIVE_INFINITY,
  });
  try {
    return { ...(await verifyLedgerLines(lines, options)), file };
  } catch (error) {
    if (error instanceof SideguardError) throw error;
    throw unreadable(
      `cannot read ledger file ${file} (${(error as NodeJS.ErrnoException).code ?? String(error)})`,
      error,
    );
  } finally {
    lines.close();
  }
}
