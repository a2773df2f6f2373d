/**
 * `sideguard approvers hash`: the printed line logs the approver in with that secret and no other;
 * the secret never comes from the command line, and a short one is refused with exit 2.
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApproverRegistry } from '../../src/approvals/approver-registry.js';

const CLI = join(import.meta.dirname, '../../dist/cli/main.js');
const hash = (env: Record<string, string>, ...args: string[]) =>
  spawnSync(process.execPath, [CLI, 'approvers', 'hash', ...args], {
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '', ...env },
  });

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'sideguard-approvers-hash-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('sideguard approvers hash', () => {
  it('prints a hash that authenticates the secret from the environment, and only that secret', async () => {
    const printed = hash({ SIDEGUARD_APPROVER_SECRET: 'correct-horse-battery' });
    expect(printed.status).toBe(0);
    const line = printed.stdout.trim();
    expect(line).toMatch(/^scrypt\$/);
    expect(printed.stdout).not.toContain('correct-horse-battery');
    const registry = createApproverRegistry([{ id: 'finance-a', secretHash: line }]);
    await expect(
      registry.authenticate('finance-a', 'correct-horse-battery', 'cli'),
    ).resolves.toMatchObject({ id: 'finance-a' });
    await expect(
      registry.authenticate('finance-a', 'correct-horse-batterx', 'cli'),
    ).rejects.toThrow();
  });

  it('reads the secret from a file without its trailing newline', async () => {
    const file = join(dir, 'secret');
    await writeFile(file, 'a-secret-from-a-file\n');
    const printed = hash({}, '--secret-file', file);
    expect(printed.status).toBe(0);
    const registry = createApproverRegistry([{ id: 'ops', secretHash: printed.stdout.trim() }]);
    await expect(
      registry.authenticate('ops', 'a-secret-from-a-file', 'cli'),
    ).resolves.toMatchObject({ id: 'ops' });
  });

  it('refuses a missing or short secret, and a secret on the command line, with exit 2', () => {
    const missing = hash({});
    expect(missing.status).toBe(2);
    expect(missing.stderr).toContain('SIDEGUARD_APPROVER_SECRET');
    const short = hash({ SIDEGUARD_APPROVER_SECRET: 'short' });
    expect(short.status).toBe(2);
    expect(short.stderr).toContain('at least 12');
    const argv = hash({}, 'correct-horse-battery');
    expect(argv.status).toBe(2);
    expect(argv.stdout).toBe('');
  });
});
