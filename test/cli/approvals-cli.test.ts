/**
 * `sideguard approvals|approve|deny|resolve` spawned as the built CLI against an SQLite store
 * the test's own guard writes to: every rule the approvals service enforces, with its exit code
 * and message, hostile text escaped, and the outage case (executor threw → failed_unknown, resends
 * not declared safe) settled by an operator and visible in the exported ledger.
 */
import { writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createGuard, type Guard, keyRingFromEnvironmentValue } from 'sideguard';
import { createSqliteStore, type SqliteStore } from 'sideguard/sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashApproverSecret } from '../../src/approvals/approver-secret.js';
import { runCli } from '../support/cli.js';
import { refund } from './fixtures/approvals.config.mjs';

const CONFIG = join(import.meta.dirname, 'fixtures', 'approvals.config.mjs');
const KEYS = `current=k1:1;effect=k1:1;k1:1=${Buffer.alloc(32, 9).toString('base64url')}`;
const PEOPLE = ['finance-a', 'finance-b', 'finance-c', 'auditor', 'ops-oncall'] as const;
type Person = (typeof PEOPLE)[number];
const secretOf = (person: Person) => `secret-of-${person}-0123`;

let dir: string;
let store: SqliteStore;
let guard: Guard;
let env: Record<string, string>;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'sideguard-approvals-cli-'));
  const approvers = await Promise.all(
    PEOPLE.map(async (id) => ({
      id,
      secretHash: await hashApproverSecret(secretOf(id), { cost: 1024 }),
    })),
  );
  env = {
    SIDEGUARD_KEYS: KEYS,
    TEST_STORE: join(dir, 'gateway.db'),
    TEST_APPROVERS: JSON.stringify(approvers),
  };
  store = createSqliteStore({ path: env.TEST_STORE as string });
  guard = createGuard({ store, keyRing: keyRingFromEnvironmentValue(KEYS) });
});

afterAll(async () => {
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

/** Runs the CLI as `person` (secret from the environment unless `secret` says otherwise). */
function as(person: Person, args: readonly string[], options: { secret?: string } = {}) {
  return runCli([...args, '--as', person, '--config', CONFIG], {
    env: { ...env, SIDEGUARD_APPROVER_SECRET: options.secret ?? secretOf(person) },
  });
}

let orders = 0;
async function propose(amount = '250', note = 'customer called'): Promise<string> {
  orders += 1;
  const prepared = await guard.prepare(refund, {
    tenant: 'acme',
    input: { orderId: `ord_${orders}`, amount, note },
    principal: 'support',
    agent: 'support-bot',
  });
  expect(prepared.status).toBe(amount > '100' ? 'awaiting_authority' : 'authorized');
  return prepared.proposal;
}

const statusOf = async (proposal: string) => (await store.getProposal('acme', proposal))?.status;

describe('approvals list and show', () => {
  it('lists what waits for the approver with hostile text escaped, and shows exactly what would happen', async () => {
    const proposal = await propose('300', '\u001b[2J<script>alert(1)</script>\u202e');
    const list = as('finance-a', ['approvals', 'list']);
    expect(list.status).toBe(0);
    expect(list.stdout).toContain(proposal);
    expect(list.stdout).toContain('approvals 0/2');
    expect(list.stdout).not.toContain('\u001b');
    expect(list.stdout).not.toContain('\u202e');
    expect(list.stdout).toContain('\\u001b[2J<script>');

    const json = as('finance-a', ['approvals', 'list', '--json', '--action', refund.typeName]);
    expect(JSON.parse(json.stdout).map((item: { proposal: string }) => item.proposal)).toContain(
      proposal,
    );

    const show = as('finance-b', ['approvals', 'show', proposal]);
    expect(show.status).toBe(0);
    expect(show.stdout).toContain(`proposal     ${proposal} (tenant acme)`);
    expect(show.stdout).toContain('protected    amount = 300');
    expect(show.stdout).toContain('policy       require_approval: over_auto_limit');
    expect(show.stdout).toContain('requested by support via agent support-bot');
    expect(show.stdout).toMatch(/commitment {3}hmac-sha256 \S+ \(key k1:1\)/);
    expect(show.stdout).toContain('you          may approve or deny');
  });
});

describe('approve and deny', () => {
  it('counts two distinct approvers into authorized, refusing a second approval by the same one', async () => {
    const proposal = await propose();
    const first = as('finance-a', ['approve', proposal]);
    expect(first.status).toBe(0);
    expect(first.stdout).toContain('approvals 1/2, status awaiting_authority');

    const twice = as('finance-a', ['approve', proposal]);
    expect(twice.status).toBe(1);
    expect(twice.stderr).toContain('refused (already_decided): finance-a already approved');
    expect(twice.stderr).toContain('Nothing was changed.');

    const second = as('finance-b', ['approve', proposal, '--json']);
    expect(second.status).toBe(0);
    expect(JSON.parse(second.stdout)).toMatchObject({
      decision: 'approve',
      status: 'authorized',
      approvals: { required: 2, approvedBy: ['finance-a', 'finance-b'], rejectedBy: null },
    });

    const late = as('finance-c', ['deny', proposal, '--reason', 'too late']);
    expect(late.status).toBe(1);
    expect(late.stderr).toContain('refused (proposal_not_pending)');
    expect(await statusOf(proposal)).toBe('authorized');
  });

  it('records a denial with its reason, which vetoes; a denial without a reason is bad input', async () => {
    const proposal = await propose();
    const noReason = as('finance-c', ['deny', proposal]);
    expect(noReason.status).toBe(2);
    expect(noReason.stderr).toContain("required option '--reason <text>'");
    const denied = as('finance-c', ['deny', proposal, '--reason', 'duplicate of ord_7']);
    expect(denied.status).toBe(0);
    expect(denied.stdout).toContain('status denied');
    expect(await statusOf(proposal)).toBe('denied');
  });

  it('refuses an approver not in the rule, a forged id, and a wrong or missing secret', async () => {
    const proposal = await propose();
    const auditor = as('auditor', ['approve', proposal]);
    expect(auditor.status).toBe(1);
    // Not an authority, reader or operator of the action: it looks exactly like a missing id.
    expect(auditor.stderr).toContain('refused (proposal_not_found)');

    const forged = as('finance-a', ['approve', 'prop_forged_0000']);
    expect(forged.status).toBe(1);
    expect(forged.stderr).toContain('refused (proposal_not_found)');

    const wrong = as('finance-a', ['approve', proposal], { secret: 'not-the-right-secret' });
    expect(wrong.status).toBe(1);
    expect(wrong.stderr).toContain('refused (authentication_failed)');

    const missing = runCli(['approve', proposal, '--as', 'finance-a', '--config', CONFIG], {
      env: { ...env, SIDEGUARD_APPROVER_SECRET: '' },
    });
    expect(missing.status).toBe(2);
    expect(missing.stderr).toContain('pass --secret-file FILE or set SIDEGUARD_APPROVER_SECRET');

    const file = join(dir, 'finance-a.secret');
    writeFileSync(file, `${secretOf('finance-a')}\n`, { mode: 0o600 });
    const fromFile = runCli(
      ['approve', proposal, '--as', 'finance-a', '--config', CONFIG, '--secret-file', file],
      { env: { ...env, SIDEGUARD_APPROVER_SECRET: '' } },
    );
    expect(fromFile.status).toBe(0);
    expect(await statusOf(proposal)).toBe('awaiting_authority');
  });

  it('refuses to approve an expired proposal and expires it', async () => {
    const past = createGuard({
      store,
      keyRing: keyRingFromEnvironmentValue(KEYS),
      clock: { now: () => Date.now() - 3_600_000 },
    });
    const old = await past.prepare(refund, {
      tenant: 'acme',
      input: { orderId: 'ord_old', amount: '500' },
      principal: 'support',
    });
    const late = as('finance-a', ['approve', old.proposal]);
    expect(late.status).toBe(1);
    expect(late.stderr).toContain('refused (proposal_expired)');
    expect(await statusOf(old.proposal)).toBe('expired');
  });
});

describe('resolve: the outage case', () => {
  it('an operator settles an unknown outcome as absent; it is in the ledger and the effect is free again', async () => {
    // An hour ago, so the settling window (when an attempt may still land) has passed.
    const past = createGuard({
      store,
      keyRing: keyRingFromEnvironmentValue(KEYS),
      clock: { now: () => Date.now() - 3_600_000 },
    });
    process.env.TEST_PROVIDER = 'outage';
    let outage: Awaited<ReturnType<Guard['run']>>;
    try {
      outage = await past.run(refund, {
        tenant: 'acme',
        input: { orderId: 'ord_outage', amount: '40' },
        principal: 'support',
      });
    } finally {
      delete process.env.TEST_PROVIDER;
    }
    expect(outage.status).toBe('failed_unknown');

    const approver = as('finance-a', ['resolve', outage.proposal, '--absent', '--checked', 'x']);
    expect(approver.status).toBe(1);
    // An approver may read the proposal but is not one of its operators.
    expect(approver.stderr).toContain('refused (operator_not_declared)');
    const both = as('ops-oncall', [
      'resolve',
      outage.proposal,
      '--absent',
      '--present',
      're_1',
      '--checked',
      'x',
    ]);
    expect(both.status).toBe(2);

    const resolved = as('ops-oncall', [
      'resolve',
      outage.proposal,
      '--absent',
      '--checked',
      'Stripe dashboard: no refund for ord_outage between 10:00 and 10:30',
    ]);
    expect(resolved.stderr).toBe('');
    expect(resolved.status).toBe(0);
    expect(resolved.stdout).toContain(`resolved ${outage.proposal} as ops-oncall: failed_known`);
    expect(await statusOf(outage.proposal)).toBe('failed_known');

    const again = as('ops-oncall', ['resolve', outage.proposal, '--absent', '--checked', 'x']);
    expect(again.status).toBe(1);
    expect(again.stderr).toContain('refused (proposal_not_resolvable)');

    const timeline = as('ops-oncall', ['approvals', 'timeline', outage.proposal]);
    expect(timeline.status).toBe(0);
    expect(timeline.stdout).toContain('chain verifies');
    expect(timeline.stdout).toMatch(/operator_resolved → failed_known/);

    const retry = await guard.run(refund, {
      tenant: 'acme',
      input: { orderId: 'ord_outage', amount: '40' },
      principal: 'support',
    });
    expect(retry.proposal).not.toBe(outage.proposal);
    expect(retry.result?.receipts.map((receipt) => receipt.id)).toEqual(['re_direct']);

    const file = join(dir, 'ledger.jsonl');
    writeFileSync(file, await guard.exportLedger({ tenant: 'acme' }));
    const verified = runCli(['ledger', 'verify', file]);
    expect(verified.status).toBe(0);
    const resolution = (await guard.exportLedger({ tenant: 'acme' }))
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line))
      .find((event) => event.type === 'operator_resolved');
    expect(resolution).toMatchObject({ proposal: outage.proposal, status: 'failed_known' });
    expect(JSON.stringify(resolution)).toContain('ops-oncall');
    expect(JSON.stringify(resolution)).not.toContain('Stripe dashboard');
    // Eight CLI processes one after another: more than the default 30 s on a loaded machine.
  }, 90_000);
});

describe('sideguard sweep', () => {
  it('expires due proposals and verifies due unknown outcomes, with a summary and exit codes', async () => {
    const past = createGuard({
      store,
      keyRing: keyRingFromEnvironmentValue(KEYS),
      clock: { now: () => Date.now() - 3_600_000 },
    });
    await past.prepare(refund, {
      tenant: 'acme',
      input: { orderId: 'ord_sweep_expire', amount: '700' },
      principal: 'support',
    });
    process.env.TEST_PROVIDER = 'outage';
    let unknown: Awaited<ReturnType<Guard['run']>>;
    try {
      unknown = await past.run(refund, {
        tenant: 'acme',
        input: { orderId: 'ord_sweep_unknown', amount: '20' },
        principal: 'support',
      });
    } finally {
      delete process.env.TEST_PROVIDER;
    }
    expect(unknown.status).toBe('failed_unknown');

    const strict = runCli(['sweep', '--config', CONFIG, '--fail-on-unresolved'], { env });
    expect(strict.status).toBe(1);
    // Other tests' proposals share the store: at least ours is expired and unresolved.
    expect(strict.stdout).toMatch(
      /expired [1-9]\d*, verified 0, released 0, still unresolved [1-9]/,
    );
    expect(strict.stderr).toContain(`swept ${refund.typeName} in acme`);

    // The first sweep's unknown verification made the next one due verificationDelayMs (1 s) later.
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    const found = runCli(['sweep', '--config', CONFIG, '--json'], {
      env: { ...env, TEST_VERIFY: 'present' },
    });
    expect(found.status).toBe(0);
    const summary = JSON.parse(found.stdout);
    expect(summary).toMatchObject({ expired: 0, unresolved: 0, errors: [] });
    expect(summary.verified).toBeGreaterThanOrEqual(1);
    expect(await statusOf(unknown.proposal)).toBe('verified');

    const broken = runCli(['sweep', '--config', join(dir, 'missing.config.mjs')], { env });
    expect(broken.status).toBe(2);
    const noKeys = runCli(['sweep', '--config', CONFIG], { env: { ...env, SIDEGUARD_KEYS: '' } });
    expect(noKeys.status).toBe(2);
    expect(noKeys.stderr).toContain('SIDEGUARD_KEYS is not set');
  });
});
