/**
 * The SQLite store's schema, as numbered migrations recorded in `sideguard_schema_migrations`.
 * Opening a file whose recorded version is newer than this code knows is refused.
 */
import type Database from 'better-sqlite3';
import { ConfigurationError } from '../../core/errors.js';
import type { ProposalRecord } from '../../core/store.js';
import { encodeJson } from '../store-codec.js';
import { EnvelopePart, envelopeTexts, recordWithoutEnvelopes } from '../store-envelopes.js';

/** One schema step. Versions are consecutive from 1 and never edited once released. */
export interface SqliteMigration {
  readonly version: number;
  readonly name: string;
  readonly sql: string;
  /** Moves existing data after `sql` ran, in the same transaction. */
  readonly run?: (db: Database.Database) => void;
}

/**
 * The maintenance flag: the file was written before snapshots were kept apart, so its free
 * space may hold old record bytes (page splits before `secure_delete`); one VACUUM clears it.
 */
export const REWRITE_FLAG = 'file_may_hold_old_records';

const MOVE_BATCH = 500;

/**
 * Version 2 keeps the sealed parts out of the record JSON (decision 025): every stored record
 * that holds a snapshot or an output gets them moved to `proposal_envelopes` and is rewritten
 * without them, in batches; then the file is flagged for one VACUUM (see {@link REWRITE_FLAG}).
 */
function moveEnvelopesApart(db: Database.Database): void {
  const batch = db.prepare<[string, string], { tenant: string; proposal: string; record: string }>(
    `SELECT tenant, proposal, record FROM proposals WHERE (tenant, proposal) > (?, ?)
     ORDER BY tenant, proposal LIMIT ${MOVE_BATCH}`,
  );
  const insert = db.prepare(
    'INSERT INTO proposal_envelopes (tenant, proposal, part, envelope) VALUES (?, ?, ?, ?)',
  );
  const rewrite = db.prepare('UPDATE proposals SET record = ? WHERE tenant = ? AND proposal = ?');
  let rows = batch.all('', '');
  let moved = 0;
  while (rows.length > 0) {
    for (const row of rows) {
      const record = JSON.parse(row.record) as ProposalRecord;
      const texts = envelopeTexts(record);
      if (texts.snapshot === null && texts.output === null) continue;
      for (const part of Object.values(EnvelopePart)) {
        const text = texts[part];
        if (text !== null) insert.run(row.tenant, row.proposal, part, text);
      }
      rewrite.run(encodeJson(recordWithoutEnvelopes(record)), row.tenant, row.proposal);
      moved += 1;
    }
    const last = rows.at(-1) as { tenant: string; proposal: string };
    rows = batch.all(last.tenant, last.proposal);
  }
  if (moved > 0) {
    db.prepare('INSERT OR IGNORE INTO sideguard_maintenance (name, value) VALUES (?, ?)').run(
      REWRITE_FLAG,
      `${moved} records rewritten by schema version 2`,
    );
  }
}

/** Every migration, oldest first. */
export const SQLITE_MIGRATIONS: readonly SqliteMigration[] = [
  {
    version: 1,
    name: 'proposals, effect claims, evidence, ledger',
    sql: `
      CREATE TABLE proposals (
        tenant TEXT NOT NULL,
        proposal TEXT NOT NULL,
        revision INTEGER NOT NULL,
        status TEXT NOT NULL,
        effect_scope TEXT NOT NULL,
        created_at_ms INTEGER NOT NULL,
        due_at_ms INTEGER,
        record TEXT NOT NULL,
        PRIMARY KEY (tenant, proposal)
      ) WITHOUT ROWID;
      CREATE INDEX proposals_by_effect
        ON proposals (tenant, effect_scope, created_at_ms DESC, proposal DESC);
      CREATE INDEX proposals_by_due
        ON proposals (tenant, due_at_ms, proposal) WHERE due_at_ms IS NOT NULL;

      CREATE TABLE effect_claims (
        tenant TEXT NOT NULL,
        effect_scope TEXT NOT NULL,
        proposal TEXT NOT NULL,
        claimed_at_ms INTEGER NOT NULL,
        PRIMARY KEY (tenant, effect_scope)
      ) WITHOUT ROWID;

      CREATE TABLE authority_evidence (
        position INTEGER PRIMARY KEY AUTOINCREMENT,
        tenant TEXT NOT NULL,
        proposal TEXT NOT NULL,
        evidence_digest TEXT NOT NULL,
        record TEXT NOT NULL,
        UNIQUE (tenant, proposal, evidence_digest)
      );

      CREATE TABLE ledger_events (
        tenant TEXT NOT NULL,
        sequence INTEGER NOT NULL,
        proposal TEXT,
        hash TEXT NOT NULL,
        event TEXT NOT NULL,
        PRIMARY KEY (tenant, sequence)
      ) WITHOUT ROWID;
      CREATE INDEX ledger_events_by_proposal ON ledger_events (tenant, proposal, sequence);

      CREATE TABLE ledger_heads (
        tenant TEXT PRIMARY KEY,
        sequence INTEGER NOT NULL,
        hash TEXT NOT NULL,
        checkpoint_sequence INTEGER,
        checkpoint_hash TEXT
      ) WITHOUT ROWID;
    `,
  },
  {
    version: 2,
    name: 'sealed snapshots and outputs apart from the record, deleted on erasure',
    sql: `
      CREATE TABLE proposal_envelopes (
        tenant TEXT NOT NULL,
        proposal TEXT NOT NULL,
        part TEXT NOT NULL,
        envelope TEXT NOT NULL,
        PRIMARY KEY (tenant, proposal, part)
      );
      CREATE TABLE sideguard_maintenance (
        name TEXT PRIMARY KEY,
        value TEXT NOT NULL
      ) WITHOUT ROWID;
    `,
    run: moveEnvelopesApart,
  },
  {
    version: 3,
    name: 'proposals listed by status and expiry',
    sql: `
      ALTER TABLE proposals ADD COLUMN expires_at_ms INTEGER;
      ALTER TABLE proposals ADD COLUMN action_type TEXT;
      UPDATE proposals SET expires_at_ms = json_extract(record, '$.expiresAtMs'),
        action_type = json_extract(record, '$.actionType');
      CREATE INDEX proposals_by_status_expiry
        ON proposals (status, expires_at_ms, tenant, proposal);
    `,
  },
  {
    // Decision 127. In a WITHOUT ROWID table every interior cell holds a whole row and a key
    // lookup reads a cell's overflow pages to compare it: a proposal record (~1.2 kB) overflows
    // a 4 KiB page's 1,002-byte limit, so each lookup read several overflow pages from the file,
    // and events (~0.5 kB) left interior pages a fanout of ~7. As rowid tables the rows sit in
    // leaves only; a narrow unique index finds them, and appended events split a page cheaply.
    version: 4,
    name: 'proposals and ledger events as rowid tables with unique indexes',
    sql: `
      CREATE TABLE proposals_v4 (
        tenant TEXT NOT NULL,
        proposal TEXT NOT NULL,
        revision INTEGER NOT NULL,
        status TEXT NOT NULL,
        effect_scope TEXT NOT NULL,
        created_at_ms INTEGER NOT NULL,
        due_at_ms INTEGER,
        expires_at_ms INTEGER,
        action_type TEXT,
        record TEXT NOT NULL
      );
      INSERT INTO proposals_v4 (tenant, proposal, revision, status, effect_scope, created_at_ms,
          due_at_ms, expires_at_ms, action_type, record)
        SELECT tenant, proposal, revision, status, effect_scope, created_at_ms, due_at_ms,
          expires_at_ms, action_type, record
        FROM proposals ORDER BY created_at_ms, tenant, proposal;
      DROP TABLE proposals;
      ALTER TABLE proposals_v4 RENAME TO proposals;
      CREATE UNIQUE INDEX proposals_by_id ON proposals (tenant, proposal);
      CREATE INDEX proposals_by_effect
        ON proposals (tenant, effect_scope, created_at_ms DESC, proposal DESC);
      CREATE INDEX proposals_by_due
        ON proposals (tenant, due_at_ms, proposal) WHERE due_at_ms IS NOT NULL;
      CREATE INDEX proposals_by_status_expiry
        ON proposals (status, expires_at_ms, tenant, proposal);

      CREATE TABLE ledger_events_v4 (
        tenant TEXT NOT NULL,
        sequence INTEGER NOT NULL,
        proposal TEXT,
        hash TEXT NOT NULL,
        event TEXT NOT NULL
      );
      INSERT INTO ledger_events_v4 (tenant, sequence, proposal, hash, event)
        SELECT tenant, sequence, proposal, hash, event FROM ledger_events ORDER BY tenant, sequence;
      DROP TABLE ledger_events;
      ALTER TABLE ledger_events_v4 RENAME TO ledger_events;
      CREATE UNIQUE INDEX ledger_events_by_sequence ON ledger_events (tenant, sequence);
      CREATE INDEX ledger_events_by_proposal ON ledger_events (tenant, proposal, sequence);
    `,
  },
];

/** The schema version this code writes and reads. */
export const SQLITE_SCHEMA_VERSION: number = SQLITE_MIGRATIONS.length;

const MIGRATIONS_TABLE = 'sideguard_schema_migrations';

function storedVersion(db: Database.Database): number | undefined {
  const table = db
    .prepare(`SELECT 1 AS present FROM sqlite_master WHERE type = 'table' AND name = ?`)
    .get(MIGRATIONS_TABLE);
  if (table === undefined) return undefined;
  const row = db.prepare(`SELECT max(version) AS version FROM ${MIGRATIONS_TABLE}`).get() as {
    version: number | null;
  };
  return row.version ?? 0;
}

function refuseNewer(path: string, version: number): never {
  throw new ConfigurationError(
    'store_schema_newer',
    `SQLite database ${path} has schema version ${version}, but this version of Sideguard supports up to ${SQLITE_SCHEMA_VERSION}. Upgrade sideguard to open it; the file was left untouched.`,
    { data: { path, storedVersion: version, supportedVersion: SQLITE_SCHEMA_VERSION } },
  );
}

/**
 * Brings the schema up to {@link SQLITE_SCHEMA_VERSION} inside one immediate transaction, so
 * several processes opening the same file at once migrate it exactly once. Returns whether it
 * applied any migration.
 * @throws ConfigurationError `store_schema_newer` when the file was written by a newer schema.
 */
export function migrateSqlite(db: Database.Database, path: string, nowMs: number): boolean {
  const before = storedVersion(db);
  if (before !== undefined && before > SQLITE_SCHEMA_VERSION) refuseNewer(path, before);
  if (before === SQLITE_SCHEMA_VERSION) return false;
  let applied = false;
  db.transaction(() => {
    db.exec(
      `CREATE TABLE IF NOT EXISTS ${MIGRATIONS_TABLE} (
         version INTEGER PRIMARY KEY,
         name TEXT NOT NULL,
         applied_at_ms INTEGER NOT NULL
       )`,
    );
    const current = storedVersion(db) ?? 0;
    if (current > SQLITE_SCHEMA_VERSION) refuseNewer(path, current);
    const record = db.prepare(
      `INSERT INTO ${MIGRATIONS_TABLE} (version, name, applied_at_ms) VALUES (?, ?, ?)`,
    );
    for (const migration of SQLITE_MIGRATIONS) {
      if (migration.version <= current) continue;
      db.exec(migration.sql);
      migration.run?.(db);
      record.run(migration.version, migration.name, nowMs);
      applied = true;
    }
  }).immediate();
  return applied;
}
