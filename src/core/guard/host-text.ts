/**
 * Text the host hands the guard (reasons, step names, receipt ids, thrown errors) is untrusted:
 * it may be any value, carry lone surrogates that canonical JSON refuses, private words, or
 * getters and `toString`s that throw. These helpers turn it into text the ledger can always
 * hold, without ever throwing themselves.
 */
import { keyedDigest } from '../commitment.js';
import type { KeyRing } from '../key-ring.js';

/** What a reason code may look like: short, ASCII, no spaces. Anything else is replaced. */
const REASON_CODE = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,119}$/;

/** The longest host text (in code points) a reason digest is computed over. */
const MAX_DIGESTED_CODE_POINTS = 4_096;

/**
 * `value` with every lone surrogate replaced by U+FFFD, so canonical JSON accepts it (it
 * refuses lone surrogates rather than guess).
 */
export function wellFormed(value: string): string {
  return value.replace(
    /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g,
    '\uFFFD',
  );
}

/**
 * Cuts text to at most `max` code points (never through a surrogate pair) and makes it
 * well-formed; a cut text ends in `…`.
 */
export function shortText(value: string, max = 200): string {
  const text = wellFormed(value);
  if (text.length <= max) return text;
  const codePoints = Array.from(text);
  return codePoints.length > max ? `${codePoints.slice(0, max).join('')}…` : text;
}

/** Never-throwing text of any value, for messages: `String(value)`, or a placeholder. */
export function safeText(value: unknown, max = 200): string {
  try {
    return shortText(String(value), max);
  } catch {
    return '(a value that cannot be shown)';
  }
}

/**
 * A ledger reason code for host text. A string that already looks like a code is kept; any
 * other string becomes `<fallback>:<digest>` — a stable code plus a keyed digest of the text
 * (the same text always gives the same code, and the digest does not reveal the words), so
 * nothing is dropped silently. A missing reason gives `unspecified`; a non-string, `<fallback>`.
 */
export function reasonCodeOf(keyRing: KeyRing, value: unknown, fallback: string): string {
  if (value === undefined || value === null || value === '') return 'unspecified';
  if (typeof value !== 'string') return fallback;
  if (REASON_CODE.test(value)) return value;
  const digest = keyedDigest(
    keyRing,
    'ledger',
    keyRing.effectKey,
    'sideguard/host-reason/v1',
    shortText(value, MAX_DIGESTED_CODE_POINTS),
  );
  return `${fallback}:${digest.slice(0, 16)}`;
}

/** True for a string that is a well-formed reason code as it stands. */
export const isReasonCode = (value: unknown): value is string =>
  typeof value === 'string' && REASON_CODE.test(value);

/** Reads `object[key]`, or undefined when reading it throws (a hostile getter or proxy). */
export function readField(object: unknown, key: string): unknown {
  if ((typeof object !== 'object' && typeof object !== 'function') || object === null) {
    return undefined;
  }
  try {
    return (object as Record<string, unknown>)[key];
  } catch {
    return undefined;
  }
}

/**
 * A ledger-safe tag for a thrown error: its `code` (e.g. `ECONNRESET`) or class name, never its
 * message, which may quote provider text about a customer (I8). Never throws, whatever was
 * thrown.
 */
export function errorTag(error: unknown): string {
  const tag = [readField(error, 'code'), readField(error, 'name')].find(
    (value): value is string => typeof value === 'string' && /^[A-Za-z0-9_.-]{1,48}$/.test(value),
  );
  return tag === undefined ? '' : `:${tag}`;
}
