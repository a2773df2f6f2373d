/**
 * The retail world end to end on a handful of tasks: sandbox, retail MCP server, gateway MCP
 * door and the official MCP SDK client, judged by value against the benchmark's expected
 * changes and by the sandbox's own write counts.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSandbox } from 'sideguard/sandbox';
import { describe, expect, it } from 'vitest';
import { runRetailWorld } from '../../src/worlds/retail/retail-world-runner.js';

// Tasks that cover all seven write tools, a write that fails on purpose (12) and no change (10).
const TASKS = [0, 10, 12, 40, 78, 104, 110];

describe('sideguard world retail', () => {
  it('reproduces the expected changes of a handful of test tasks through the MCP door', async () => {
    const results = await runRetailWorld({ taskIndices: TASKS });
    expect(results.map((result) => [result.index, result.matches, result.differences])).toEqual(
      TASKS.map((index) => [index, true, []]),
    );
    expect(results.every((result) => result.duplicateEffects === 0)).toBe(true);
    expect(results.reduce((sum, result) => sum + result.committedWrites, 0)).toBeGreaterThan(0);
    expect(results.flatMap((result) => result.problems)).toEqual([]);
    // The gold write of task 12 fails on purpose: refused by the provider, nothing committed.
    const refused = results.find((result) => result.index === 12);
    expect(refused?.writes.map((write) => write.verdict)).toEqual(['upstream_refused']);
    expect(refused?.committedWrites).toBe(0);
  }, 120_000);
});

describe('the baseline without Sideguard', () => {
  it('matches the benchmark oracle while the sandbox counts the writes that landed twice', async () => {
    // Address changes are idempotent by value: the oracle cannot tell a second one happened.
    const results = await runRetailWorld({ taskIndices: [78, 110], direct: true, twice: true });
    expect(results.map((result) => result.matches)).toEqual([true, true]);
    expect(results.map((result) => result.duplicateEffects)).toEqual([1, 2]);
  }, 60_000);
});

describe('the retail provider counts a write that lands twice', () => {
  it('two identical address changes sent straight to the sandbox are one effect committed twice', async () => {
    const stateDir = await mkdtemp(join(tmpdir(), 'sideguard-retail-dup-'));
    const sandbox = await startSandbox({ providers: ['retail'], stateDir, durability: 'os' });
    try {
      const body = JSON.stringify({
        user_id: 'noah_brown_6181',
        address1: '1 Main St',
        address2: '',
        city: 'Austin',
        state: 'TX',
        country: 'USA',
        zip: '78701',
      });
      for (let send = 0; send < 2; send++) {
        const response = await fetch(`${sandbox.dataUrl}/retail/v1/modify_user_address`, {
          method: 'POST',
          headers: {
            authorization: 'Bearer retail_test_sideguard_agent',
            'content-type': 'application/json',
          },
          body,
        });
        expect(response.status).toBe(200);
      }
      const observations = await sandbox.control.observations();
      expect(Object.values(observations.writes.byEffect).map((effect) => effect.count)).toEqual([
        2,
      ]);
      const unknown = await fetch(`${sandbox.dataUrl}/retail/v1/get_order_details?order_id=%23W0`, {
        headers: { authorization: 'Bearer retail_test_sideguard_agent' },
      });
      expect(unknown.status).toBe(422);
      expect(await unknown.json()).toEqual({
        error: { code: 'retail_error', message: 'Error: order not found' },
      });
    } finally {
      await sandbox.close();
      await rm(stateDir, { recursive: true, force: true });
    }
  });
});
