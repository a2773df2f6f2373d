/**
 * Small helpers every provider folder shares: path patterns, credentials, JSON bodies and safe
 * ids. Nothing here knows a provider; providers compose these into their own rules.
 */
import type { JsonValue } from './sandbox-types.js';

/** Ids accepted in paths and references: letters, digits, `_` and `-`, at most 64 characters. */
export const safeIdPattern = /^[A-Za-z0-9_-]{1,64}$/;

/** True when `id` can name an object; rejects traversal (`..`, `/`) and odd characters. */
export function isSafeId(id: string): boolean {
  return safeIdPattern.test(id);
}

/**
 * Matches a pattern such as `/v1/refunds/:id` against a path; returns decoded parameters,
 * or `undefined` when it does not match (or a segment is badly percent-encoded).
 */
export function matchPath(pattern: string, pathname: string): Record<string, string> | undefined {
  const patternSegments = pattern.split('/');
  const pathSegments = pathname.split('/');
  if (patternSegments.length !== pathSegments.length) return undefined;
  const params: Record<string, string> = {};
  for (let index = 0; index < patternSegments.length; index += 1) {
    const expected = patternSegments[index] ?? '';
    const actual = pathSegments[index] ?? '';
    if (expected.startsWith(':')) {
      if (actual.length === 0) return undefined;
      try {
        params[expected.slice(1)] = decodeURIComponent(actual);
      } catch {
        return undefined;
      }
    } else if (expected !== actual) {
      return undefined;
    }
  }
  return params;
}

/** The first value of a header, or `undefined`. */
export function headerValue(
  headers: Readonly<Record<string, string | string[] | undefined>>,
  name: string,
): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** The token of an `Authorization: Bearer …` header, or `undefined`. */
export function bearerToken(
  headers: Readonly<Record<string, string | string[] | undefined>>,
): string | undefined {
  const authorization = headerValue(headers, 'authorization');
  if (authorization === undefined) return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
  return match?.[1];
}

/** The user and password of an `Authorization: Basic …` header, or `undefined`. */
export function basicCredentials(
  headers: Readonly<Record<string, string | string[] | undefined>>,
): { readonly user: string; readonly password: string } | undefined {
  const authorization = headerValue(headers, 'authorization');
  if (authorization === undefined) return undefined;
  const match = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(authorization);
  if (match?.[1] === undefined) return undefined;
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon === -1) return undefined;
  return { user: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

/** The outcome of reading a JSON request body. */
export type JsonBodyResult =
  | { readonly kind: 'json'; readonly value: JsonValue }
  | { readonly kind: 'wrong_content_type'; readonly contentType: string }
  | { readonly kind: 'malformed'; readonly message: string };

/** Parses a body that must be `application/json` (UTF-8). */
export function parseJsonBody(contentType: string, body: Buffer): JsonBodyResult {
  if (contentType !== 'application/json') return { kind: 'wrong_content_type', contentType };
  const text = body.toString('utf8');
  try {
    return { kind: 'json', value: JSON.parse(text) as JsonValue };
  } catch (error) {
    return { kind: 'malformed', message: error instanceof Error ? error.message : 'Invalid JSON' };
  }
}

/** True for a plain JSON object (not an array or null). */
export function isJsonObject(
  value: JsonValue | undefined,
): value is { readonly [key: string]: JsonValue } {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Own keys of a JSON object that are not in `allowed`. */
export function unknownKeys(
  value: { readonly [key: string]: JsonValue },
  allowed: readonly string[],
): string[] {
  return Object.keys(value).filter((key) => !allowed.includes(key));
}

/** `value[key]` when `value` is a JSON object and that member is a string, else `null`. */
export function stringMember(value: JsonValue | undefined, key: string): string | null {
  if (!isJsonObject(value) || !Object.hasOwn(value, key)) return null;
  const member = value[key];
  return typeof member === 'string' ? member : null;
}

/** Seconds since the epoch, as Stripe's `created` fields count time. */
export function epochSeconds(nowMs: number): number {
  return Math.floor(nowMs / 1000);
}
