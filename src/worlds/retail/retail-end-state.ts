/**
 * The benchmark's oracle, by value: which users and orders differ from the initial data after a
 * task, compared with `expected_test_changes.json`. Numbers compare by value (`9.0` is `9`), key
 * order never matters, list order always does.
 */

/** Changed records per collection, keyed by id (as in `expected_test_changes.json`). */
export interface RetailChanges {
  readonly users: Readonly<Record<string, unknown>>;
  readonly orders: Readonly<Record<string, unknown>>;
}

/** Where two changed-record sets first differ, or `null` when they match. */
export interface ChangesComparison {
  readonly matches: boolean;
  /** Human-readable differences, at most a few (`orders["#W1"].status: "a" ≠ "b"`). */
  readonly differences: readonly string[];
}

const MAX_DIFFERENCES = 5;

/** The first path at which `left` and `right` differ, or `null` when equal by value. */
export function firstDifference(left: unknown, right: unknown, path = ''): string | null {
  if (typeof left === 'number' && typeof right === 'number') {
    return left === right ? null : `${path}: ${left} ≠ ${right}`;
  }
  if (Array.isArray(left) || Array.isArray(right)) {
    if (!Array.isArray(left) || !Array.isArray(right)) return `${path}: list ≠ non-list`;
    if (left.length !== right.length) return `${path}: ${left.length} entries ≠ ${right.length}`;
    for (let index = 0; index < left.length; index++) {
      const found = firstDifference(left[index], right[index], `${path}[${index}]`);
      if (found !== null) return found;
    }
    return null;
  }
  if (isObject(left) && isObject(right)) {
    const keys = new Set([...Object.keys(left), ...Object.keys(right)]);
    for (const key of [...keys].sort()) {
      if (!Object.hasOwn(left, key)) return `${path}.${key}: missing on the left`;
      if (!Object.hasOwn(right, key)) return `${path}.${key}: missing on the right`;
      const found = firstDifference(left[key], right[key], `${path}.${key}`);
      if (found !== null) return found;
    }
    return null;
  }
  return Object.is(left, right)
    ? null
    : `${path}: ${JSON.stringify(left)} ≠ ${JSON.stringify(right)}`;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The records of `final` that differ from `initial` (records added count as changed). */
export function changedRecords(
  initial: Readonly<Record<string, unknown>>,
  final: Readonly<Record<string, unknown>>,
): Record<string, unknown> {
  const changed: Record<string, unknown> = {};
  for (const [id, record] of Object.entries(final)) {
    if (!Object.hasOwn(initial, id) || firstDifference(initial[id], record) !== null) {
      changed[id] = record;
    }
  }
  return changed;
}

/** Compares actual with expected changes; `expected` may omit an empty collection. */
export function compareChanges(
  expected: Partial<RetailChanges>,
  actual: RetailChanges,
): ChangesComparison {
  const differences: string[] = [];
  for (const collection of ['users', 'orders'] as const) {
    const want = expected[collection] ?? {};
    const got = actual[collection];
    for (const id of new Set([...Object.keys(want), ...Object.keys(got)])) {
      if (differences.length >= MAX_DIFFERENCES) break;
      const label = `${collection}[${JSON.stringify(id)}]`;
      if (!Object.hasOwn(got, id)) differences.push(`${label}: expected a change, none happened`);
      else if (!Object.hasOwn(want, id)) differences.push(`${label}: changed, expected unchanged`);
      else {
        const found = firstDifference(got[id], want[id], label);
        if (found !== null) differences.push(found);
      }
    }
  }
  return { matches: differences.length === 0, differences };
}
