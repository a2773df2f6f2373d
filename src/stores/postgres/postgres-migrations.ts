/**
 * The PostgreSQL store's schema, as numbered migrations recorded in `<schema>.schema_migrations`,
 * applied under an advisory lock so several processes starting at once migrate exactly once.
 */
import type pg from 'pg';
import { ConfigurationError } from '../../core/errors.js';
import type { ProposalRecord } from '../../core/store.js';
import { encodeJson } from '../store-codec.js';
import { EnvelopePart, envelopeTexts, recordWithoutEnvelopes } from '../store-envelopes.js';

/** One schema step; `sql` receives the quoted schema name. */
export interface PostgresMigration {
  readonly version: number;
  readonly name: string;
  readonly sql: (schema: string) => string;
  /** Moves existing data after `sql` ran, in the same transaction. */
  readonly run?: (client: pg.ClientBase, schema: string) => Promise<void>;
}

/** The maintenance flag: old row versions of `proposals` may still hold envelopes. */
export const OLD_ENVELOPES_FLAG = 'proposals_may_hold_erased_envelopes';

const MOVE_BATCH = 500;

/**
 * Version 2 keeps the sealed parts out of the record JSON (decision 025): records that hold a
 * snapshot or an output get them moved to `proposal_envelopes` and are rewritten without them,
 * in batches. The rewritten rows' old versions still hold the envelopes until `VACUUM FULL`, so
 * a flag asks `purgeErased()` to rewrite `proposals` once too.
 */
async function moveEnvelopesApart(client: pg.ClientBase, q: string): Promise<void> {
  let after: [string, string] = ['', ''];
  let moved = 0;
  for (;;) {
    const batch = await client.query<{ tenant: string; proposal: string; record: string }>(
      `SELECT tenant, proposal, record FROM ${q}.proposals
       WHERE (tenant, proposal) > ($1, $2) AND (
         coalesce(record::jsonb -> 'snapshot', 'null'::jsonb) <> 'null'::jsonb
         OR coalesce(record::jsonb -> 'output', 'null'::jsonb) <> 'null'::jsonb)
       ORDER BY tenant, proposal LIMIT ${MOVE_BATCH}`,
      after,
    );
    const last = batch.rows.at(-1);
    if (last === undefined) break;
    const parts: { tenant: string; proposal: string; part: string; envelope: string }[] = [];
    for (const row of batch.rows) {
      const texts = envelopeTexts(JSON.parse(row.record) as ProposalRecord);
      for (const part of Object.values(EnvelopePart)) {
        const envelope = texts[part];
        if (envelope !== null)
          parts.push({ tenant: row.tenant, proposal: row.proposal, part, envelope });
      }
    }
    await client.query(
      `INSERT INTO ${q}.proposal_envelopes (tenant, proposal, part, envelope)
       SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[])`,
      [
        parts.map((part) => part.tenant),
        parts.map((part) => part.proposal),
        parts.map((part) => part.part),
        parts.map((part) => part.envelope),
      ],
    );
    await client.query(
      `UPDATE ${q}.proposals p SET record = v.record
       FROM unnest($1::text[], $2::text[], $3::text[]) AS v (tenant, proposal, record)
       WHERE p.tenant = v.tenant AND p.proposal = v.proposal`,
      [
        batch.rows.map((row) => row.tenant),
        batch.rows.map((row) => row.proposal),
        batch.rows.map((row) =>
          encodeJson(recordWithoutEnvelopes(JSON.parse(row.record) as ProposalRecord)),
        ),
      ],
    );
    moved += batch.rows.length;
    after = [last.tenant, last.proposal];
  }
  if (moved > 0) {
    await client.query(
      `INSERT INTO ${q}.maintenance (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING`,
      [OLD_ENVELOPES_FLAG, `${moved} records rewritten by schema version 2`],
    );
  }
}

/** Every migration, oldest first. Text keys use `COLLATE "C"`: code point order, like SQLite. */
export const POSTGRES_MIGRATIONS: readonly PostgresMigration[] = [
  {
    version: 1,
    name: 'proposals, effect claims, evidence, ledger',
    sql: (s) => `
      CREATE TABLE ${s}.proposals (
        tenant text COLLATE "C" NOT NULL,
        proposal text COLLATE "C" NOT NULL,
        revision integer NOT NULL,
        status text NOT NULL,
        effect_scope text COLLATE "C" NOT NULL,
        created_at_ms bigint NOT NULL,
        due_at_ms bigint,
        record text NOT NULL,
        PRIMARY KEY (tenant, proposal)
      );
      CREATE INDEX proposals_by_effect
        ON ${s}.proposals (tenant, effect_scope, created_at_ms DESC, proposal DESC);
      CREATE INDEX proposals_by_due
        ON ${s}.proposals (tenant, due_at_ms, proposal) WHERE due_at_ms IS NOT NULL;

      -- The semantic-effect claim (I1): one row per tenant and effect scope, enforced by the key.
      CREATE TABLE ${s}.effect_claims (
        tenant text COLLATE "C" NOT NULL,
        effect_scope text COLLATE "C" NOT NULL,
        proposal text COLLATE "C" NOT NULL,
        claimed_at_ms bigint NOT NULL,
        PRIMARY KEY (tenant, effect_scope)
      );

      CREATE TABLE ${s}.authority_evidence (
        position bigserial PRIMARY KEY,
        tenant text COLLATE "C" NOT NULL,
        proposal text COLLATE "C" NOT NULL,
        evidence_digest text COLLATE "C" NOT NULL,
        record text NOT NULL,
        UNIQUE (tenant, proposal, evidence_digest)
      );

      CREATE TABLE ${s}.ledger_events (
        tenant text COLLATE "C" NOT NULL,
        sequence bigint NOT NULL,
        proposal text COLLATE "C",
        hash text NOT NULL,
        event text NOT NULL,
        PRIMARY KEY (tenant, sequence)
      );
      CREATE INDEX ledger_events_by_proposal ON ${s}.ledger_events (tenant, proposal, sequence);

      -- The per-tenant chain head, locked (FOR UPDATE) by every commit that seals events.
      CREATE TABLE ${s}.ledger_heads (
        tenant text COLLATE "C" PRIMARY KEY,
        sequence bigint NOT NULL,
        hash text NOT NULL,
        checkpoint_sequence bigint,
        checkpoint_hash text
      );
    `,
  },
  {
    version: 2,
    name: 'sealed snapshots and outputs apart from the record, deleted on erasure',
    sql: (s) => `
      -- One row per sealed part (snapshot, output), never rewritten by an update of the
      -- record, deleted on erasure (decision 025).
      CREATE TABLE ${s}.proposal_envelopes (
        tenant text COLLATE "C" NOT NULL,
        proposal text COLLATE "C" NOT NULL,
        part text COLLATE "C" NOT NULL,
        envelope text NOT NULL,
        PRIMARY KEY (tenant, proposal, part)
      );
      -- Flags for maintenance that is due (e.g. old row versions to rewrite once).
      CREATE TABLE ${s}.maintenance (
        name text PRIMARY KEY,
        value text NOT NULL
      );
    `,
    run: moveEnvelopesApart,
  },
  {
    version: 3,
    name: 'proposals listed by status and expiry',
    sql: (s) => `
      ALTER TABLE ${s}.proposals ADD COLUMN expires_at_ms bigint,
        ADD COLUMN action_type text COLLATE "C";
      UPDATE ${s}.proposals SET expires_at_ms = (record::jsonb ->> 'expiresAtMs')::bigint,
        action_type = record::jsonb ->> 'actionType';
      ALTER TABLE ${s}.proposals ALTER COLUMN expires_at_ms SET NOT NULL,
        ALTER COLUMN action_type SET NOT NULL;
      CREATE INDEX proposals_by_status_expiry
        ON ${s}.proposals (status, expires_at_ms, tenant, proposal);
    `,
  },
];

/** The schema version this code writes and reads. */
export const POSTGRES_SCHEMA_VERSION: number = POSTGRES_MIGRATIONS.length;

/** Validates a schema name and returns it quoted for SQL. */
export function quoteSchema(schema: string): string {
  if (!/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(schema)) {
    throw new ConfigurationError(
      'store_schema_name_invalid',
      `PostgreSQL schema name ${JSON.stringify(schema)} is not allowed: use letters, digits and underscores (at most 63, not starting with a digit).`,
    );
  }
  return `"${schema}"`;
}

async function storedVersion(client: pg.ClientBase, schema: string): Promise<number | undefined> {
  const exists = await client.query<{ present: string | null }>(
    'SELECT to_regclass($1) AS present',
    [`${quoteSchema(schema)}.schema_migrations`],
  );
  if (exists.rows[0]?.present == null) return undefined;
  const result = await client.query<{ version: number | null }>(
    `SELECT max(version) AS version FROM ${quoteSchema(schema)}.schema_migrations`,
  );
  return result.rows[0]?.version ?? 0;
}

function refuseNewer(where: string, version: number): never {
  throw new ConfigurationError(
    'store_schema_newer',
    `${where} has schema version ${version}, but this version of Sideguard supports up to ${POSTGRES_SCHEMA_VERSION}. Upgrade sideguard to use it; nothing was changed.`,
    { data: { storedVersion: version, supportedVersion: POSTGRES_SCHEMA_VERSION } },
  );
}

/**
 * Brings `schema` up to {@link POSTGRES_SCHEMA_VERSION}. Holds a transaction-scoped advisory
 * lock named after the schema while it checks and migrates, so concurrent callers serialise.
 * @throws ConfigurationError `store_schema_newer` when the schema was written by a newer version.
 */
export async function migratePostgres(
  client: pg.ClientBase,
  schema: string,
  where: string,
): Promise<void> {
  const q = quoteSchema(schema);
  const before = await storedVersion(client, schema);
  if (before !== undefined && before > POSTGRES_SCHEMA_VERSION) refuseNewer(where, before);
  if (before === POSTGRES_SCHEMA_VERSION) return;
  await client.query('BEGIN');
  try {
    // A migration may rewrite a large table; no statement timeout cuts it off half way.
    await client.query('SET LOCAL statement_timeout = 0');
    await client.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [
      `sideguard.migrate.${schema}`,
    ]);
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${q}`);
    await client.query(
      `CREATE TABLE IF NOT EXISTS ${q}.schema_migrations (
         version integer PRIMARY KEY,
         name text NOT NULL,
         applied_at timestamptz NOT NULL DEFAULT now()
       )`,
    );
    const current = (await storedVersion(client, schema)) ?? 0;
    if (current > POSTGRES_SCHEMA_VERSION) refuseNewer(where, current);
    for (const migration of POSTGRES_MIGRATIONS) {
      if (migration.version <= current) continue;
      await client.query(migration.sql(q));
      await migration.run?.(client, q);
      await client.query(`INSERT INTO ${q}.schema_migrations (version, name) VALUES ($1, $2)`, [
        migration.version,
        migration.name,
      ]);
    }
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}
