/**
 * PostgreSQL for the bench: whether it answers, a throwaway schema, and the baseline the issue
 * compares the PostgreSQL store with — a bare single-row INSERT transaction (BEGIN; INSERT;
 * COMMIT), one connection per caller, on the same server in the same run.
 */
import pg from 'pg';
import { driveIds } from './stats.mjs';

export const POSTGRES_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** The URL with its password masked, for messages. */
export const postgresShown = () => POSTGRES_URL.replace(/:[^:@/]+@/, ':***@');

async function withClient(use) {
  const client = new pg.Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: 3_000 });
  client.on('error', () => undefined);
  await client.connect();
  try {
    return await use(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Resolves undefined when PostgreSQL answers, else the reason it does not. */
export async function postgresUnreachable() {
  try {
    await withClient((client) => client.query('SELECT 1'));
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

export function dropSchema(schema) {
  return withClient((client) => client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`));
}

/** The baseline's table: a text key (like a proposal id) and a small JSON payload. */
export function createBareTable(schema) {
  return withClient((client) =>
    client.query(
      `CREATE SCHEMA IF NOT EXISTS "${schema}";
       CREATE TABLE "${schema}".bare_inserts (
         id text PRIMARY KEY, tenant text NOT NULL, payload jsonb NOT NULL)`,
    ),
  );
}

/**
 * The baseline transaction on `client` (held for it, as a pool would): `BEGIN; INSERT` one row
 * `; COMMIT`. Also what `bench/pg-round-trips.mjs` compares with.
 */
export async function bareInsertTransaction(client, schema, id) {
  await client.query('BEGIN');
  await client.query(
    `INSERT INTO "${schema}".bare_inserts (id, tenant, payload) VALUES ($1, $2, $3)`,
    [id, 'bench-tenant', JSON.stringify({ effect: id })],
  );
  await client.query('COMMIT');
}

/** Worker side: `connections` clients, each one caller running insert transactions. */
export async function openBareInserts({ schema, connections }) {
  const clients = [];
  for (let index = 0; index < connections; index += 1) {
    const client = new pg.Client({ connectionString: POSTGRES_URL });
    client.on('error', () => undefined);
    await client.connect();
    clients.push(client);
  }
  return {
    measure(options) {
      if (options.concurrency > clients.length) {
        throw new Error(
          `bare inserts: ${options.concurrency} callers but ${clients.length} connections`,
        );
      }
      const idle = [...clients];
      return driveIds(options, async (id) => {
        // Each caller holds one connection for its transaction, as a pool would.
        const client = idle.pop();
        try {
          await bareInsertTransaction(client, schema, id);
          return true;
        } finally {
          idle.push(client);
        }
      });
    },
    close: () => Promise.all(clients.map((client) => client.end().catch(() => undefined))),
  };
}
