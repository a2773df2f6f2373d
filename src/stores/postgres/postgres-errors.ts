/**
 * How the PostgreSQL store reads driver errors (a lost connection, a retryable conflict) and the
 * definite errors it gives callers instead (decision 023): each one says whether anything landed.
 */
import { SideguardError } from '../../core/errors.js';
import { StoreUnavailableError } from '../store-errors.js';

const CONNECTION_ERROR_CODES = new Set([
  '57P01', // admin_shutdown (pg_terminate_backend)
  '25P03', // idle_in_transaction_session_timeout ended the session
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now
  '08000',
  '08003',
  '08006',
  'ECONNRESET',
  'ECONNREFUSED',
  'EPIPE',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EHOSTUNREACH',
]);

/**
 * What the driver says when the socket is gone, the server stopped answering (`query_timeout`),
 * no connection could be made in time, or the peer is not PostgreSQL at all.
 */
const CONNECTION_MESSAGES =
  /Connection terminated|connection error|not queryable|socket|ECONNRESET|Query read timeout|timeout exceeded when trying to connect|timeout expired|not a PostgreSQL server/i;

/** A statement cancelled by `statement_timeout`, or a lock not available (`lock_timeout`). */
const TIMED_OUT_CODES: ReadonlySet<string> = new Set(['57014', '55P03']);

/** Serialization failure and deadlock: the transaction was rolled back whole; run it again. */
export const RETRYABLE_CODES: ReadonlySet<string> = new Set(['40001', '40P01']);

/** How often a retryable batch or commit is tried before its error is final. */
export const MAX_ATTEMPTS = 5;

/** `invalid_sql_statement_name`: the connection no longer holds a statement we prepared. */
export const PREPARED_STATEMENT_MISSING = '26000';

/** A batch found a chain head missing that it believed created; it is rolled back and rerun. */
export class HeadsMissingError extends Error {}

/** The SQLSTATE or Node error code of a driver error, if it has one. */
export function errorCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** True when `error` means the connection is gone (not a refusal by a working database). */
export function isConnectionError(error: unknown): boolean {
  if (error instanceof SideguardError) return false;
  const code = errorCode(error);
  if (code !== undefined && CONNECTION_ERROR_CODES.has(code)) return true;
  const message = error instanceof Error ? error.message : '';
  return CONNECTION_MESSAGES.test(message);
}

/** True when PostgreSQL cancelled a statement at the statement (or lock) timeout. */
export function isStatementTimeout(error: unknown): boolean {
  const code = errorCode(error);
  return code !== undefined && TIMED_OUT_CODES.has(code);
}

function timedOut(where: string, error: unknown, doing: string): StoreUnavailableError {
  return new StoreUnavailableError(
    'store_busy',
    `${where} cancelled ${doing} at the statement timeout (${errorCode(error)}: ${describe(error)}), usually because another transaction held a lock it needed; nothing was stored. Retry, or raise statementTimeoutMs.`,
    { applied: false, cause: error },
  );
}

/** A connection string with any password replaced, safe for messages. */
export function redactConnectionString(connectionString: string): string {
  try {
    const url = new URL(connectionString);
    if (url.password !== '') url.password = '***';
    return url.toString();
  } catch {
    return connectionString.replace(/(password\s*=\s*)\S+/gi, '$1***');
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The error every caller of a batch gets when the database refused the batch as a whole. */
export function refusedByDatabase(where: string, error: unknown): SideguardError {
  if (error instanceof SideguardError) return error;
  if (isStatementTimeout(error)) return timedOut(where, error, 'the commit');
  const code = errorCode(error);
  return new StoreUnavailableError(
    'store_io_failed',
    `${where} refused the commit (${code ?? 'no code'}: ${describe(error)}); the transaction was rolled back and nothing was stored.`,
    { applied: false, cause: error },
  );
}

/** The connection dropped before COMMIT was sent: the transaction cannot have landed. */
export function connectionLostBeforeCommit(where: string, cause: unknown): StoreUnavailableError {
  return new StoreUnavailableError(
    'store_connection_lost',
    `The connection to ${where} dropped before the commit was sent; the transaction was rolled back and nothing was stored. Retry the operation.`,
    { applied: false, cause },
  );
}

/** The connection dropped during COMMIT and the store found that the commit did not land. */
export function commitDidNotLand(where: string, cause: unknown): StoreUnavailableError {
  return new StoreUnavailableError(
    'store_connection_lost',
    `The connection to ${where} dropped during COMMIT and the commit did not land; nothing was stored. Retry the operation.`,
    { applied: false, cause },
  );
}

/** The connection dropped during COMMIT and the database could not be asked whether it landed. */
export function commitOutcomeUnknown(where: string, cause: unknown): StoreUnavailableError {
  return new StoreUnavailableError(
    'store_commit_outcome_unknown',
    `The connection to ${where} dropped during COMMIT and the database could not tell whether it landed. Re-read the proposal before acting again.`,
    { applied: 'unknown', cause },
  );
}

/** The database could not be reached (or prepared) when the store opened or checked out. */
export function unreachable(
  where: string,
  error: unknown,
  verb = 'connect to',
): StoreUnavailableError {
  return new StoreUnavailableError(
    'store_unreachable',
    `Could not ${verb} ${where}: ${describe(error)}. Nothing was stored; check that the database is running and reachable.`,
    { applied: false, cause: error },
  );
}

/**
 * The error a failed read gives: a lost connection or a statement timeout become a definite
 * `StoreUnavailableError`; anything else (a Sideguard error, a SQL error) is passed on.
 */
export function readFailure(where: string, error: unknown): unknown {
  if (isStatementTimeout(error)) return timedOut(where, error, 'the read');
  if (!isConnectionError(error)) return error;
  return new StoreUnavailableError(
    'store_connection_lost',
    `Reading from ${where} failed: the connection dropped or the server stopped answering (${describe(error)}). Retry the read.`,
    { applied: false, cause: error },
  );
}
