/**
 * The framework demos (`npm run demo:<name>`) keep working: each is spawned as a user runs it,
 * offline with the framework's own test model, and must show one refund in the sandbox after a
 * retried, approved call.
 */
import { execFileSync } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const runDemo = (file: string): string =>
  execFileSync(process.execPath, [join(root, 'examples', file)], { cwd: root, encoding: 'utf8' });

describe('the framework demos', () => {
  it('demo:ai-sdk: two calls, two approvals, one refund and its duplicate, the decision path', () => {
    const output = runDemo('ai-sdk-refund.mjs');
    expect(output).toContain('2 approval requests');
    expect(output).toContain('approvals recorded as bound evidence -> authorized, authorized');
    expect(output).toMatch(/tool result -> done \(verified\) re_\w+/);
    expect(output).toMatch(/tool result -> done \(replayed, duplicate\) re_\w+/);
    expect(output).toContain('refunds in the sandbox: 1');
    expect(output).toMatch(
      /decision path: contract_validated -> .*authority_satisfied -> .*committed/,
    );
    expect(output).toMatch(/ledger: valid, \d+ hash-chained events/);
  });

  it('demo:openai-agents: two interruptions with their proposal, approved on the state, one refund', () => {
    const output = runDemo('openai-agents-refund.mjs');
    expect(output).toContain('2 interruptions');
    expect(output).toMatch(/interruption for prop_\w+: "Refund 5.00 on order ord_1001"/);
    expect(output).toContain('recorded as bound evidence -> authorized');
    expect(output).toMatch(/tool result -> done \(verified\) re_\w+/);
    expect(output).toMatch(/tool result -> done \(replayed, duplicate\) re_\w+/);
    expect(output).toContain('refunds in the sandbox: 1');
    expect(output).toMatch(
      /decision path: contract_validated -> .*authority_satisfied -> .*committed/,
    );
  });

  it('demo:langgraph: an interrupt with the proposal, resumed with the approval, one refund', () => {
    const output = runDemo('langgraph-refund.mjs');
    expect(output).toMatch(/interrupt for prop_\w+: "Refund 5.00 on order ord_1001"/);
    expect(output).toContain('approval recorded as bound evidence -> authorized');
    expect(output).toMatch(/tool result -> done \(verified\) re_\w+/);
    expect(output).toMatch(/tool result -> done \(replayed, duplicate\) re_\w+/);
    expect(output).toContain('refunds in the sandbox: 1');
    expect(output).toMatch(
      /decision path: contract_validated -> .*authority_satisfied -> .*committed/,
    );
  });
});
