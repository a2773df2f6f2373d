/**
 * Errors the durable store adapters throw when the database itself fails (busy, I/O, a dropped
 * connection). Each one says whether the write was applied, so callers never have to guess.
 */
import { SideguardError } from '../core/errors.js';

/** Stable codes of {@link StoreUnavailableError}. */
export const StoreUnavailableCode = {
  /** The database stayed locked by another writer past the busy timeout; nothing was stored. */
  busy: 'store_busy',
  /** The database could not be reached at all; nothing was stored. */
  unreachable: 'store_unreachable',
  /** The connection dropped before the commit was sent; nothing was stored. */
  connectionLost: 'store_connection_lost',
  /** The database reported an I/O or disk-full error; nothing of the commit was stored. */
  ioFailed: 'store_io_failed',
  /**
   * The connection dropped while COMMIT was in flight and the store could not find out whether
   * it landed (the database was unreachable afterwards). Re-read before acting again.
   */
  outcomeUnknown: 'store_commit_outcome_unknown',
} as const;
/** Stable codes of {@link StoreUnavailableError}. */
export type StoreUnavailableCode = (typeof StoreUnavailableCode)[keyof typeof StoreUnavailableCode];

/**
 * The database could not complete an operation. `data.applied` is `false` when the store knows
 * nothing of the commit was stored (safe to retry the same commit) and `'unknown'` only for
 * `store_commit_outcome_unknown`.
 */
export class StoreUnavailableError extends SideguardError {
  constructor(
    code: StoreUnavailableCode,
    message: string,
    options: { applied: false | 'unknown'; cause?: unknown; data?: Record<string, unknown> },
  ) {
    super(code, message, {
      data: { ...options.data, applied: options.applied },
      ...(options.cause === undefined ? {} : { cause: options.cause }),
    });
  }
}
