/**
 * After the connection dropped while a batch's COMMIT was in flight: find out from a new
 * connection whether it landed, and give every caller of the batch a definite answer
 * (decision 023).
 */
import type pg from 'pg';
import type { LedgerEvent } from '../../core/ledger.js';
import type { AuthorityEvidenceRecord } from '../../core/store.js';
import { encodeJson } from '../store-codec.js';
import type { CommitOutcome } from './postgres-commit.js';
import type { PostgresContext } from './postgres-context.js';
import { commitDidNotLand, commitOutcomeUnknown } from './postgres-errors.js';

/** Where a landed batch must have left a trace, to tell after a lost COMMIT whether it did. */
export type BatchMark =
  | { readonly kind: 'event'; readonly tenant: string; readonly event: LedgerEvent }
  | { readonly kind: 'evidence'; readonly item: AuthorityEvidenceRecord }
  | { readonly kind: 'nothing' };

/** The trace of a batch: its first sealed event (its place in the chain), else its first evidence. */
export function batchMark(
  appended: readonly LedgerEvent[],
  firstEvidence: AuthorityEvidenceRecord | undefined,
): BatchMark {
  const first = appended[0];
  if (first !== undefined) return { kind: 'event', tenant: first.tenant, event: first };
  return firstEvidence === undefined
    ? { kind: 'nothing' }
    : { kind: 'evidence', item: firstEvidence };
}

/** How long to wait for the old backend to leave before the outcome is unknown. */
const BACKEND_GONE_WAIT_MS = 10_000;
const POLL_MS = 50;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** True/false once the old backend is gone; undefined while it might still be committing. */
async function markLanded(
  context: PostgresContext,
  checker: pg.PoolClient,
  mark: BatchMark,
  pid: number,
): Promise<boolean | undefined> {
  let gone = pid === 0;
  for (let waitedMs = 0; !gone && waitedMs < BACKEND_GONE_WAIT_MS; waitedMs += POLL_MS) {
    const activity = await checker.query<{ state: string | null }>(
      'SELECT state FROM pg_stat_activity WHERE pid = $1',
      [pid],
    );
    const state = activity.rows[0]?.state;
    if (state === undefined || state === null || state === 'idle') {
      gone = true;
      break;
    }
    // Still inside the transaction: COMMIT never arrived. Terminating rolls it back for sure.
    if (state.startsWith('idle in transaction')) {
      await checker.query('SELECT pg_terminate_backend($1)', [pid]);
    }
    await sleep(POLL_MS);
  }
  if (!gone) return undefined;
  if (mark.kind === 'event') {
    const found = await checker.query<{ hash: string }>(context.sql.findEvent, [
      mark.tenant,
      mark.event.sequence,
    ]);
    return found.rows[0]?.hash === mark.event.hash;
  }
  if (mark.kind === 'evidence') {
    const item = mark.item;
    const found = await checker.query<{ record: string }>(context.sql.findEvidence, [
      item.tenant,
      item.proposal,
      item.evidenceDigest,
    ]);
    return found.rows[0]?.record === encodeJson(item);
  }
  return true; // the batch stored nothing
}

/**
 * Makes sure the old backend (`pid`) is gone (terminating it if it is still waiting inside the
 * transaction), then looks for the batch's first sealed event or evidence to learn whether it
 * landed. The batch is one transaction, so one trace answers for every commit in it. Undefined
 * when the database cannot tell.
 */
export async function batchLanded(
  context: PostgresContext,
  mark: BatchMark,
  pid: number,
): Promise<boolean | undefined> {
  let checker: pg.PoolClient;
  try {
    checker = await context.connect();
  } catch {
    return undefined;
  }
  let failure: Error | undefined;
  try {
    return await markLanded(context, checker, mark, pid);
  } catch (error) {
    failure = error instanceof Error ? error : new Error(String(error));
    return undefined;
  } finally {
    checker.release(failure);
  }
}

/**
 * Every caller's answer once a batch's COMMIT was lost: the outcomes as they were if it
 * landed; otherwise an error for each, `applied: false` wherever that is certain (refused and
 * failed commits were rolled back to their savepoints whatever COMMIT did).
 */
export function lostCommitOutcomes(
  where: string,
  outcomes: readonly CommitOutcome[],
  landed: boolean | undefined,
  cause: unknown,
): CommitOutcome[] {
  if (landed === true) return [...outcomes];
  return outcomes.map((outcome): CommitOutcome => {
    if (outcome.kind === 'error') return outcome;
    // A refusal may rest on a batch-mate's write that did not land: it is no answer now.
    if (landed === false || outcome.result.kind !== 'committed') {
      return { kind: 'error', error: commitDidNotLand(where, cause) };
    }
    return { kind: 'error', error: commitOutcomeUnknown(where, cause) };
  });
}
