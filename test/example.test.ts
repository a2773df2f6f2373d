/** The README's example must keep working: it runs the built package by its name. */
import { execFileSync } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

describe('examples/refund-approval.mjs', () => {
  it('approves 2-of-3, executes twice and a replanned retry, and issues exactly one refund', () => {
    const output = execFileSync(process.execPath, [join(root, 'examples', 'refund-approval.mjs')], {
      cwd: root,
      encoding: 'utf8',
    });
    expect(output).toContain('finance-ben approved -> authorized');
    expect(output).toMatch(
      /executes -> (verified, in_progress|in_progress, verified), then replayed/,
    );
    expect(output).toContain('agent retry -> replayed');
    expect(output).toContain('provider calls: 1, refunds issued: 1');
    expect(output).toMatch(/ledger: valid, \d+ hash-chained events/);
  });
});
