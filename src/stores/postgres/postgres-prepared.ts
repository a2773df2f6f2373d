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
   * Prepares on `client` the templates it has not prepared yet, one round trip each. Only
   * outside a transaction: a refused `PREPARE` would abort one.
   * @throws the driver's error when the connection is lost while preparing.
   */
  prepare(client: pg.PoolClient, statements: readonly RoundTripStatement[]): Promise<void>;
  /**
   * The round trip's text for `client`: templates as `EXECUTE` of statements this connection
   * has prepared, the others inlined (always, when preparing is off).
   */
  render(client: pg.PoolClient, statements: readonly RoundTripStatement[]): string;
  /** Forgets what `client` prepared (after PostgreSQL said a prepared statement is missing). */
  forget(client: pg.PoolClient): void;
}

/** Numbered texts whose prepared name is remembered at most (the texts of a store are few). */
const MAX_REMEMBERED_TEXTS = 1_000;

/** Creates the renderer; `enabled: false` always inlines (see `preparedStatements`). */
export function createPreparedStatements(enabled: boolean): PreparedStatements {
  const preparedOn = new WeakMap<pg.PoolClient, Set<string>>();
  /** Texts PostgreSQL refused to prepare (e.g. a parameter whose type it cannot infer). */
  const refused = new Set<string>();

  /** Each template's numbered text and name, computed once (prepare and render both ask). */
  const identities = new WeakMap<SqlTemplate, { readonly text: string; readonly name: string }>();
  /**
   * The name of each numbered text seen: every commit builds its templates afresh, but their
   * texts repeat, so the hash is taken once per text (decision 131). Bounded; starts over.
   */
  const nameOfText = new Map<string, string>();
  const identify = (template: SqlTemplate) => {
    let identity = identities.get(template);
    if (identity === undefined) {
      const text = numbered(template);
      let name = nameOfText.get(text);
      if (name === undefined) {
        if (nameOfText.size >= MAX_REMEMBERED_TEXTS) nameOfText.clear();
        name = preparedName(text);
        nameOfText.set(text, name);
      }
      identity = { text, name };
      identities.set(template, identity);
    }
    return identity;
  };

  const namesOf = (client: pg.PoolClient): Set<string> => {
    let names = preparedOn.get(client);
    if (names === undefined) {
      names = new Set();
      preparedOn.set(client, names);
    }
    return names;
  };

  /** Whether `template` still needs a `PREPARE` on `client` (checked without awaiting). */
  const missing = (client: pg.PoolClient, template: SqlTemplate): boolean => {
    const { text, name } = identify(template);
    return !refused.has(text) && preparedOn.get(client)?.has(name) !== true;
  };

  const prepareOne = async (client: pg.PoolClient, template: SqlTemplate): Promise<void> => {
    const { text, name } = identify(template);
    const names = namesOf(client);
    if (refused.has(text) || names.has(name)) return;
    try {
      await client.query(`PREPARE ${name} AS ${text}`);
    } catch (error) {
      if (isConnectionError(error)) throw error;
      // Prepared already (a statement we lost track of), or not preparable: the text goes
      // with literals instead, never costing a commit.
      if ((error as { code?: unknown }).code !== '42P05') {
        refused.add(text);
        return;
      }
    }
    names.add(name);
  };

  const renderOne = (client: pg.PoolClient, statement: RoundTripStatement): string => {
    if (typeof statement === 'string') return statement;
    if (!enabled) return inlined(statement);
    const { name } = identify(statement);
    return preparedOn.get(client)?.has(name) === true
      ? executeSql(name, statement)
      : inlined(statement);
  };

  return {
    async prepare(client, statements) {
      if (!enabled) return;
      for (const statement of statements) {
        if (typeof statement !== 'string' && missing(client, statement)) {
          await prepareOne(client, statement);
        }
      }
    },
    render(client, statements) {
      return statements.map((statement) => renderOne(client, statement)).join(';\n');
    },
    forget(client) {
      preparedOn.delete(client);
    },
  };
}
