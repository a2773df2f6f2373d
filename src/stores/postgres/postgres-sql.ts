/**
 * The PostgreSQL store's SQL: literals for the simple query protocol (several statements in one
 * round trip, no parameters), a commit's writes, the batch's head and ledger statements, and the
 * parameterised statements of the rare paths and the reads. Pure text; nothing here runs SQL.
 */
import { createHash } from 'node:crypto';
import { StoreInvariantError } from '../../core/errors.js';
import { GENESIS_HASH, type LedgerEvent, type LedgerHead } from '../../core/ledger.js';
import type { ProposalRecord, StoreCommit } from '../../core/store.js';
import { encodeJson } from '../store-codec.js';
import { EnvelopePart, envelopeTexts, recordWithoutEnvelopes } from '../store-envelopes.js';
import { joinSql, literal, raw, type SqlTemplate, sql } from './postgres-sql-template.js';

export { literal } from './postgres-sql-template.js';

/** A chain head row as locked by a batch (bigint arrives as text). */
export interface HeadRow {
  tenant: string;
  sequence: string;
  hash: string;
}

/**
 * The statements (as CTEs) that bring a proposal's sealed-part rows in line with an update
 * that applied (`updated`), and the conditions that refuse one that would change a part:
 * the snapshot is kept (null deletes it); the output is kept or added where there is none
 * (null deletes it). Empty for a part the update leaves null.
 */
function envelopeUpdate(
  q: string,
  tenant: string,
  proposal: string,
  r: ProposalRecord,
): { readonly conditions: SqlTemplate[]; readonly effects: SqlTemplate[] } {
  const texts = envelopeTexts(r);
  const table = raw(`${q}.proposal_envelopes`);
  const stored = (part: EnvelopePart) => sql`${table} e
    WHERE e.tenant = ${tenant} AND e.proposal = ${proposal} AND e.part = ${raw(`'${part}'`)}`;
  const conditions: SqlTemplate[] = [];
  const effects: SqlTemplate[] = [];
  for (const part of Object.values(EnvelopePart)) {
    const text = texts[part];
    const name = raw(part);
    if (text === null) {
      effects.push(sql`${name}_gone AS (DELETE FROM ${table} e USING updated u
        WHERE e.tenant = u.tenant AND e.proposal = u.proposal AND e.part = ${raw(`'${part}'`)})`);
    } else if (part === EnvelopePart.snapshot) {
      conditions.push(sql`EXISTS (SELECT 1 FROM ${stored(part)} AND e.envelope = ${text})`);
    } else {
      conditions.push(sql`NOT EXISTS (SELECT 1 FROM ${stored(part)} AND e.envelope <> ${text})`);
      effects.push(sql`${name}_kept AS (INSERT INTO ${table} (tenant, proposal, part, envelope)
        SELECT tenant, proposal, ${raw(`'${part}'`)}, ${text}::text FROM updated
        ON CONFLICT (tenant, proposal, part) DO NOTHING)`);
    }
  }
  return { conditions, effects };
}

/**
 * One write of a commit as data-modifying CTEs (`name AS (…)`, comma-separated, without the
 * `WITH`) and the CTE whose rows say whether it applied (one row when it did). CTE names are
 * distinct across a commit's writes, so the writes can share one `WITH`. The group commit
 * sends each write as `SELECT 1 FROM <from>` and reads the row count (decision 024); the
 * one-round-trip commit asserts every count in one statement instead (decisions 119, 131).
 */
export interface WriteSql {
  readonly ctes: SqlTemplate;
  readonly from: string;
  /**
   * The same CTEs with plain inserts instead of `ON CONFLICT` ones, for the one-statement
   * commit (decision 135), which aborts whole on a conflict as on any write that touches no
   * row; absent where they are the same.
   */
  readonly strict?: SqlTemplate;
}

/** The write as a statement whose row count is 1 when it applied. */
export function countedSql(write: WriteSql): SqlTemplate {
  return sql`WITH ${write.ctes}
    SELECT 1 FROM ${raw(write.from)}`;
}

/**
 * A commit's writes as one statement answering one row: each write's row count, in order, as
 * columns `c0`, `c1`, … (decision 131). The two-round-trip batch reads them as it read one
 * statement's row count per write; one snapshot for all of a commit's writes decides as the
 * statements one by one would (see {@link assertedCommitSql}). Undefined without writes.
 */
export function countedCommitSql(writes: readonly WriteSql[]): SqlTemplate | undefined {
  if (writes.length === 0) return undefined;
  const counts = writes
    .map((write, index) => `(SELECT count(*) FROM ${write.from}) AS c${index}`)
    .join(', ');
  return sql`WITH ${joinSql(
    writes.map((write) => write.ctes),
    ',\n    ',
  )}
    SELECT ${raw(counts)}`;
}

/**
 * A commit's writes as one statement that fails (division by zero) unless each applied to
 * exactly one row (decision 131). The writes of one commit touch different rows (the proposal
 * and its sealed parts, the claim, each evidence item) and none reads what another writes, so
 * one snapshot for all of them decides as the statements one by one would; any failure aborts
 * the one-round-trip transaction whole. Undefined for a commit without writes.
 */
export function assertedCommitSql(writes: readonly WriteSql[]): SqlTemplate | undefined {
  if (writes.length === 0) return undefined;
  const counts = writes.map((write) => `(SELECT count(*) FROM ${write.from}) = 1`).join(' AND ');
  return sql`WITH ${joinSql(
    writes.map((write) => write.ctes),
    ',\n    ',
  )}
    SELECT 1 / (CASE WHEN ${raw(counts)} THEN 1 ELSE 0 END)`;
}

/** The proposal write of a commit (see `commitWrites`). */
function proposalWrite(q: string, write: StoreCommit): WriteSql | undefined {
  const change = write.proposal;
  if (change === undefined) return undefined;
  const r = change.record;
  const { tenant } = write;
  const proposal = r.proposal;
  const columns: [string, string | number | null][] = [
    ['revision', r.revision],
    ['status', r.status],
    ['effect_scope', r.effectScope],
    ['created_at_ms', r.createdAtMs],
    ['due_at_ms', r.dueAtMs],
    ['expires_at_ms', r.expiresAtMs],
    ['action_type', r.actionType],
    ['record', encodeJson(recordWithoutEnvelopes(r))],
  ];
  const proposals = raw(`${q}.proposals`);
  if (change.kind === 'insert') {
    const texts = envelopeTexts(r);
    const parts = Object.values(EnvelopePart).flatMap((part) => {
      const text = texts[part];
      return text === null ? [] : [sql`(${raw(`'${part}'`)}, ${text}::text)`];
    });
    const names = raw(columns.map(([name]) => name).join(', '));
    const values = joinSql(
      columns.map(([, value]) => sql`${value}`),
      ', ',
    );
    const row = sql`INSERT INTO ${proposals}
      (tenant, proposal, ${names})
      VALUES (${tenant}, ${proposal}, ${values})`;
    const insert = sql`inserted AS (${row}
      ON CONFLICT (tenant, proposal) DO NOTHING RETURNING tenant, proposal)`;
    const strictInsert = sql`inserted AS (${row} RETURNING tenant, proposal)`;
    if (parts.length === 0) return { ctes: insert, from: 'inserted', strict: strictInsert };
    // The sealed parts are written only with the proposal row; the count is the proposal's.
    const sealed = sql`sealed AS (INSERT INTO ${raw(`${q}.proposal_envelopes`)} (tenant, proposal, part, envelope)
        SELECT i.tenant, i.proposal, v.part, v.envelope
        FROM inserted i CROSS JOIN (VALUES ${joinSql(parts, ', ')}) AS v (part, envelope)`;
    return {
      ctes: sql`${insert},
      ${sealed}
        ON CONFLICT (tenant, proposal, part) DO UPDATE SET envelope = EXCLUDED.envelope)`,
      from: 'inserted',
      strict: sql`${strictInsert},
      ${sealed})`,
    };
  }
  // Compare-and-set as a conditional update: a concurrent writer holding the row makes us
  // wait, then PostgreSQL re-checks the condition on the row it committed. An update that
  // would change a sealed part matches no row either (and is refused).
  const { conditions, effects } = envelopeUpdate(q, tenant, proposal, r);
  const assignments = joinSql(
    columns.map(([name, value]) => sql`${raw(name)} = ${value}`),
    ', ',
  );
  const update = sql`UPDATE ${proposals} SET ${assignments}
    WHERE tenant = ${tenant} AND proposal = ${proposal}
    AND revision = ${change.expectedRevision} AND status = ${change.expectedStatus}
    ${joinSql(
      conditions.map((condition) => sql`AND ${condition}`),
      '\n    ',
    )}`;
  return {
    ctes: joinSql([sql`updated AS (${update} RETURNING tenant, proposal)`, ...effects], ',\n    '),
    from: 'updated',
  };
}

/**
 * A commit's writes, built before it is queued so the batch spends no time on JSON while it
 * holds the chain heads: for `onlyIfEffectUnlisted`, the check that the tenant holds no
 * proposal of the effect (one row when it holds none); then the proposal write, the claim
 * insert and one insert per evidence item, in that order.
 */
export function commitWrites(q: string, write: StoreCommit): WriteSql[] {
  const writes: WriteSql[] = [];
  const { tenant } = write;
  if (write.onlyIfEffectUnlisted === true && write.proposal !== undefined) {
    writes.push({
      ctes: sql`unlisted AS (SELECT 1 WHERE NOT EXISTS (SELECT 1 FROM ${raw(`${q}.proposals`)}
        WHERE tenant = ${tenant} AND effect_scope = ${write.proposal.record.effectScope}))`,
      from: 'unlisted',
    });
  }
  const proposal = proposalWrite(q, write);
  if (proposal !== undefined) writes.push(proposal);
  if (write.claim !== undefined) {
    const { effectScope, proposal, atMs } = write.claim;
    const row = sql`INSERT INTO ${raw(`${q}.effect_claims`)} (tenant, effect_scope, proposal, claimed_at_ms)
      VALUES (${tenant}, ${effectScope}, ${proposal}, ${atMs})`;
    writes.push({
      ctes: sql`claimed AS (${row}
      ON CONFLICT (tenant, effect_scope) DO NOTHING RETURNING 1)`,
      from: 'claimed',
      strict: sql`claimed AS (${row} RETURNING 1)`,
    });
  }
  for (const [index, item] of (write.evidence ?? []).entries()) {
    const stored = `stored_${index}`;
    const row = sql`INSERT INTO ${raw(`${q}.authority_evidence`)} (tenant, proposal, evidence_digest, record)
      VALUES (${tenant}, ${item.proposal}, ${item.evidenceDigest}, ${encodeJson(item)})`;
    writes.push({
      ctes: sql`${raw(stored)} AS (${row}
      ON CONFLICT (tenant, proposal, evidence_digest) DO NOTHING RETURNING 1)`,
      from: stored,
      strict: sql`${raw(stored)} AS (${row} RETURNING 1)`,
    });
  }
  return writes;
}

/** Locks the chain heads of `tenants` that exist, in PostgreSQL's tenant order. */
export function selectHeadsSql(q: string, tenants: readonly string[]): string {
  return `SELECT tenant, sequence, hash FROM ${q}.ledger_heads
    WHERE tenant IN (${tenants.map(literal).join(', ')}) ORDER BY tenant FOR UPDATE`;
}

/** Creates empty (sequence 0) chain heads for `tenants`, keeping any that exist. */
export function createHeadsSql(q: string, tenants: readonly string[]): string {
  const values = tenants.map((tenant) => `(${literal(tenant)}, 0, ${literal(GENESIS_HASH)})`);
  return `INSERT INTO ${q}.ledger_heads (tenant, sequence, hash)
    VALUES ${values.join(', ')} ON CONFLICT (tenant) DO NOTHING`;
}

/** One sealed event as a `VALUES` row of {@link appendAndMoveHeadsSql}. */
export function eventRowSql(event: LedgerEvent): string {
  return `(${literal(event.tenant)}, ${literal(event.sequence)}, ${literal(event.proposal)}, ${literal(event.hash)}, ${literal(encodeJson(event))})`;
}

/**
 * Appends sealed events given as {@link eventRowSql} rows and moves each tenant's head from
 * the value locked at the start (`was`) to `to`, in one statement (decision 131), asserting
 * after the write what sealing assumed: every head moved, each from the locked value.
 * Otherwise the division fails, and COMMIT with it. The append and the move touch different
 * tables, so one snapshot for both changes nothing.
 */
export function appendAndMoveHeadsSql(
  q: string,
  rows: readonly string[],
  moves: readonly { tenant: string; to: LedgerHead; was: LedgerHead }[],
): string {
  const values = moves.map(
    ({ tenant, to, was }) =>
      `(${literal(tenant)}, ${literal(to.sequence)}::bigint, ${literal(to.hash)}, ${literal(was.sequence)}::bigint)`,
  );
  return `WITH appended AS (
      INSERT INTO ${q}.ledger_events (tenant, sequence, proposal, hash, event) VALUES ${rows.join(',\n')}),
    moved AS (
      UPDATE ${q}.ledger_heads AS h SET sequence = v.sequence, hash = v.hash
      FROM (VALUES ${values.join(', ')}) AS v (tenant, sequence, hash, was)
      WHERE h.tenant = v.tenant AND h.sequence = v.was RETURNING 1)
    SELECT 1 / (CASE WHEN count(*) = ${moves.length} THEN 1 ELSE 0 END) FROM moved`;
}

/**
 * The append of a batch's sealed events and the move of every head they extend, from the head
 * locked at the start (`was`) to the last event, as one statement; nothing when the batch
 * sealed no event.
 */
export function appendAndMoveSql(
  q: string,
  events: readonly LedgerEvent[],
  was: ReadonlyMap<string, LedgerHead>,
): string[] {
  if (events.length === 0) return [];
  const last = new Map<string, LedgerHead>();
  for (const event of events)
    last.set(event.tenant, { sequence: event.sequence, hash: event.hash });
  const moves = [...last].map(([tenant, to]) => ({
    tenant,
    to,
    was: was.get(tenant) as LedgerHead,
  }));
  return [appendAndMoveHeadsSql(q, events.map(eventRowSql), moves)];
}

/**
 * Locks the chain heads of `heads`' tenants in PostgreSQL's tenant order (as
 * {@link selectHeadsSql}) and fails (division by zero) unless each is exactly as given.
 */
export function assertHeadsSql(q: string, heads: ReadonlyMap<string, LedgerHead>): string {
  const tenants = [...heads.keys()];
  const expected = [...heads].map(
    ([tenant, head]) =>
      `(${literal(tenant)}, ${literal(head.sequence)}::bigint, ${literal(head.hash)})`,
  );
  return `WITH locked AS (${selectHeadsSql(q, tenants)})
    SELECT 1 / (CASE WHEN count(*) FILTER (WHERE (tenant, sequence, hash) IN (${expected.join(', ')}))
      = ${tenants.length} THEN 1 ELSE 0 END) FROM locked`;
}

/**
 * One tenant's chain head for the one-round-trip batch, as a template it sends as a prepared
 * statement (decision 120). With events, it moves the head from `was` to the last event — the
 * update locks the row as `FOR UPDATE` would, so heads are still taken first — and appends the
 * events, failing (division by zero) unless the head was exactly `was` (decisions 131, 135:
 * one statement where locking, moving and appending were three). Without events, it only locks
 * and asserts the head (as {@link assertHeadsSql}).
 */
export function oneTenantHeadSql(
  q: string,
  tenant: string,
  was: LedgerHead,
  events: readonly LedgerEvent[],
): SqlTemplate {
  const heads = raw(`${q}.ledger_heads`);
  const last = events.at(-1);
  if (last === undefined) {
    return sql`WITH locked AS (SELECT sequence, hash FROM ${heads} WHERE tenant = ${tenant} FOR UPDATE)
    SELECT 1 / (CASE WHEN count(*) FILTER (WHERE sequence = ${was.sequence} AND hash = ${was.hash})
      = 1 THEN 1 ELSE 0 END) FROM locked`;
  }
  const rows = events.map(
    (event) =>
      sql`(${event.tenant}, ${event.sequence}, ${event.proposal}, ${event.hash}, ${encodeJson(event)})`,
  );
  return sql`WITH moved AS (UPDATE ${heads} SET sequence = ${last.sequence}, hash = ${last.hash}
        WHERE tenant = ${tenant} AND sequence = ${was.sequence} AND hash = ${was.hash} RETURNING 1),
      appended AS (INSERT INTO ${raw(`${q}.ledger_events`)} (tenant, sequence, proposal, hash, event)
        VALUES ${joinSql(rows, ', ')})
      SELECT 1 / (CASE WHEN count(*) = 1 THEN 1 ELSE 0 END) FROM moved`;
}

/**
 * A one-round-trip batch of one commit on one tenant as **one statement** (decision 135), sent
 * on its own so it runs as its own transaction (no `BEGIN`/`COMMIT`) and can travel with
 * protocol-level parameters: the head moved from `was` to the last event (as
 * {@link oneTenantHeadSql}), the commit's writes, the append of its events. It
 * fails (division by zero) unless the head was exactly `was` and every write touched exactly
 * one row; the counts are evaluated left to right, so the head's row is locked before any
 * write is made, as in the statement-per-step round trip. With `deferred`, `set_config` makes
 * the transaction's commit asynchronous (`SET LOCAL synchronous_commit = off`, decision 124).
 * `events` must not be empty.
 */
export function oneStatementCommitSql(
  q: string,
  tenant: string,
  was: LedgerHead,
  events: readonly LedgerEvent[],
  writes: readonly WriteSql[],
  deferred: boolean,
): SqlTemplate {
  const last = events.at(-1);
  if (last === undefined) {
    throw new StoreInvariantError(
      'assertion_failed',
      'Assertion failed: a one-statement commit without events',
    );
  }
  const rows = events.map(
    (event) =>
      sql`(${event.tenant}, ${event.sequence}, ${event.proposal}, ${event.hash}, ${encodeJson(event)})`,
  );
  const ctes = [
    sql`moved AS (UPDATE ${raw(`${q}.ledger_heads`)} SET sequence = ${last.sequence}, hash = ${last.hash}
      WHERE tenant = ${tenant} AND sequence = ${was.sequence} AND hash = ${was.hash} RETURNING 1)`,
    ...writes.map((write) => write.strict ?? write.ctes),
    sql`appended AS (INSERT INTO ${raw(`${q}.ledger_events`)} (tenant, sequence, proposal, hash, event)
      VALUES ${joinSql(rows, ', ')})`,
  ];
  const counts = ['moved', ...writes.map((write) => write.from)]
    .map((from) => `(SELECT count(*) FROM ${from}) = 1`)
    .join(' AND ');
  const level = deferred ? `, set_config('synchronous_commit', 'off', true)` : '';
  return sql`WITH ${joinSql(ctes, ',\n    ')}
    SELECT 1 / (CASE WHEN ${raw(counts)} THEN 1 ELSE 0 END)${raw(level)}`;
}

/** Parameterised statements: the rare commit paths, the reads and retention. */
export function parameterisedSql(q: string) {
  // A proposal's columns with its snapshot (kept apart, decision 025), for `FROM proposals p`.
  const columns = `p.tenant, p.proposal, p.revision, p.status, p.record,
    s.envelope AS snapshot, o.envelope AS output`;
  const from = `${q}.proposals p
    LEFT JOIN ${q}.proposal_envelopes s
      ON s.tenant = p.tenant AND s.proposal = p.proposal AND s.part = 'snapshot'
    LEFT JOIN ${q}.proposal_envelopes o
      ON o.tenant = p.tenant AND o.proposal = p.proposal AND o.part = 'output'`;
  const proposal = `${columns} FROM ${from}`;
  return {
    getProposal: `SELECT ${proposal} WHERE p.tenant = $1 AND p.proposal = $2`,
    lockClaim: `SELECT proposal, claimed_at_ms FROM ${q}.effect_claims
      WHERE tenant = $1 AND effect_scope = $2 FOR UPDATE`,
    passClaim: `UPDATE ${q}.effect_claims SET proposal = $3, claimed_at_ms = $4
      WHERE tenant = $1 AND effect_scope = $2`,
    ownerStatus: `SELECT status FROM ${q}.proposals WHERE tenant = $1 AND proposal = $2`,
    lockHead: `SELECT sequence, hash FROM ${q}.ledger_heads WHERE tenant = $1 FOR UPDATE`,
    listByEffect: `SELECT ${proposal} WHERE p.tenant = $1 AND p.effect_scope = $2
      ORDER BY p.created_at_ms DESC, p.proposal DESC LIMIT $3`,
    getClaim: `SELECT proposal, claimed_at_ms FROM ${q}.effect_claims
      WHERE tenant = $1 AND effect_scope = $2`,
    listEvidence: `SELECT tenant, proposal, evidence_digest, record FROM ${q}.authority_evidence
      WHERE tenant = $1 AND proposal = $2 ORDER BY position`,
    findEvidence: `SELECT record FROM ${q}.authority_evidence
      WHERE tenant = $1 AND proposal = $2 AND evidence_digest = $3`,
    listDue: `SELECT ${proposal} WHERE p.tenant = $1 AND p.due_at_ms IS NOT NULL
      AND p.due_at_ms <= $2 AND p.status = ANY($3::text[])
      ORDER BY p.due_at_ms, p.proposal LIMIT $4`,
    // Two texts rather than `($3 IS NULL OR proposal = $3)`, so each has one good plan when
    // prepared (a generic plan cannot know which branch a call takes).
    readLedger: `SELECT tenant, sequence, hash, event FROM ${q}.ledger_events
      WHERE tenant = $1 AND sequence > $2 ORDER BY sequence LIMIT $3`,
    readProposalLedger: `SELECT tenant, sequence, hash, event FROM ${q}.ledger_events
      WHERE tenant = $1 AND proposal = $3 AND sequence > $2 ORDER BY sequence LIMIT $4`,
    // One ordered index range per status (LATERAL), merged: each reads at most `limit` rows.
    listProposals: `SELECT l.tenant, l.proposal, l.revision, l.status, l.record, l.snapshot, l.output
      FROM unnest($1::text[]) AS wanted (status) CROSS JOIN LATERAL (
        SELECT ${columns}, p.expires_at_ms FROM ${from} WHERE p.status = wanted.status
          AND ($2::text IS NULL OR p.tenant = $2::text)
          AND ($3::text IS NULL OR p.action_type = $3::text)
          AND ($4::bigint IS NULL
            OR (p.expires_at_ms, p.tenant, p.proposal) > ($4::bigint, $5::text, $6::text))
        ORDER BY p.expires_at_ms, p.tenant, p.proposal LIMIT $7) AS l
      ORDER BY l.expires_at_ms, l.tenant, l.proposal LIMIT $7`,
    findEvent: `SELECT hash FROM ${q}.ledger_events WHERE tenant = $1 AND sequence = $2`,
    // The statement takes a transaction id, so its synchronous COMMIT writes a commit record
    // after every commit the head includes (deferred ones too) and flushes the WAL up to it: the
    // head answered is durable (decision 124). It writes no row, so it needs no write rights
    // and never waits for a batch holding the head's lock. One row always (the id is taken
    // even for an empty chain); `sequence` is null when the tenant has no head.
    ledgerHead: `SELECT h.sequence, h.hash FROM (SELECT txid_current()) AS flush
      LEFT JOIN ${q}.ledger_heads h ON h.tenant = $1 AND h.sequence > 0`,
    lastEventThrough: `SELECT sequence, hash FROM ${q}.ledger_events
      WHERE tenant = $1 AND sequence <= $2 ORDER BY sequence DESC LIMIT 1`,
    deleteEventsThrough: `DELETE FROM ${q}.ledger_events WHERE tenant = $1 AND sequence <= $2`,
    setCheckpoint: `UPDATE ${q}.ledger_heads SET checkpoint_sequence = $2, checkpoint_hash = $3
      WHERE tenant = $1`,
    checkpoint: `SELECT checkpoint_sequence, checkpoint_hash FROM ${q}.ledger_heads WHERE tenant = $1`,
  } as const;
}

/**
 * The name under which `text` is prepared on each connection: pg parses a named statement once
 * per connection, and PostgreSQL plans it without parsing again (decision 120).
 */
export function preparedName(text: string): string {
  return `sg_${createHash('sha256').update(text).digest('hex').slice(0, 32)}`;
}

/** The statements of {@link parameterisedSql}. */
export type PostgresStatements = ReturnType<typeof parameterisedSql>;
