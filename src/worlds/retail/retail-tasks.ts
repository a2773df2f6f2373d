/**
 * The benchmark's task splits reduced to data (`tasks.json`) and the expected end-state changes
 * of the test split (`expected_test_changes.json`).
 */
import { readRetailFile } from '../../sandbox/providers/retail/retail-data.js';
import type { RetailChanges } from './retail-end-state.js';

/** A split of `tasks.json`. */
export const RetailSplit = { test: 'test', train: 'train', dev: 'dev' } as const;
export type RetailSplit = (typeof RetailSplit)[keyof typeof RetailSplit];

/** One gold tool call. */
export interface RetailAction {
  readonly name: string;
  readonly kwargs: Readonly<Record<string, unknown>>;
}

/** One task: its index in the split, the user, and the gold actions. */
export interface RetailTask {
  readonly index: number;
  readonly user_id: string;
  readonly actions: readonly RetailAction[];
}

/** The tasks of a split, in order. */
export function loadRetailTasks(split: RetailSplit): readonly RetailTask[] {
  const all = readRetailFile('tasks.json') as Record<string, RetailTask[] | undefined>;
  return all[split] ?? [];
}

/** Expected changes by task index (test split only); `undefined` for other splits. */
export function loadExpectedChanges(
  split: RetailSplit,
): Readonly<Record<string, Partial<RetailChanges>>> | undefined {
  if (split !== 'test') return undefined;
  return readRetailFile('expected_test_changes.json') as Record<string, Partial<RetailChanges>>;
}
