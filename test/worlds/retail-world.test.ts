/**
 * The retail world end to end on a handful of tasks: sandbox, retail MCP server, gateway MCP
 * door and the official MCP SDK client, judged by value against the benchmark's expected
 * changes and by the sandbox's own write counts.
 */
import { describe, expect, it } from 'vitest';
import { runRetailWorld } from '../../src/worlds/retail/retail-world-runner.js';

// Tasks that cover every write tool, a failing write and a task with no change.
const TASKS = [0, 1, 2, 5, 10, 20];

describe('sideguard world retail', () => {
  it('reproduces the expected changes of a handful of test tasks through the MCP door', async () => {
    const results = await runRetailWorld({ taskIndices: TASKS });
    expect(results.map((result) => [result.index, result.matches, result.differences])).toEqual(
      TASKS.map((index) => [index, true, []]),
    );
    expect(results.every((result) => result.duplicateEffects === 0)).toBe(true);
    expect(results.reduce((sum, result) => sum + result.committedWrites, 0)).toBeGreaterThan(0);
    expect(results.flatMap((result) => result.problems)).toEqual([]);
  }, 120_000);
});
