/** The README's exit-code contract: 0 pass, 1 a check failed, 2 bad input or usage. */
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliPath, runCli } from '../support/cli.js';

describe('exit codes', () => {
  it.each([
    [['run'], 'a missing required option'],
    [['no-such-command'], 'an unknown command'],
    [['gate', '--no-such-option'], 'an unknown option'],
    [['sandbox', 'serve', '--seed', 'abc'], 'an invalid option value'],
  ])('usage errors exit 2: %s (%s)', (args) => {
    const run = runCli(args);
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/error|sideguard/);
  });

  it('a path that is a file where a directory is expected exits 2 with one line', () => {
    const file = join(tmpdir(), `sideguard-not-a-dir-${process.pid}`);
    writeFileSync(file, 'x');
    const run = runCli(['sandbox', 'serve', '--state-dir', file]);
    expect(run.status).toBe(2);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
  });

  it('help and version exit 0', () => {
    expect(runCli(['--help']).status).toBe(0);
    expect(runCli(['gate', '--help']).status).toBe(0);
    expect(runCli(['--version']).stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
  });
});

describe('small things a newcomer hits', () => {
  it('gate --list prints every scenario with its description and runs nothing', () => {
    const run = runCli(['gate', '--list']);
    expect(run.status).toBe(0);
    const lines = run.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^safe_refund: /);
    expect(lines.length).toBeGreaterThanOrEqual(20);
  });

  it('refuses one port for both sandbox planes with exit 2', () => {
    const run = runCli([
      'sandbox',
      'serve',
      '--state-dir',
      join(tmpdir(), `sg-ports-${process.pid}`),
      '--port',
      '4712',
      '--control-port',
      '4712',
    ]);
    expect(run.status).toBe(2);
    expect(run.stderr).toContain('need different ports');
  });

  it('exits cleanly when its reader closes the pipe early', () => {
    const result = spawnSync(
      'sh',
      ['-c', `"${process.execPath}" "${cliPath}" gate --list | head -1`],
      { encoding: 'utf8' },
    );
    expect(result.status).toBe(0);
    expect(result.stderr).not.toContain('EPIPE');
    expect(result.stdout.trim().split('\n')).toHaveLength(1);
  });
});
