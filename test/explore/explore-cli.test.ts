/**
 * `sideguard explore` as a user runs it: a pass exits 0 with a summary, a violation exits 1 with
 * the invariant, the effect and the artifacts (which replay to the same failure), bad input exits
 * 2 with one line saying what to fix.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';

const outDir = mkdtempSync(join(tmpdir(), 'sideguard-explore-cli-'));
afterAll(() => rmSync(outDir, { recursive: true, force: true }));

describe('sideguard explore', () => {
  it('passes 20 refund schedules: exit 0 and a summary with coverage', () => {
    const run = runCli(['explore', '--workload', 'refund', '--schedules', '20', '--seed', '1']);
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(
      /^PASS explore: 20 schedules in .* workload refund, memory store, seeds 1…20; \d+ coverage cells/,
    );
  });

  it('--store sqlite runs the schedules over the real SQLite adapter', () => {
    const run = runCli(['explore', '--store', 'sqlite', '--schedules', '8', '--seed', '3']);
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(
      /^PASS explore: 8 schedules in .* workload mix, sqlite store, seeds 3…10;/,
    );
  });

  it('--json reports the schedules, coverage cells and no failure', () => {
    const run = runCli(['explore', '--workload', 'approvals', '--schedules', '5', '--json']);
    expect(run.status).toBe(0);
    const report = JSON.parse(run.stdout) as {
      schedules: number;
      cells: string[];
      failure?: unknown;
    };
    expect(report.schedules).toBe(5);
    expect(report.cells.length).toBeGreaterThan(0);
    expect(report.failure).toBeUndefined();
  });

  it('a caught breakage exits 1 naming the invariant and writes a replay that fails again', () => {
    const run = runCli([
      'explore',
      '--workload',
      'refund',
      '--schedules',
      '50',
      '--seed',
      '1',
      '--breakage',
      'retrying_transport',
      '--out-dir',
      outDir,
      '--no-shrink',
    ]);
    expect(run.status).toBe(1);
    const invariant = /^FAIL explore: (\w+) on refund:ord_100\d:\d+\.00\n/.exec(run.stdout)?.[1];
    // A second write with one key: the provider's own count (I1) or its attempts (I5).
    expect(['one_write_per_effect', 'no_blind_resend']).toContain(invariant);
    const replay = /replay: {3}(\S+)/.exec(run.stdout)?.[1];
    expect(replay).toBeDefined();
    expect(existsSync(replay ?? '')).toBe(true);
    expect(readFileSync(/timeline: (\S+)/.exec(run.stdout)?.[1] ?? '', 'utf8')).toContain(
      `**${invariant}**`,
    );

    const again = runCli(['explore', '--replay', replay ?? '']);
    expect(again.status).toBe(1);
    expect(again.stdout).toMatch(new RegExp(`^FAIL replay .*: ${invariant} on refund:`));
  }, 90_000);

  it.each([
    [['--schedules', '-3'], /--schedules must be a non-negative integer, got "-3"/],
    [['--workload', 'nope', '--schedules', '1'], /unknown workload "nope"; known: refund/],
    [['--breakage', 'nope', '--schedules', '1'], /unknown breakage "nope"; known: /],
    [
      ['--store', 'postgres', '--schedules', '1'],
      /--store must be memory or sqlite, got "postgres"/,
    ],
  ])('bad input exits 2 with one line: %s', (args, message) => {
    const run = runCli(['explore', ...args]);
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(message);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
  });
});
