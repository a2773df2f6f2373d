/** The README's exit-code contract: 0 pass, 1 a check failed, 2 bad input or usage. */
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';

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
