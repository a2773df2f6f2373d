/**
 * Verifying an exported ledger (JSONL, one sealed event per line) as library code: every tenant's
 * hash chain, checked line by line, optionally against heads recorded elsewhere (a file alone
 * cannot show that entries were cut from its end). Pure: it reads lines, not files, so it runs
 * anywhere; `verifyLedgerFile` (entry `sideguard/verify`) feeds it a file.
 */
import { SideguardError } from '../core/errors.js';
import {
  createLedgerChainVerifier,
  type LedgerChainVerifier,
  type LedgerEvent,
  LedgerFailureReason,
  parseLedgerEvent,
} from '../core/ledger.js';

/** Longest line accepted, in UTF-16 code units (about 1 MiB): longer is `malformed`. */
export const MAX_LEDGER_LINE_LENGTH = 1024 * 1024;

/** Why a ledger file failed: a chain failure, or no entries at all. */
export const LedgerFileFailure = { ...LedgerFailureReason, empty: 'empty' } as const;
export type LedgerFileFailure = (typeof LedgerFileFailure)[keyof typeof LedgerFileFailure];

/** A head a chain must end at; `tenant: null` means the file's only tenant. */
export interface ExpectedHead {
  readonly tenant: string | null;
  readonly sequence: number;
  readonly hash: string;
}

/** Where one tenant's chain ends. */
export interface LedgerTenantHead {
  readonly tenant: string;
  readonly entries: number;
  readonly headSequence: number;
  readonly headHash: string;
}

/** The verdict on a ledger's lines. `line` is 1-based; 0 when no line is to blame. */
export type LedgerLinesVerdict =
  | {
      readonly kind: 'valid';
      readonly entries: number;
      readonly tenants: readonly LedgerTenantHead[];
    }
  | {
      readonly kind: 'invalid';
      readonly line: number;
      readonly tenant: string | null;
      readonly sequence: number | null;
      readonly reason: LedgerFileFailure;
      readonly message: string;
    };

/** Options of {@link verifyLedgerLines}. */
export interface VerifyLedgerOptions {
  /** Heads the chains must end at exactly (detects entries cut from the end). @default none */
  readonly expectedHeads?: readonly ExpectedHead[];
  /** Receives each event once its line verified, in file order. */
  readonly onEvent?: (event: LedgerEvent, line: number) => void;
}

/**
 * Parses an expected head: `SEQUENCE:HASH`, or `TENANT@SEQUENCE:HASH` when the file holds several
 * tenants (HASH: 64 lower-case hex digits). Throws `SideguardError` `ledger_head_invalid`.
 */
export function parseExpectedHead(value: string): ExpectedHead {
  const match = /^(?:(.+)@)?(\d{1,15}):([0-9a-f]{64})$/.exec(value.trim());
  if (match === null) {
    throw new SideguardError(
      'ledger_head_invalid',
      `expected head ${JSON.stringify(value)} is not SEQUENCE:HASH or TENANT@SEQUENCE:HASH (HASH: 64 hex digits)`,
    );
  }
  return { tenant: match[1] ?? null, sequence: Number(match[2]), hash: match[3] ?? '' };
}

/**
 * Verifies every tenant chain in a ledger's lines (blank lines are skipped) and stops at the
 * first bad one. Throws `SideguardError` `ledger_head_ambiguous` when an expected head names no
 * tenant and the lines hold several.
 */
export async function verifyLedgerLines(
  lines: AsyncIterable<string> | Iterable<string>,
  options: VerifyLedgerOptions = {},
): Promise<LedgerLinesVerdict> {
  const verifiers = new Map<string, LedgerChainVerifier>();
  let lineNumber = 0;
  let entries = 0;
  const invalid = (
    tenant: string | null,
    sequence: number | null,
    reason: LedgerFileFailure,
    message: string,
  ): LedgerLinesVerdict => ({
    kind: 'invalid',
    line: lineNumber,
    tenant,
    sequence,
    reason,
    message,
  });
  for await (const text of lines) {
    lineNumber += 1;
    if (text.trim() === '') continue;
    if (text.length > MAX_LEDGER_LINE_LENGTH) {
      return invalid(null, null, 'malformed', `line ${lineNumber} is longer than 1 MiB`);
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return invalid(null, null, 'malformed', `line ${lineNumber} is not valid JSON`);
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
        tenant === '' ? null : tenant,
        failure.sequence,
        failure.reason,
        `line ${lineNumber}: ${failure.message.replace(/^entry \d+/, 'entry')}`,
      );
    }
    const event = parseLedgerEvent(parsed);
    if (typeof event !== 'string') options.onEvent?.(event, lineNumber);
  }
  if (entries === 0) {
    lineNumber = 0;
    return invalid(null, null, 'empty', 'the file holds no ledger entries');
  }
  const heads = [...verifiers.entries()].map(([tenant, verifier]): LedgerTenantHead => {
    const result = verifier.result();
    const head = result.kind === 'valid' ? result.head : undefined;
    return {
      tenant,
      entries: result.kind === 'valid' ? result.count : 0,
      headSequence: head?.sequence ?? 0,
      headHash: head?.hash ?? '',
    };
  });
  for (const expected of options.expectedHeads ?? []) {
    const tenant = expected.tenant ?? (heads.length === 1 ? heads[0]?.tenant : undefined);
    if (tenant === undefined) {
      throw new SideguardError(
        'ledger_head_ambiguous',
        'the ledger holds several tenant chains: name the tenant of each expected head (TENANT@SEQUENCE:HASH)',
      );
    }
    const head = heads.find((candidate) => candidate.tenant === tenant);
    if (head?.headSequence !== expected.sequence || head.headHash !== expected.hash) {
      return invalid(
        tenant,
        head?.headSequence ?? null,
        'head_mismatch',
        `the chain ends at sequence ${head?.headSequence ?? 0}, expected ${expected.sequence} with the given hash (entries were removed from the end, or the file is another ledger)`,
      );
    }
  }
  return { kind: 'valid', entries, tenants: heads };
}
