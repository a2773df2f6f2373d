/**
 * The one-round-trip batch (decision 119). When this process wrote the last events of every
 * tenant in a batch, it seals the batch's events onto the heads it remembers and sends the head
 * locks (asserting each head is still what it remembers; one tenant's head is moved and its
 * events appended by the statement that locks it, decisions 131 and 135), each commit's writes
 * (one statement asserting each touched exactly one row), and the append and head moves of
 * several tenants, as one round trip and one implicit transaction; a lone commit as one
 * statement (decision 135). Any surprise aborts the transaction whole, and the batch goes the
 * two-round-trip way (024).
 */
import type { LedgerEvent, LedgerHead } from '../../core/ledger.js';
import type { AuthorityEvidenceRecord } from '../../core/store.js';
import type { CommitOutcome, PendingCommit } from './postgres-commit.js';
import { commitLevelSql, sealOutcome } from './postgres-commit.js';
import { type BatchMark, batchMark } from './postgres-commit-outcome.js';
import type { RoundTripStatement } from './postgres-prepared.js';
import {
  appendAndMoveSql,
  assertedCommitSql,
  assertHeadsSql,
  oneStatementCommitSql,
  oneTenantHeadSql,
} from './postgres-sql.js';

/**
 * The chain heads this process last saw, and whether it may seal onto them without reading
 * them first. Trust is only a prediction: the one-trip batch asserts every head in SQL.
 */
export interface HeadCache {
  /** The remembered heads of `tenants` when every one is trusted, else undefined. */
  trusted(tenants: readonly string[]): Map<string, LedgerHead> | undefined;
  /**
   * The heads a two-round-trip batch locked. A head nobody moved since this process last saw
   * it is trusted from now on; one that moved says another process writes the chain too.
   */
  locked(heads: ReadonlyMap<string, LedgerHead>): void;
  /** The heads a batch left once its COMMIT landed (trust unchanged). */
  landed(heads: ReadonlyMap<string, LedgerHead>): void;
  /** Stops trusting these tenants' heads (a batch failed, or a one-trip batch missed). */
  distrust(tenants: readonly string[]): void;
}

/** Tenants remembered at most; beyond it the cache starts over (only trust is lost). */
const MAX_REMEMBERED_TENANTS = 10_000;

const sameHead = (a: LedgerHead, b: LedgerHead) => a.sequence === b.sequence && a.hash === b.hash;

/** Creates an empty head cache (nothing trusted). */
export function createHeadCache(): HeadCache {
  const entries = new Map<string, { head: LedgerHead; trusted: boolean }>();
  const remember = (tenant: string, head: LedgerHead, trusted: boolean) => {
    if (!entries.has(tenant) && entries.size >= MAX_REMEMBERED_TENANTS) entries.clear();
    entries.set(tenant, { head, trusted });
  };
  return {
    trusted(tenants) {
      const heads = new Map<string, LedgerHead>();
      for (const tenant of tenants) {
        const entry = entries.get(tenant);
        if (entry === undefined || !entry.trusted) return undefined;
        heads.set(tenant, entry.head);
      }
      return heads;
    },
    locked(heads) {
      for (const [tenant, head] of heads) {
        const seen = entries.get(tenant);
        remember(tenant, head, seen !== undefined && sameHead(seen.head, head));
      }
    },
    landed(heads) {
      for (const [tenant, head] of heads) {
        remember(tenant, head, entries.get(tenant)?.trusted ?? false);
      }
    },
    distrust(tenants) {
      for (const tenant of tenants) {
        const entry = entries.get(tenant);
        if (entry !== undefined) entries.set(tenant, { head: entry.head, trusted: false });
      }
    },
  };
}

/** A batch ready to go as one round trip, and what each caller gets once it lands. */
export interface OneTripBatch {
  /**
   * The statements of one simple query — one implicit transaction, no `BEGIN` or `COMMIT`
   * (decision 135): the asserted head locks (one tenant's also moving its head and appending
   * its events), the asserted writes, the append and head moves of several tenants; for one
   * commit on one tenant with events and no proposal update, one statement.
   */
  readonly statements: readonly RoundTripStatement[];
  readonly outcomes: CommitOutcome[];
  /** Every tenant's head once the batch lands. */
  readonly heads: ReadonlyMap<string, LedgerHead>;
  readonly mark: BatchMark;
}

/**
 * Seals every commit of `batch` as if each landed, onto `remembered` heads, and builds the
 * round trip. Undefined when a commit's events cannot be sealed (the two-round-trip batch
 * decides that commit alone).
 */
export function planOneTrip(
  q: string,
  batch: readonly PendingCommit[],
  remembered: ReadonlyMap<string, LedgerHead>,
): OneTripBatch | undefined {
  const heads = new Map(remembered);
  const outcomes: CommitOutcome[] = [];
  const appended: LedgerEvent[] = [];
  let firstEvidence: AuthorityEvidenceRecord | undefined;
  for (const pending of batch) {
    let outcome: CommitOutcome;
    try {
      outcome = sealOutcome(pending, heads);
    } catch {
      return undefined;
    }
    if (outcome.kind !== 'result' || outcome.result.kind !== 'committed') return undefined;
    const last = outcome.result.events.at(-1);
    if (last !== undefined) heads.set(last.tenant, { sequence: last.sequence, hash: last.hash });
    appended.push(...outcome.result.events);
    firstEvidence ??= pending.write.evidence?.[0];
    outcomes.push(outcome);
  }
  const [only, ...others] = remembered;
  const mark = batchMark(appended, firstEvidence);
  const alone = batch.length === 1 ? (batch[0] as PendingCommit) : undefined;
  // A proposal update stays in statements of their own: as one statement with its sealed-part
  // checks, its executor state outgrew glibc's trim threshold, and the backend shrank and
  // grew its heap (`brk`, a TLB shootdown each) twice per transaction (decision 135).
  if (
    alone !== undefined &&
    alone.write.proposal?.kind !== 'update' &&
    only !== undefined &&
    others.length === 0 &&
    appended.length > 0
  ) {
    const deferred = alone.write.durability === 'deferred';
    const statement = oneStatementCommitSql(q, only[0], only[1], appended, alone.writes, deferred);
    return { statements: [statement], outcomes, heads, mark };
  }
  // One tenant as a template the connection prepares once, the head moved where it is locked
  // and the events appended there; several as text, locked in tenant order first, moved last.
  // No BEGIN or COMMIT: the statements of one simple query are one (implicit) transaction,
  // which any error ends whole (decision 135).
  const oneTenant = only !== undefined && others.length === 0;
  const writes = batch.flatMap((pending) => assertedCommitSql(pending.writes) ?? []);
  const statements = oneTenant
    ? [oneTenantHeadSql(q, only[0], only[1], appended), ...writes]
    : [assertHeadsSql(q, remembered), ...writes, ...appendAndMoveSql(q, appended, remembered)];
  statements.push(...commitLevelSql(batch));
  return { statements, outcomes, heads, mark };
}
