/**
 * The growth suite's big SQLite store, seeded once and cached under `bench/.tmp/growth/`, keyed
 * by the store's schema version and this seed's format. How it is built (decision 117):
 *
 * 1. a template: real actions through the guard (a contender process running `guard.run` at c64
 *    on a `synchronous=normal` file) on the measured tenant — real rows in every table;
 * 2. the measured tenant's own long history: the template's rows repeated with fresh proposal
 *    ids and effect scopes (`INSERT … SELECT`), and the template's events re-sealed onto the
 *    tenant's chain with the library's own `sealLedgerEvents` — one valid hash chain of ~6
 *    events per proposal, the long chain the ledger measurements read;
 * 3. every other tenant as a copy of the measured tenant's rows under its own tenant id, by
 *    bulk `INSERT … SELECT` in one transaction per tenant (the tenant inside the record and event
 *    JSON is rewritten too, so sizes and index keys are those of real rows; the copies' hashes
 *    are not recomputed, so only the measured tenant's chain verifies).
 *
 * Columns are read from the file itself; the schema-specific parts are the `proposal`,
 * `effect_scope`, `record`/`event` column names and the `ledger_events` / `ledger_heads` tables.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { sealLedgerEvents } from '../../../dist/core/ledger.js';
import { SQLITE_SCHEMA_VERSION } from '../../../dist/stores/sqlite/index.js';
import { encodeJson } from '../../../dist/stores/store-codec.js';
import { startContender } from './contenders.mjs';
import { TENANT } from './guard-load.mjs';

/** Bump when the seed's shape changes, so cached files of the old shape are not reused. */
const SEED_FORMAT = 2;
/** JSON columns whose text names the tenant. */
const JSON_COLUMNS = new Set(['record', 'event']);

/** Sizes; `--quick` builds a small store (its numbers say nothing about growth). */
export function seedSizes(quick) {
  return quick
    ? { templateActions: 300, ownProposals: 1_200, proposals: 6_000, batch: 300 }
    : { templateActions: 2_000, ownProposals: 40_000, proposals: 1_000_000, batch: 1_000 };
}

/** The cached file for these sizes and this schema. */
export function seedPath(tmpRoot, sizes) {
  const name = `growth-sqlite-schema${SQLITE_SCHEMA_VERSION}-seed${SEED_FORMAT}-${sizes.proposals}`;
  return join(tmpRoot, 'growth', `${name}.db`);
}

/** Step 1: the template, real actions through the guard, in batches, with progress. */
async function seedTemplate(path, sizes, log) {
  const writer = startContender({ kind: 'sqlite', path, synchronous: 'normal' });
  try {
    await writer.ready;
    let done = 0;
    const started = performance.now();
    while (done < sizes.templateActions) {
      const batch = Math.min(sizes.batch, sizes.templateActions - done);
      const result = await writer.measure({
        concurrency: 64,
        durationMs: 3_600_000,
        maxCalls: batch,
        label: `seed-${done}`,
      });
      if (result.failed > 0)
        throw new Error(
          `seeding: ${result.failed} actions failed ${JSON.stringify(result.errors)}`,
        );
      done += result.completed;
      const seconds = (performance.now() - started) / 1000;
      log(
        `growth seed: template ${done.toLocaleString('en')} / ${sizes.templateActions.toLocaleString('en')} actions of ${TENANT} through the guard (${Math.round(done / seconds)}/s)`,
      );
    }
  } finally {
    await writer.stop();
  }
}

/** Tables with a `tenant` column (and whether they have a `proposal` column). */
function tenantTables(db) {
  return db
    .prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`)
    .all()
    .map((row) => {
      const names = db
        .prepare(`PRAGMA table_info("${row.name}")`)
        .all()
        .map((column) => column.name);
      return {
        table: row.name,
        tenant: names.includes('tenant'),
        proposal: names.includes('proposal'),
      };
    })
    .filter((table) => table.tenant);
}

/** SQL for a template id with its last 6 characters replaced by the repetition (hex). */
const repeated = (column) => `substr(${column}, 1, length(${column}) - 6) || printf('%06x', @rep)`;
const repeatedId = (id, rep) => `${id.slice(0, -6)}${rep.toString(16).padStart(6, '0')}`;

/** `INSERT … SELECT` repeating the template's rows of `table` with fresh ids. */
function repeatStatement(db, table) {
  const columns = db.prepare(`PRAGMA table_info("${table}")`).all();
  const names = columns.map((column) => column.name);
  const keys = columns.filter((column) => column.pk > 0);
  const rowid = keys.length === 1 && keys[0].type.toUpperCase() === 'INTEGER' ? keys[0].name : null;
  const copied = names.filter((name) => name !== rowid);
  const values = copied.map((name) => {
    if (name === 'proposal' || name === 'effect_scope') return repeated(`"${name}"`);
    if (!JSON_COLUMNS.has(name)) return `"${name}"`;
    const ids = ['proposal', 'effect_scope'].filter((id) => names.includes(id));
    return ids.reduce(
      (text, id) => `replace(${text}, "${id}", ${repeated(`"${id}"`)})`,
      `"${name}"`,
    );
  });
  return db.prepare(
    `INSERT INTO "${table}" (${copied.map((name) => `"${name}"`).join(', ')})
     SELECT ${values.join(', ')} FROM "${table}"
     WHERE tenant = @tenant AND proposal IN (SELECT proposal FROM temp.seed_template)`,
  );
}

/** Step 2: the template repeated up to `ownProposals`, its events re-sealed onto the chain. */
function extendOwnHistory(path, sizes, log) {
  const db = new Database(path);
  try {
    db.pragma('synchronous = OFF');
    db.exec('CREATE TEMP TABLE seed_template (proposal TEXT PRIMARY KEY)');
    db.prepare(
      'INSERT INTO temp.seed_template SELECT proposal FROM proposals WHERE tenant = ?',
    ).run(TENANT);
    const template = db
      .prepare('SELECT event FROM ledger_events WHERE tenant = ? ORDER BY sequence')
      .all(TENANT)
      .map((row) => JSON.parse(row.event));
    const copies = tenantTables(db)
      .filter((table) => table.proposal && table.table !== 'ledger_events')
      .map((table) => repeatStatement(db, table.table));
    const insertEvent = db.prepare(
      'INSERT INTO ledger_events (tenant, sequence, proposal, hash, event) VALUES (?, ?, ?, ?, ?)',
    );
    const setHead = db.prepare('UPDATE ledger_heads SET sequence = ?, hash = ? WHERE tenant = ?');
    const getHead = db.prepare('SELECT sequence, hash FROM ledger_heads WHERE tenant = ?');
    const own = db.prepare('SELECT count(*) AS n FROM temp.seed_template').get().n;
    const reps = Math.ceil(sizes.ownProposals / own);
    for (let rep = 1; rep < reps; rep += 1) {
      db.transaction(() => {
        for (const copy of copies) copy.run({ tenant: TENANT, rep });
        const drafts = template.map(({ tenant, sequence, previousHash, hash, ...draft }) => ({
          ...draft,
          proposal: draft.proposal === null ? null : repeatedId(draft.proposal, rep),
        }));
        const events = sealLedgerEvents(TENANT, getHead.get(TENANT), drafts);
        for (const event of events)
          insertEvent.run(TENANT, event.sequence, event.proposal, event.hash, encodeJson(event));
        const last = events.at(-1);
        setHead.run(last.sequence, last.hash, TENANT);
      })();
      if (rep % 5 === 0 || rep === reps - 1) {
        db.pragma('wal_checkpoint(TRUNCATE)');
        log(
          `growth seed: ${TENANT} history ${((rep + 1) * own).toLocaleString('en')} proposals, chain re-sealed to ${getHead.get(TENANT).sequence.toLocaleString('en')} events`,
        );
      }
    }
  } finally {
    db.close();
  }
}

/** `INSERT … SELECT` copying one tenant's rows of `table` to `@to` (columns read from the file). */
function copyStatement(db, table) {
  const columns = db.prepare(`PRAGMA table_info("${table}")`).all();
  const keys = columns.filter((column) => column.pk > 0);
  // An INTEGER PRIMARY KEY alone is the rowid: let SQLite number the copies.
  const rowid = keys.length === 1 && keys[0].type.toUpperCase() === 'INTEGER' ? keys[0].name : null;
  const copied = columns.filter((column) => column.name !== rowid);
  const names = copied.map((column) => `"${column.name}"`).join(', ');
  const values = copied
    .map(({ name }) => {
      if (name === 'tenant') return '@to';
      if (JSON_COLUMNS.has(name)) return `replace("${name}", @fromJson, @toJson)`;
      return `"${name}"`;
    })
    .join(', ');
  return db.prepare(
    `INSERT INTO "${table}" (${names}) SELECT ${values} FROM "${table}" WHERE tenant = @from`,
  );
}

/** Step 2: copies of the measured tenant's rows under other tenants, up to `proposals`. */
function seedOtherTenants(path, sizes, log) {
  const db = new Database(path);
  try {
    db.pragma('synchronous = OFF');
    const tables = tenantTables(db).map((table) => table.table);
    const copies = tables.map((table) => copyStatement(db, table));
    const own = db.prepare('SELECT count(*) AS n FROM proposals WHERE tenant = ?').get(TENANT).n;
    const tenants = Math.ceil((sizes.proposals - own) / own);
    const started = performance.now();
    for (let index = 0; index < tenants; index += 1) {
      const to = `bench-other-${String(index).padStart(3, '0')}`;
      const parameters = {
        from: TENANT,
        to,
        fromJson: `"tenant":"${TENANT}"`,
        toJson: `"tenant":"${to}"`,
      };
      db.transaction(() => {
        for (const copy of copies) copy.run(parameters);
      })();
      db.pragma('wal_checkpoint(TRUNCATE)');
      const seconds = (performance.now() - started) / 1000;
      log(
        `growth seed: tenant ${index + 1} / ${tenants} copied (${((index + 2) * own).toLocaleString('en')} proposals, ${Math.round(seconds)} s)`,
      );
    }
    return { tables, tenants: tenants + 1 };
  } finally {
    db.close();
  }
}

/** What the seeded file holds, counted (one pass over each table). */
export function countRows(path) {
  // Read-write, so closing it removes the -wal and -shm files before the rename.
  const db = new Database(path);
  try {
    const count = (sql) => db.prepare(sql).get().n;
    return {
      proposals: count('SELECT count(*) AS n FROM proposals'),
      ledgerEvents: count('SELECT count(*) AS n FROM ledger_events'),
      tenants: count('SELECT count(*) AS n FROM ledger_heads'),
      measuredTenantEvents: db
        .prepare('SELECT sequence AS n FROM ledger_heads WHERE tenant = ?')
        .get(TENANT).n,
    };
  } finally {
    db.close();
  }
}

/**
 * The seeded store for `sizes`: reused when cached, else built under a temporary name and
 * renamed when complete (an interrupted seed is never mistaken for a finished one).
 */
export async function seededStore(tmpRoot, sizes, log) {
  const path = seedPath(tmpRoot, sizes);
  const metaPath = `${path}.json`;
  if (existsSync(path) && existsSync(metaPath)) {
    log(`growth seed: reusing ${path}`);
    return { path, cached: true, seed: JSON.parse(readFileSync(metaPath, 'utf8')) };
  }
  mkdirSync(join(tmpRoot, 'growth'), { recursive: true });
  const building = `${path}.building`;
  for (const suffix of ['', '-wal', '-shm']) rmSync(`${building}${suffix}`, { force: true });
  const started = performance.now();
  await seedTemplate(building, sizes, log);
  extendOwnHistory(building, sizes, log);
  const { tables } = seedOtherTenants(building, sizes, log);
  const seed = {
    builtAt: new Date().toISOString(),
    seconds: Math.round((performance.now() - started) / 1000),
    schemaVersion: SQLITE_SCHEMA_VERSION,
    seedFormat: SEED_FORMAT,
    copiedTables: tables,
    ...countRows(building),
  };
  renameSync(building, path);
  writeFileSync(metaPath, `${JSON.stringify(seed, null, 2)}\n`);
  log(`growth seed: ${JSON.stringify(seed)}`);
  return { path, cached: false, seed };
}
