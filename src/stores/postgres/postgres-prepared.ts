/**
 * SQL-level prepared statements for the one-round-trip batch (decision 120): a multi-statement
 * round trip cannot use the extended protocol, but it can `EXECUTE` statements the connection
 * prepared earlier, so PostgreSQL does not parse and plan the batch's writes on every commit.
 */
import type pg from 'pg';
import { isConnectionError } from './postgres-errors.js';
import { preparedName } from './postgres-sql.js';
import { executeSql, inlined, numbered, type SqlTemplate } from './postgres-sql-template.js';

/** A statement of a round trip: fixed text, or a template to send inlined or prepared. */
export type RoundTripStatement = string | SqlTemplate;

/** Renders round trips for connections, preparing templates on each connection once. */
export interface PreparedStatements {
  /**
   * The round trip's text for `client`: templates as `EXECUTE` of statements prepared on this
   * connection (preparing the missing ones first, one round trip each, outside any
   * transaction), or inlined when preparing is off or PostgreSQL refused to prepare one.
   * @throws the driver's error when the connection is lost while preparing.
   */
  render(client: pg.PoolClient, statements: readonly RoundTripStatement[]): Promise<string>;
  /** Forgets what `client` prepared (after PostgreSQL said a prepared statement is missing). */
  forget(client: pg.PoolClient): void;
}

/** Creates the renderer; `enabled: false` always inlines (see `preparedStatements`). */
export function createPreparedStatements(enabled: boolean): PreparedStatements {
  const preparedOn = new WeakMap<pg.PoolClient, Set<string>>();
  /** Texts PostgreSQL refused to prepare (e.g. a parameter whose type it cannot infer). */
  const refused = new Set<string>();

  const prepare = async (client: pg.PoolClient, template: SqlTemplate): Promise<string> => {
    const text = numbered(template);
    if (!enabled || refused.has(text)) return inlined(template);
    const name = preparedName(text);
    let names = preparedOn.get(client);
    if (names === undefined) {
      names = new Set();
      preparedOn.set(client, names);
    }
    if (!names.has(name)) {
      try {
        await client.query(`PREPARE ${name} AS ${text}`);
      } catch (error) {
        if (isConnectionError(error)) throw error;
        // Prepared already (a statement lost track of), or not preparable: never lose a
        // commit over it.
        if ((error as { code?: unknown }).code !== '42P05') {
          refused.add(text);
          return inlined(template);
        }
      }
      names.add(name);
    }
    return executeSql(name, template);
  };

  return {
    async render(client, statements) {
      const texts: string[] = [];
      for (const statement of statements) {
        texts.push(typeof statement === 'string' ? statement : await prepare(client, statement));
      }
      return texts.join(';\n');
    },
    forget(client) {
      preparedOn.delete(client);
    },
  };
}
