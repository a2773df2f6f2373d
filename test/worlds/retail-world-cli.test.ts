/**
 * `sideguard world retail` as a reviewer runs it (the built CLI): three test tasks under a seeded
 * fault plan that loses an answer after the write, hangs past the gateway's timeout after the
 * write and fails before the write, with every write sent twice.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCliAsync } from '../support/cli.js';

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

describe('sideguard world retail (CLI)', () => {
  it('under faults and with every write twice, ends in the expected states with no duplicate effect', async () => {
    const out = await mkdtemp(join(tmpdir(), 'sideguard-world-cli-'));
    dirs.push(out);
    // Under fault seed 7 these tasks meet all three fault kinds (see the report's faults).
    const run = await runCliAsync(
      ['world', 'retail', '--task', '9,11,34', '--faults', '7', '--twice', '--json', '--out', out],
      { timeoutMs: 120_000 },
    );
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    const report = JSON.parse(run.stdout);
    expect(report.passed).toBe(true);
    expect(report.summary).toMatchObject({ tasks: 3, judged: 3, matching: 3, duplicateEffects: 0 });
    expect(Object.keys(report.summary.faults).sort()).toEqual([
      'drop_after_write',
      'error_before_write',
      'hang_after_write',
    ]);
    // Each second send came back as the original answer without reaching the sandbox.
    for (const task of report.tasks) {
      for (const write of task.writes) expect(write.secondSend.duplicate).toBe(true);
    }
    expect(report.summary.duplicatesPrevented).toBeGreaterThanOrEqual(report.summary.writeActions);
    const markdown = await readFile(join(out, 'retail-report.md'), 'utf8');
    expect(markdown).toContain('| 34 | yes |');
    expect(markdown).toMatch(/error_before_write → not_dispatched/);
    expect(JSON.parse(await readFile(join(out, 'retail-report.json'), 'utf8')).passed).toBe(true);
  }, 150_000);

  it('refuses an unknown split or task with exit code 2', async () => {
    const split = await runCliAsync(['world', 'retail', '--split', 'nope']);
    expect(split.status).toBe(2);
    expect(split.stderr).toMatch(/--split must be test, train or dev/);
    const task = await runCliAsync(['world', 'retail', '--task', '115']);
    expect(task.status).toBe(2);
    expect(task.stderr).toMatch(/--task 115 is not a task of the test split/);
  });
});
