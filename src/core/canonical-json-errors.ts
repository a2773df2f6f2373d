/**
 * Where Canonical JSON failed and why: the failure reasons, the path to the offending value
 * (formatted only when an error is thrown) and the error itself.
 */
import { ContractViolationError } from './errors.js';

/** Why a value cannot be encoded; carried as `data.reason` of a `canonical_json_invalid` error. */
export const CanonicalJsonFailure = {
  float: 'float',
  nonFinite: 'non_finite',
  unsafeInteger: 'unsafe_integer',
  loneSurrogate: 'lone_surrogate',
  keyCollision: 'key_collision',
  unsupportedType: 'unsupported_type',
  tooDeep: 'too_deep',
  cycle: 'cycle',
  undefinedInArray: 'undefined_in_array',
} as const;
/** Why a value cannot be encoded; carried as `data.reason` of a `canonical_json_invalid` error. */
export type CanonicalJsonFailure = (typeof CanonicalJsonFailure)[keyof typeof CanonicalJsonFailure];

/**
 * Where a value sits, as a linked list from the value up to the root (undefined). Built for
 * every node but formatted only when an error is thrown: formatting on the success path was a
 * measurable share of the guard's CPU time.
 */
export type Path = { readonly parent: Path; readonly key: string | number } | undefined;

/** Formats a path as a JSON pointer (`""` for the root). */
function formatPath(path: Path): string {
  const segments: string[] = [];
  for (let node = path; node !== undefined; node = node.parent) {
    segments.push(typeof node.key === 'number' ? String(node.key) : pointerSegment(node.key));
  }
  return segments.length === 0 ? '' : `/${segments.reverse().join('/')}`;
}

/**
 * A JSON-pointer segment (RFC 6901 escaping of `~` and `/`). Lone surrogates are spelled as
 * `\uXXXX` text so the path itself stays well-formed and printable.
 */
function pointerSegment(key: string): string {
  return key
    .replaceAll('~', '~0')
    .replaceAll('/', '~1')
    .replace(
      /[\uD800-\uDFFF]/gu,
      (unit) => `\\u${unit.charCodeAt(0).toString(16).padStart(4, '0')}`,
    );
}

export function describeObject(value: object): string {
  if (ArrayBuffer.isView(value)) return 'typed array or Buffer';
  if (Array.isArray(value)) return 'array subclass';
  if (value instanceof Date) return 'Date';
  if (value instanceof Map) return 'Map';
  if (value instanceof Set) return 'Set';
  const name: unknown = (value as { constructor?: { name?: unknown } }).constructor?.name;
  return typeof name === 'string' && name !== '' ? `${name} instance` : 'non-plain object';
}

export function invalid(
  at: Path,
  reason: CanonicalJsonFailure,
  detail: string,
): ContractViolationError {
  const path = formatPath(at);
  const where = path === '' ? 'the root' : path;
  return new ContractViolationError(
    'canonical_json_invalid',
    `Cannot encode canonical JSON at ${where}: ${detail}`,
    { data: { path, reason } },
  );
}
