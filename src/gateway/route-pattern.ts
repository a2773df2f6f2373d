/**
 * Route templates (`POST /v1/refunds/:id`), request paths split into safe segments,
 * segment-safe prefixes and query normalisation: the matching rules both doors' decisions use.
 * Pure.
 */
import { decodePairs } from '../sandbox/form-encoding.js';

/** One segment of a template: literal text or a named parameter. */
export type RouteSegment =
  | { readonly kind: 'static'; readonly value: string }
  | { readonly kind: 'param'; readonly name: string };

/** A parsed `METHOD /path` template. */
export interface RoutePattern {
  /** Upper-case. */
  readonly method: string;
  /** The path template as written, e.g. `/v1/refunds/:id`. */
  readonly template: string;
  readonly segments: readonly RouteSegment[];
  /** A trailing `/*` matches one or more further segments. */
  readonly rest: boolean;
  /** Method and template with parameter names erased: two routes with one shape are one route. */
  readonly shape: string;
}

/** A template, or why it is not one. */
export type RouteParseResult =
  | { readonly kind: 'parsed'; readonly pattern: RoutePattern }
  | { readonly kind: 'invalid'; readonly message: string };

/** A request path split into decoded segments, or why it is refused. */
export type PathSplitResult =
  | { readonly kind: 'split'; readonly segments: readonly string[] }
  | { readonly kind: 'invalid'; readonly message: string };

const METHOD = /^[A-Z]{3,10}$/;
const PARAM = /^:[A-Za-z_][A-Za-z0-9_]{0,63}$/;
const STATIC = /^[A-Za-z0-9._~!$&'()+,;=@-]+$/;

/** Reads are answered or forwarded; every other method is a write (and fails closed). */
export function isReadMethod(method: string): boolean {
  return method === 'GET' || method === 'HEAD';
}

/** Parses `METHOD /path/:param[/*]`. */
export function parseRoute(text: string): RouteParseResult {
  const match = /^([A-Za-z]+) (\/\S*)$/.exec(text.trim());
  if (match === null) {
    return { kind: 'invalid', message: 'write a route as "METHOD /path", e.g. "POST /v1/refunds"' };
  }
  const method = (match[1] ?? '').toUpperCase();
  const template = match[2] ?? '/';
  if (!METHOD.test(method))
    return { kind: 'invalid', message: `"${method}" is not an HTTP method` };
  const parts = template === '/' ? [] : template.slice(1).split('/');
  const rest = parts.at(-1) === '*';
  if (rest) parts.pop();
  const segments: RouteSegment[] = [];
  const names = new Set<string>();
  for (const part of parts) {
    if (PARAM.test(part)) {
      const name = part.slice(1);
      if (names.has(name)) {
        return { kind: 'invalid', message: `parameter :${name} appears twice in ${template}` };
      }
      names.add(name);
      segments.push({ kind: 'param', name });
    } else if (STATIC.test(part) && part !== '.' && part !== '..') {
      segments.push({ kind: 'static', value: part });
    } else {
      return {
        kind: 'invalid',
        message: `segment "${part}" of ${template} is not a literal, a :param or a final *`,
      };
    }
  }
  const shape = `${method} /${segments.map((s) => (s.kind === 'param' ? ':' : s.value)).join('/')}${rest ? '/*' : ''}`;
  return { kind: 'parsed', pattern: { method, template, segments, rest, shape } };
}

/**
 * Splits a raw (still percent-encoded) path into decoded segments. Refuses what could make the
 * gateway and the upstream disagree about which resource is meant: bad percent-encoding, empty
 * inner segments, `.`/`..`, and encoded `/`, `\` or control characters.
 */
export function splitPath(rawPath: string): PathSplitResult {
  if (!rawPath.startsWith('/')) return { kind: 'invalid', message: 'the path must start with /' };
  if (rawPath === '/') return { kind: 'split', segments: [] };
  const segments: string[] = [];
  for (const raw of rawPath.slice(1).split('/')) {
    let segment = raw;
    if (raw.includes('%')) {
      try {
        segment = decodeURIComponent(raw);
      } catch {
        return { kind: 'invalid', message: 'the path has invalid percent-encoding' };
      }
    }
    if (segment === '' || segment === '.' || segment === '..') {
      return { kind: 'invalid', message: 'the path has an empty, "." or ".." segment' };
    }
    // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point
    if (/[/\\\u0000-\u001f\u007f]/.test(segment)) {
      return {
        kind: 'invalid',
        message: 'a path segment encodes "/", "\\" or a control character',
      };
    }
    segments.push(segment);
  }
  return { kind: 'split', segments };
}

/** The route parameters when `segments` match `pattern` (method checked by the caller). */
export function matchSegments(
  pattern: RoutePattern,
  segments: readonly string[],
): Readonly<Record<string, string>> | undefined {
  const fixed = pattern.segments.length;
  if (pattern.rest ? segments.length <= fixed : segments.length !== fixed) return undefined;
  const params: Record<string, string> = {};
  for (let index = 0; index < fixed; index++) {
    const want = pattern.segments[index];
    const have = segments[index];
    if (want === undefined || have === undefined) return undefined;
    if (want.kind === 'static') {
      if (want.value !== have) return undefined;
    } else {
      params[want.name] = have;
    }
  }
  return params;
}

/**
 * Orders patterns most specific first: at the first differing segment a literal beats a
 * parameter; a fixed-length route beats a `/*` route.
 */
export function compareSpecificity(a: RoutePattern, b: RoutePattern): number {
  const length = Math.min(a.segments.length, b.segments.length);
  for (let index = 0; index < length; index++) {
    const left = a.segments[index]?.kind;
    const right = b.segments[index]?.kind;
    if (left !== right) return left === 'static' ? -1 : 1;
  }
  if (a.rest !== b.rest) return a.rest ? 1 : -1;
  return b.segments.length - a.segments.length;
}

/** Whether `segments` lie under `prefix` segment by segment (`/robot` never matches `/robotics`). */
export function isUnderPrefix(segments: readonly string[], prefix: readonly string[]): boolean {
  return prefix.length <= segments.length && prefix.every((part, i) => segments[i] === part);
}

/** Decoded query pairs in arrival order; `undefined` on invalid percent-encoding. */
export function queryPairs(search: string): [string, string][] | undefined {
  return decodePairs(search.startsWith('?') ? search.slice(1) : search);
}

/**
 * The canonical form of a query for replay and shadow keys: pairs sorted by name (code units),
 * a repeated name keeping its values in order, re-encoded. `?b=2&a=1&a=0` → `a=1&a=0&b=2`.
 */
export function normaliseQuery(pairs: readonly (readonly [string, string])[]): string {
  return pairs
    .map((pair, index) => ({ pair, index }))
    .sort((x, y) => (x.pair[0] < y.pair[0] ? -1 : x.pair[0] > y.pair[0] ? 1 : x.index - y.index))
    .map(({ pair }) => `${encodeURIComponent(pair[0])}=${encodeURIComponent(pair[1])}`)
    .join('&');
}
