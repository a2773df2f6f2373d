/**
 * Assertions of the store conformance suite, on `node:assert` only, so the suite runs under any
 * test framework (vitest, node:test, jest, mocha) without importing one.
 */
import { strict as assert } from 'node:assert';
import { inspect } from 'node:util';
import { StoreInvariantError } from '../../core/errors.js';
import { type LedgerEvent, verifyLedgerChain } from '../../core/ledger.js';
import type { StoreCommitResult } from '../../core/store.js';

function matches(actual: unknown, expected: unknown): boolean {
  if (expected === null || typeof expected !== 'object') return Object.is(actual, expected);
  if (Array.isArray(expected)) {
    return (
      Array.isArray(actual) &&
      actual.length === expected.length &&
      expected.every((item, index) => matches(actual[index], item))
    );
  }
  if (actual === null || typeof actual !== 'object') return false;
  return Object.entries(expected).every(([key, value]) =>
    matches((actual as Record<string, unknown>)[key], value),
  );
}

/**
 * Asserts that `actual` holds every property of `expected` (recursively; arrays must have the
 * same length and match item by item), like vitest's `toMatchObject`.
 */
export function assertMatches(actual: unknown, expected: unknown, message?: string): void {
  if (matches(actual, expected)) return;
  assert.fail(
    `${message ?? 'The value does not match'}: expected ${inspect(actual, { depth: 6 })} to contain ${inspect(expected, { depth: 6 })}`,
  );
}

/** Asserts the commit was committed and returns its sealed events. */
export function assertCommitted(result: StoreCommitResult): readonly LedgerEvent[] {
  assert.strictEqual(result.kind, 'committed', `expected committed, got ${inspect(result)}`);
  return result.kind === 'committed' ? result.events : [];
}

/** Asserts that `promise` rejects with a `StoreInvariantError` carrying `code`. */
export async function assertInvariantError(promise: Promise<unknown>, code: string): Promise<void> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  assert.ok(
    error instanceof StoreInvariantError,
    `expected StoreInvariantError ${code}, got ${inspect(error)}`,
  );
  assert.strictEqual((error as StoreInvariantError).code, code);
}

/** Asserts the events form a valid chain (from `from`, when given). */
export function assertValidChain(
  events: readonly LedgerEvent[],
  from?: { sequence: number; hash: string },
): void {
  const verdict = verifyLedgerChain(events, from === undefined ? {} : { from });
  assertMatches(verdict, { kind: 'valid', count: events.length });
}
