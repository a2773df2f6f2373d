/**
 * The digest a tool binding pins: SHA-256 over a deterministic JSON of what an agent reads and
 * what the arguments mean — name, title, description, input and output schema. Annotations,
 * icons and `_meta` are left out: annotations are untrusted hints the gateway never shows or
 * uses (it sets its own from the binding), and the rest does not change what a call does.
 */
import { createHash } from 'node:crypto';

/** The parts of a tool definition the digest covers. */
export interface DigestedToolDefinition {
  readonly name: string;
  readonly title?: string | undefined;
  readonly description?: string | undefined;
  readonly inputSchema?: unknown;
  readonly outputSchema?: unknown;
}

/** Nesting deeper than this is refused (a schema that deep is an attack, not a schema). */
const MAX_DEPTH = 64;

/**
 * Deterministic JSON: object keys in JavaScript string order, no whitespace, numbers as JavaScript
 * prints them. Unlike Canonical JSON v1 it accepts fractional numbers (schemas have them, e.g.
 * `"multipleOf": 0.01`) and keeps strings as they are.
 */
export function stableJson(value: unknown, depth = 0): string {
  if (depth > MAX_DEPTH) throw new RangeError(`nested deeper than ${MAX_DEPTH} levels`);
  if (value === null || typeof value === 'boolean' || typeof value === 'string') {
    return JSON.stringify(value);
  }
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new RangeError('not a finite number');
    return JSON.stringify(value);
  }
  if (Array.isArray(value)) {
    return `[${value.map((item) => stableJson(item, depth + 1)).join(',')}]`;
  }
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, item]) => item !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries
      .map(([key, item]) => `${JSON.stringify(key)}:${stableJson(item, depth + 1)}`)
      .join(',')}}`;
  }
  throw new TypeError(`cannot digest a ${typeof value}`);
}

/** `sha256:<hex>` of a value's deterministic JSON, or `undigestable` (too deep, not JSON). */
export function stableDigest(value: unknown): string {
  try {
    return `sha256:${createHash('sha256').update(stableJson(value), 'utf8').digest('hex')}`;
  } catch {
    return 'undigestable';
  }
}

/** `sha256:<64 hex>` of a tool definition, the value `toolDigest` pins. */
export function toolDefinitionDigest(tool: DigestedToolDefinition): string {
  const covered = {
    name: tool.name,
    title: tool.title,
    description: tool.description,
    inputSchema: tool.inputSchema,
    outputSchema: tool.outputSchema,
  };
  return stableDigest(covered);
}
