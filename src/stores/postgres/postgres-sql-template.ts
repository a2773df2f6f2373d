/**
 * SQL text with its values kept apart, so one statement can go either as text with literals
 * (the simple query protocol, several statements per round trip, decision 024) or as
 * `EXECUTE name(…)` of a statement prepared once per connection (decision 120). Pure text.
 */
import { StoreInvariantError } from '../../core/errors.js';

/** A value of a statement: text, a whole number, or NULL. */
export type SqlValue = string | number | null;

/** SQL text around its values: `parts` has one element more than `values`. */
export interface SqlTemplate {
  readonly parts: readonly string[];
  readonly values: readonly SqlValue[];
}

/** Text spliced into a template as it is (a quoted schema, a keyword, a fixed name). */
export interface RawSql {
  readonly raw: string;
}

/** Marks `text` as SQL to splice as it is. Never pass a value here. */
export function raw(text: string): RawSql {
  return { raw: text };
}

const isTemplate = (arg: unknown): arg is SqlTemplate =>
  typeof arg === 'object' && arg !== null && 'parts' in arg;
const isRaw = (arg: unknown): arg is RawSql =>
  typeof arg === 'object' && arg !== null && 'raw' in arg;

/**
 * Tag for SQL templates: `${value}` is a value, `${raw(text)}` and `${template}` are spliced.
 */
export function sql(
  strings: TemplateStringsArray,
  ...args: readonly (SqlValue | SqlTemplate | RawSql)[]
): SqlTemplate {
  const parts: string[] = [strings[0] as string];
  const values: SqlValue[] = [];
  const append = (text: string) => {
    parts[parts.length - 1] += text;
  };
  args.forEach((arg, index) => {
    if (isRaw(arg)) append(arg.raw);
    else if (isTemplate(arg)) {
      append(arg.parts[0] as string);
      arg.values.forEach((value, at) => {
        values.push(value);
        parts.push(arg.parts[at + 1] as string);
      });
    } else {
      values.push(arg);
      parts.push('');
    }
    append(strings[index + 1] as string);
  });
  return { parts, values };
}

/** Templates joined with `separator` between them. */
export function joinSql(templates: readonly SqlTemplate[], separator: string): SqlTemplate {
  return templates.reduce<SqlTemplate>(
    (joined, next, index) => (index === 0 ? next : sql`${joined}${raw(separator)}${next}`),
    sql``,
  );
}

/**
 * A SQL literal for the simple query protocol. Numbers are quoted as pg sends parameters
 * (`'12'`), so PostgreSQL parses and checks them against the column type exactly as a
 * parameter. Text with a backslash uses the `E''` form so the result does not depend on
 * `standard_conforming_strings`.
 */
export function literal(value: SqlValue): string {
  if (value === null) return 'NULL';
  const text = typeof value === 'number' ? String(value) : value;
  if (text.includes('\u0000')) {
    // The protocol ends a query at NUL; PostgreSQL text cannot hold it either.
    throw new StoreInvariantError(
      'store_commit_malformed',
      'Refused store commit: a text value contains U+0000, which PostgreSQL cannot store',
    );
  }
  const quoted = text.replaceAll("'", "''");
  return text.includes('\\') ? `E'${quoted.replaceAll('\\', '\\\\')}'` : `'${quoted}'`;
}

/** The template as one statement with its values as literals. */
export function inlined(template: SqlTemplate): string {
  return template.parts.reduce(
    (text, part, index) => `${text}${literal(template.values[index - 1] as SqlValue)}${part}`,
  );
}

/** The template's text with `$1`, `$2`, … for its values (what `PREPARE` takes). */
export function numbered(template: SqlTemplate): string {
  return template.parts.reduce((text, part, index) => `${text}$${index}${part}`);
}

/** `EXECUTE name(…)` of the prepared template with its values as literals. */
export function executeSql(name: string, template: SqlTemplate): string {
  return template.values.length === 0
    ? `EXECUTE ${name}`
    : `EXECUTE ${name}(${template.values.map(literal).join(', ')})`;
}
