/**
 * Action contracts are strict at every depth (DESIGN.md: unknown fields rejected, no coercion).
 * zod's objects strip unknown keys by default, and `.strict()` reaches only the top level, so a
 * nested typo would be dropped silently and the action would execute without it. This module
 * refuses schemas that would change what the agent sent, then rebuilds the schema with every
 * object strict.
 */
import { z } from 'zod';
import { ConfigurationError } from './errors.js';

/** The parts of a zod 4 schema this module reads: its definition and its constructor. */
interface Schema {
  readonly _zod: {
    readonly def: Definition;
    readonly constr: new (def: Definition) => Schema;
  };
}

/** A zod 4 schema definition: `type` plus the fields of that type. */
type Definition = Readonly<Record<string, unknown>> & { readonly type: string };

/** Types that can never hold a canonical JSON value: a contract using them can never be met. */
const NOT_JSON = new Set([
  'date',
  'bigint',
  'symbol',
  'map',
  'set',
  'promise',
  'function',
  'file',
  'nan',
]);

/** Wrappers whose one inner schema lives in `innerType`. */
const WRAPPERS = new Set([
  'optional',
  'nullable',
  'default',
  'prefault',
  'nonoptional',
  'readonly',
]);

const isSchema = (value: unknown): value is Schema =>
  typeof value === 'object' &&
  value !== null &&
  typeof (value as { _zod?: { def?: { type?: unknown } } })._zod?.def?.type === 'string';

const refuse = (typeName: string, path: string, why: string): never => {
  throw new ConfigurationError(
    'action_contract_invalid',
    `defineAction(${typeName}): ${path} ${why}`,
    { data: { path } },
  );
};

/** The schemas directly inside one definition, with the path each sits at. */
function children(def: Definition, path: string): [Schema, string][] {
  const found: [Schema, string][] = [];
  const add = (value: unknown, at: string): void => {
    if (isSchema(value)) found.push([value, at]);
  };
  switch (def.type) {
    case 'object':
      for (const [key, value] of Object.entries(def.shape as object)) add(value, `${path}.${key}`);
      add(def.catchall, `${path}.*`);
      break;
    case 'array':
      add(def.element, `${path}[]`);
      break;
    case 'tuple':
      for (const [index, item] of (def.items as unknown[]).entries()) {
        add(item, `${path}[${index}]`);
      }
      add(def.rest, `${path}[…]`);
      break;
    case 'union':
      for (const option of def.options as unknown[]) add(option, path);
      break;
    case 'intersection':
      add(def.left, path);
      add(def.right, path);
      break;
    case 'record':
      add(def.keyType, `${path}{key}`);
      add(def.valueType, `${path}{}`);
      break;
    case 'pipe':
      add(def.in, path);
      add(def.out, path);
      break;
    case 'lazy':
      add((def.getter as () => unknown)(), path);
      break;
    default:
      if (WRAPPERS.has(def.type) || def.type === 'catch' || def.type === 'success') {
        add(def.innerType, path);
      }
  }
  return found;
}

const containsObject = (schema: Schema, seen: Set<Schema> = new Set()): boolean => {
  if (seen.has(schema)) return false;
  seen.add(schema);
  const def = schema._zod.def;
  return def.type === 'object' || children(def, '').some(([child]) => containsObject(child, seen));
};

/** Refuses one schema node that would change or drop what the agent sent. */
function checkNode(typeName: string, def: Definition, path: string): void {
  if (def.coerce === true) {
    refuse(
      typeName,
      path,
      `uses z.coerce: coercion turns what the agent sent into another value (so "1e3" or true could pass as a number), and the guard would commit something nobody proposed; declare the exact type the agent must send`,
    );
  }
  if (def.type === 'transform' || (def.type === 'pipe' && typeof def.transform === 'function')) {
    refuse(
      typeName,
      path,
      'uses a transform, preprocess or codec: the contract must validate what the agent sent, not rewrite it, or the committed input is not what was proposed; validate the sent shape and convert inside execute',
    );
  }
  if (def.type === 'catch') {
    refuse(
      typeName,
      path,
      'uses .catch(): it replaces an invalid value with a fallback, so a malformed proposal would execute as a valid one; remove it',
    );
  }
  if (def.type === 'success') {
    refuse(typeName, path, 'uses z.success(): it turns the value into a boolean; remove it');
  }
  if (NOT_JSON.has(def.type)) {
    refuse(
      typeName,
      path,
      `is a z.${def.type}(), which no canonical JSON input can satisfy; use strings or integers`,
    );
  }
  const catchall = def.catchall;
  if (def.type === 'object' && isSchema(catchall) && catchall._zod.def.type !== 'never') {
    refuse(
      typeName,
      path,
      'accepts unknown keys (.loose(), .passthrough() or .catchall()); contracts are strict at every depth: declare each key, or use z.record(...) for a map',
    );
  }
  if (def.type === 'intersection') {
    const sides = [def.left, def.right].filter(isSchema);
    if (sides.some((side) => containsObject(side))) {
      refuse(
        typeName,
        path,
        'intersects objects: with strict objects each side refuses the keys of the other; combine them with .extend() or a single z.object(...)',
      );
    }
  }
}

/**
 * Refuses a contract that coerces, transforms, accepts unknown keys or can never be met, naming
 * where and why. Walks every schema reachable from `schema` once (recursive schemas included).
 * @throws ConfigurationError `action_contract_invalid` with `data.path`.
 */
export function checkContract(typeName: string, schema: unknown): void {
  const seen = new Set<Schema>();
  const visit = (node: Schema, path: string): void => {
    if (seen.has(node)) return;
    seen.add(node);
    const def = node._zod.def;
    checkNode(typeName, def, path);
    for (const [child, at] of children(def, path)) visit(child, at);
  };
  if (!isSchema(schema)) refuse(typeName, 'input', 'is not a zod 4 schema');
  visit(schema as Schema, 'input');
}

/** A copy of `schema` built from `changes` over its definition (zod's own `clone`). */
function rebuilt(schema: Schema, changes: Record<string, unknown>): Schema {
  const descriptors = {
    ...Object.getOwnPropertyDescriptors(schema._zod.def),
    ...Object.getOwnPropertyDescriptors(changes),
  };
  // A lazy schema caches its resolved inner schema on its definition: never copy the cache.
  delete (descriptors as Record<string, unknown>)._cachedInner;
  return new schema._zod.constr(Object.defineProperties({}, descriptors) as Definition);
}

/**
 * The same contract with every object strict (unknown keys rejected), at every depth: inside
 * arrays, tuples, unions, records, wrappers, pipes and lazy (recursive) schemas. Checks, error
 * messages and defaults are kept. Call {@link checkContract} first.
 */
export function strictAtEveryDepth<T>(schema: T): T {
  const done = new Map<Schema, Schema>();
  const strict = (node: Schema): Schema => {
    const known = done.get(node);
    if (known !== undefined) return known;
    const changes = strictParts(node._zod.def, strict);
    // A leaf (string, enum, literal, …) holds no object: it is used as it is.
    const made = changes === undefined ? node : rebuilt(node, changes);
    done.set(node, made);
    return made;
  };
  return strict(schema as Schema) as T;
}

/** The changed fields of one definition, with inner schemas made strict (lazily for objects). */
function strictParts(
  def: Definition,
  strict: (node: Schema) => Schema,
): Record<string, unknown> | undefined {
  const each = (value: unknown): unknown => (isSchema(value) ? strict(value) : value);
  switch (def.type) {
    case 'object': {
      // Values are resolved on first use, so self-referencing (getter) shapes stay finite.
      const shape = {};
      for (const key of Object.keys(def.shape as object)) {
        Object.defineProperty(shape, key, {
          enumerable: true,
          get: () => each((def.shape as Record<string, unknown>)[key]),
        });
      }
      return { shape, catchall: z.never() };
    }
    case 'array':
      return { element: each(def.element) };
    case 'tuple':
      return { items: (def.items as unknown[]).map(each), rest: each(def.rest) };
    case 'union':
      return { options: (def.options as unknown[]).map(each) };
    case 'record':
      return { valueType: each(def.valueType) };
    case 'pipe':
      return { in: each(def.in), out: each(def.out) };
    case 'lazy': {
      const getter = def.getter as () => unknown;
      return { getter: () => each(getter()) };
    }
    default:
      return WRAPPERS.has(def.type) ? { innerType: each(def.innerType) } : undefined;
  }
}
