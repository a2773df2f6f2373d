/**
 * The gate end to end through the built CLI: the exact output on the shipped scenarios, a gate
 * that must fail on an unsafe runner, reports regenerated from files alone, and bad input.
 */
import {
  chmodSync,
  cpSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectRoot, runCli } from '../support/cli.js';
import { postgresTestUrl } from '../support/postgres.js';

const scratch = mkdtempSync(join(tmpdir(), 'sideguard-gate-'));
const outputDir = join(scratch, 'out');
let gate: ReturnType<typeof runCli>;

beforeAll(() => {
  gate = runCli(['gate', '--output-dir', outputDir]);
}, 120_000);
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('sideguard gate on the shipped scenarios', () => {
  it('prints the issue’s block, every scenario passed=true, and exits 0', () => {
    expect(gate.stderr).toMatch(/reports: .*index\.html/);
    expect(gate.status).toBe(0);
    const lines = gate.stdout.trim().split('\n');
    expect(lines.slice(0, 6)).toEqual([
      `PASS gate scenarios=${lines.length - 1}`,
      '- safe_refund: committed writes=1 passed=true',
      '- duplicate_retry: retry_resolved writes=1 passed=true',
      '- unsafe_amount: blocked writes=0 passed=true',
      '- ambiguous_missing_fields: rejected_before_execution writes=0 passed=true',
      '- partial_failure: compensation_required writes=1 passed=true',
    ]);
    expect(lines.length - 1).toBeGreaterThanOrEqual(20);
    for (const line of lines.slice(1))
      expect(line).toMatch(/^- [a-z0-9_]+: [a-z_]+ writes=\d passed=true$/);
  });

  it('prints what the README shows, line for line, up to its ellipsis', () => {
    const readme = readFileSync(join(projectRoot, 'README.md'), 'utf8');
    const block = /It prints\n\n```\n([\s\S]*?)```/.exec(readme)?.[1] ?? '';
    const shown = block.trim().split('\n');
    expect(shown.at(-1)).toBe('…');
    expect(shown.length).toBeGreaterThan(5);
    expect(
      gate.stdout
        .trim()
        .split('\n')
        .slice(0, shown.length - 1),
    ).toEqual(shown.slice(0, -1));
  });

  it('writes ledgers, Markdown and JSON reports, sandbox exports and one self-contained index.html', () => {
    const reports = readdirSync(join(outputDir, 'reports'));
    expect(reports).toContain('index.html');
    expect(reports).toContain('safe_refund.md');
    expect(reports).toContain('safe_refund.json');
    expect(existsSync(join(outputDir, 'ledgers', 'safe_refund.jsonl'))).toBe(true);
    expect(existsSync(join(outputDir, 'sandbox_state', 'safe_refund.json'))).toBe(true);
    const partial = JSON.parse(
      readFileSync(join(outputDir, 'reports', 'partial_failure.json'), 'utf8'),
    );
    expect(partial).toMatchObject({ duplicate_prevented: false, compensation_required: true });
    const markdown = readFileSync(join(outputDir, 'reports', 'partial_failure.md'), 'utf8');
    for (const key of [
      'action_status',
      'external_write_count',
      'duplicate_prevented',
      'unsafe_action_blocked',
      'compensation_required',
      'decision_path',
    ]) {
      expect(markdown).toContain(key);
    }
    expect(markdown).toContain(
      'contract_validated -> policy_decided -> idempotency_decided -> commit_started',
    );
    const html = readFileSync(join(outputDir, 'reports', 'index.html'), 'utf8');
    expect(html).not.toMatch(/(src|href)=["']https?:/);
    expect(html).not.toContain('<script');
    expect((html.match(/<svg/g) ?? []).length).toBeGreaterThanOrEqual(20);
  });

  it('counts writes from the sandbox’s own receipts, not from the runner', () => {
    const report = JSON.parse(
      readFileSync(join(outputDir, 'reports', 'concurrent_duplicates.json'), 'utf8'),
    );
    const sandbox = JSON.parse(
      readFileSync(join(outputDir, 'sandbox_state', 'concurrent_duplicates.json'), 'utf8'),
    );
    const refunds = sandbox.observations.receipts.filter(
      (r: { operation: string }) => r.operation === 'create_refund',
    );
    expect(refunds).toHaveLength(1);
    expect(report.external_write_count).toBe(1);
    expect(report.duplicate_prevented).toBe(true);
    expect(report.proposals.length).toBeGreaterThan(1);
  });

  it('`run` of one scenario leaves the gate’s summary and index scenarios alone', () => {
    const summaryFile = join(outputDir, 'reports', 'gate.json');
    const before = readFileSync(summaryFile, 'utf8');
    const run = runCli(['run', '--case', 'dry_run', '--output-dir', outputDir]);
    expect(run.status).toBe(0);
    expect(run.stdout).toContain('- dry_run: dry_run_predicted writes=0 passed=true');
    expect(readFileSync(summaryFile, 'utf8')).toBe(before);
    const html = readFileSync(join(outputDir, 'reports', 'index.html'), 'utf8');
    expect((html.match(/<svg/g) ?? []).length).toBe(JSON.parse(before).scenarios.length);
  });

  it('leaves ledgers that `sideguard ledger verify` accepts', () => {
    const run = runCli([
      'ledger',
      'verify',
      join(outputDir, 'ledgers', 'two_of_three_approval.jsonl'),
    ]);
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/^PASS ledger/);
  });

  it('regenerates a report from the files alone, identical to the gate’s', () => {
    const file = join(outputDir, 'reports', 'lost_response_keys_ignored.json');
    const before = JSON.parse(readFileSync(file, 'utf8'));
    rmSync(file);
    rmSync(join(outputDir, 'reports', 'lost_response_keys_ignored.md'));
    const run = runCli([
      'report',
      '--case',
      'lost_response_keys_ignored',
      '--output-dir',
      outputDir,
    ]);
    expect(run.status).toBe(0);
    expect(run.stdout).toContain(
      '- lost_response_keys_ignored: retry_resolved writes=1 passed=true',
    );
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual(before);
    expect(existsSync(join(outputDir, 'reports', 'lost_response_keys_ignored.md'))).toBe(true);
  });

  it('judges a tampered ledger file as a failure (I7) when the report is regenerated', () => {
    const copy = join(scratch, 'tampered');
    cpSync(outputDir, copy, { recursive: true });
    const ledger = join(copy, 'ledgers', 'safe_refund.jsonl');
    const lines = readFileSync(ledger, 'utf8').trim().split('\n');
    const entry = JSON.parse(lines[1]!);
    entry.data.decision = 'allow';
    entry.data.reasonCode = 'approved_by_ceo';
    lines[1] = JSON.stringify(entry);
    writeFileSync(ledger, `${lines.join('\n')}\n`);
    const run = runCli(['report', '--case', 'safe_refund', '--output-dir', copy]);
    expect(run.status).toBe(1);
    expect(run.stdout).toContain('passed=false');
    const report = JSON.parse(readFileSync(join(copy, 'reports', 'safe_refund.json'), 'utf8'));
    expect(report.invariants.find((v: { id: string }) => v.id === 'I7').verdict).toBe('fail');
  });

  it('judges a ledger file cut at its end as a failure (I7), against the head the store had', () => {
    const copy = join(scratch, 'truncated');
    cpSync(outputDir, copy, { recursive: true });
    const ledger = join(copy, 'ledgers', 'duplicate_retry.jsonl');
    const lines = readFileSync(ledger, 'utf8').trim().split('\n');
    writeFileSync(ledger, `${lines.slice(0, -1).join('\n')}\n`);
    const run = runCli(['report', '--case', 'duplicate_retry', '--output-dir', copy]);
    expect(run.status).toBe(1);
    const report = JSON.parse(readFileSync(join(copy, 'reports', 'duplicate_retry.json'), 'utf8'));
    const i7 = report.invariants.find((v: { id: string }) => v.id === 'I7');
    expect(i7.verdict).toBe('fail');
    expect(i7.evidence).toContain('removed from the end');
  });
});

describe('a gate that must fail', () => {
  it('prints FAIL, names the violated invariants and exits 1 when a runner resends blindly', () => {
    const out = join(scratch, 'unsafe');
    const run = runCli([
      'gate',
      '--output-dir',
      out,
      '--scenarios',
      join(projectRoot, 'test', 'fixtures', 'unsafe-scenarios'),
    ]);
    expect(run.status).toBe(1);
    const lines = run.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^FAIL gate scenarios=2 failed=1 violated=.*I1/);
    expect(lines[0]).toContain('I5');
    expect(lines).toContain('- safe_control: committed writes=1 passed=true');
    expect(lines.find((l) => l.startsWith('- unsafe_blind_resend:'))).toMatch(
      /writes=2 passed=false failed=.*I1.*I5/,
    );
    const report = JSON.parse(
      readFileSync(join(out, 'reports', 'unsafe_blind_resend.json'), 'utf8'),
    );
    expect(report.invariants.find((v: { id: string }) => v.id === 'I1').evidence).toMatch(
      /2 payments\.create_refund writes/,
    );
  });

  it('is not fooled by a sandbox export whose second receipt was deleted: the state still holds the refund', () => {
    const out = join(scratch, 'unsafe');
    const file = join(out, 'sandbox_state', 'unsafe_blind_resend.json');
    const exported = JSON.parse(readFileSync(file, 'utf8'));
    const refunds = exported.observations.receipts.filter(
      (r: { operation: string }) => r.operation === 'create_refund',
    );
    const hidden = refunds[1].receiptId;
    exported.observations.receipts = exported.observations.receipts.filter(
      (r: { receiptId: string }) => r.receiptId !== hidden,
    );
    exported.observations.requests = exported.observations.requests.filter(
      (r: { receiptId: string | null }) => r.receiptId !== hidden,
    );
    writeFileSync(file, JSON.stringify(exported));
    const scenarios = join(projectRoot, 'test', 'fixtures', 'unsafe-scenarios');
    const run = runCli([
      'report',
      '--case',
      'unsafe_blind_resend',
      '--output-dir',
      out,
      '--scenarios',
      scenarios,
    ]);
    expect(run.status).toBe(1);
    const report = JSON.parse(
      readFileSync(join(out, 'reports', 'unsafe_blind_resend.json'), 'utf8'),
    );
    const i1 = report.invariants.find((v: { id: string }) => v.id === 'I1');
    expect(i1.verdict).toBe('fail');
    expect(i1.evidence).toContain('contradicts itself');
  });
});

describe('bad input gets one clear line and a non-zero exit', () => {
  it('an unknown case name', () => {
    const run = runCli(['run', '--case', 'no_such_case', '--output-dir', join(scratch, 'x')]);
    expect(run.status).toBe(2);
    expect(run.stderr.trim()).toMatch(
      /^sideguard: unknown scenario "no_such_case"; known scenarios: safe_refund, /,
    );
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
  });

  it('an unwritable output directory', () => {
    const locked = join(scratch, 'locked');
    cpSync(
      join(projectRoot, 'fixtures', 'verifier', 'cases.json'),
      join(scratch, 'placeholder.json'),
    );
    writeFileSync(locked, 'a file, not a directory');
    const run = runCli(['gate', '--output-dir', join(locked, 'sub')]);
    expect(run.status).toBe(2);
    expect(run.stderr.trim()).toMatch(/^sideguard: output directory .* is not writable/);
    if (process.getuid?.() !== 0) {
      const readOnly = join(scratch, 'read-only');
      cpSync(join(projectRoot, 'fixtures', 'verifier', 'plans'), readOnly, { recursive: true });
      chmodSync(readOnly, 0o500);
      expect(runCli(['gate', '--output-dir', readOnly]).status).toBe(2);
    }
  });

  it('a malformed plan file, and a plan with an unknown step', () => {
    const dir = join(scratch, 'bad-scenarios');
    cpSync(join(projectRoot, 'test', 'fixtures', 'unsafe-scenarios'), dir, { recursive: true });
    writeFileSync(join(dir, 'plans', 'safe_control.json'), '{ "id": "safe_control", "primary": ');
    const broken = runCli(['gate', '--output-dir', join(scratch, 'y'), '--scenarios', dir]);
    expect(broken.status).toBe(2);
    expect(broken.stderr.trim()).toMatch(
      /^sideguard: fixture file .*safe_control\.json is not valid JSON/,
    );
    writeFileSync(
      join(dir, 'plans', 'safe_control.json'),
      JSON.stringify({
        id: 'safe_control',
        primary: 'refund',
        steps: [{ do: 'teleport', ref: 'refund' }],
      }),
    );
    const unknown = runCli(['gate', '--output-dir', join(scratch, 'y'), '--scenarios', dir]);
    expect(unknown.status).toBe(2);
    expect(unknown.stderr.trim()).toMatch(
      /^sideguard: fixture file .*safe_control\.json is invalid at steps\.0\.do/,
    );
  });

  it('a report for a scenario that never ran', () => {
    const run = runCli(['report', '--case', 'safe_refund', '--output-dir', join(scratch, 'empty')]);
    expect(run.status).toBe(2);
    expect(run.stderr.trim()).toMatch(
      /^sideguard: cannot read the run manifest .*; run the scenario first/,
    );
  });

  it('an unsupported store URL, without echoing its password', () => {
    const run = runCli([
      'gate',
      '--output-dir',
      join(scratch, 'z'),
      '--store',
      'mysql://root:hunter2@db/x',
    ]);
    expect(run.status).toBe(2);
    expect(run.stderr).not.toContain('hunter2');
  });
});

describe('the gate on PostgreSQL', () => {
  it('passes the shipped scenarios with --store postgres://…', async () => {
    const url = await postgresTestUrl();
    if (url === undefined) return;
    const run = runCli(['gate', '--output-dir', join(scratch, 'pg'), '--store', url]);
    expect(run.stderr).not.toMatch(/Error/);
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/^PASS gate scenarios=\d+/);
  }, 120_000);
});

describe('two gates on one output directory', () => {
  it('refuses the second with exit 2 and leaves the first one’s run and summary intact', async () => {
    const out = join(scratch, 'shared');
    const { spawn } = await import('node:child_process');
    const { cliPath } = await import('../support/cli.js');
    const first = spawn(process.execPath, [cliPath, 'gate', '--output-dir', out], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let firstOut = '';
    first.stdout.on('data', (chunk: Buffer) => {
      firstOut += chunk.toString();
    });
    const firstExit = new Promise<number | null>((resolve) => first.on('exit', resolve));
    // Wait until the first gate holds the sandbox state.
    for (let i = 0; i < 100 && !existsSync(join(out, 'sandbox_state', '.honour')); i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await new Promise((resolve) => setTimeout(resolve, 300));
    const second = runCli(['gate', '--output-dir', out]);
    expect(second.status).toBe(2);
    expect(second.stderr).toMatch(/is another gate using --output-dir/);
    expect(await firstExit).toBe(0);
    expect(firstOut).toMatch(/^PASS gate/);
    expect(existsSync(join(out, 'reports', 'gate.json'))).toBe(true);
  }, 120_000);
});
