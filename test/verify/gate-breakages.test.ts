/**
 * Break a guarantee of the guard on purpose (the core's test-only breakage switch) and the gate
 * must fail, naming the invariant, from the evidence alone (the exported ledger, the sandbox's
 * own export, the store's records). Each case runs the shipped scenario that exercises the
 * guarantee through a broken copy of the guard; the same scenario passes with the guard intact.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Breakage } from '../../src/core/breakages.js';
import { runGate } from '../../src/verify/gate.js';
import type { InvariantId } from '../../src/verify/report-types.js';
import type { GuardUnderTest } from '../../src/verify/run-guard.js';
import { preparesMissEachOther, swappedSnapshots } from '../support/race-stores.js';

let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'sideguard-breakages-'));
});
afterAll(async () => {
  if (process.env.KEEP_BREAKAGES === undefined) await rm(scratch, { recursive: true, force: true });
  else console.log(scratch);
});

async function gateWith(name: string, scenario: string, underTest: GuardUnderTest) {
  const run = await runGate({
    outputDir: join(scratch, name),
    only: [scenario],
    writeSummary: false,
    underTest,
  });
  const [report] = run.reports;
  if (report === undefined) throw new Error(`no report for ${scenario}`);
  const failed = (id: InvariantId) =>
    report.invariants.find((verdict) => verdict.id === id)?.verdict === 'fail';
  const evidence = (id: InvariantId) =>
    report.invariants.find((verdict) => verdict.id === id)?.evidence ?? '';
  return { summary: run.summary, report, failed, evidence };
}

const broken = (...breakages: Breakage[]): GuardUnderTest => ({ breakages: new Set(breakages) });

describe('the race the effect claim exists for', () => {
  it('with the claim intact, 16 proposals of one effect racing at a provider that ignores keys write once', async () => {
    const run = await gateWith('race', 'concurrent_duplicates_keys_ignored', {
      wrapStore: preparesMissEachOther,
    });
    expect(run.report.proposals.length).toBe(16);
    expect(run.report.external_write_count).toBe(1);
    expect(run.failed('I1')).toBe(false);
    expect(run.summary.passed).toBe(true);
  });

  it('with the claim skipped, a provider that honours keys hides it: one write, I1 holds (the blind spot)', async () => {
    const run = await gateWith('blind-spot', 'concurrent_duplicates', {
      ...broken('effect_claim_skipped'),
      wrapStore: preparesMissEachOther,
    });
    expect(run.report.external_write_count).toBe(1);
    expect(run.failed('I1')).toBe(false);
  });
});

describe('the gate names the invariant a broken guard violates', () => {
  it('effect claim skipped: racing proposals at a provider that ignores keys write more than once (I1)', async () => {
    const run = await gateWith('claim', 'concurrent_duplicates_keys_ignored', {
      ...broken('effect_claim_skipped'),
      wrapStore: preparesMissEachOther,
    });
    expect(run.summary.passed).toBe(false);
    expect(run.report.external_write_count).toBeGreaterThan(1);
    expect(run.failed('I1')).toBe(true);
    expect(run.evidence('I1')).toMatch(/committed \d+ payments\.create_refund writes for effect/);
    expect(run.summary.scenarios[0]?.failures).toContain('I1');
  });

  it('verify-not-resend broken: a lost response is resent with a new key, and the provider writes twice (I1, I5)', async () => {
    const run = await gateWith(
      'resend',
      'lost_response_keys_ignored',
      broken('resend_without_verification'),
    );
    expect(run.summary.passed).toBe(false);
    expect(run.report.external_write_count).toBe(2);
    expect(run.failed('I1')).toBe(true);
    expect(run.failed('I5')).toBe(true);
    expect(run.evidence('I5')).toMatch(/resent without a final absence|started \d+ commits/);
  });

  it('the approval tally counts expired approvals: the write is judged by its approvals’ windows (I9, I2)', async () => {
    const run = await gateWith('tally', 'expired_approval', broken('tally_counts_expired'));
    expect(run.summary.passed).toBe(false);
    expect(run.report.external_write_count).toBe(1);
    expect(run.failed('I9')).toBe(true);
    expect(run.evidence('I9')).toMatch(
      /commit_started at \S+ counted an approval out of its window: finance-lead's approval expired at /,
    );
    expect(run.failed('I2')).toBe(true);
    expect(run.evidence('I2')).toMatch(/with 0 of 2 required approvals in force/);
    expect(run.summary.scenarios[0]?.failures).toEqual(expect.arrayContaining(['I2', 'I9']));
  });

  it('the proposal’s time to live is not checked: a write after it expired (I2)', async () => {
    const run = await gateWith('expiry', 'expired_proposal', broken('expiry_not_checked'));
    expect(run.summary.passed).toBe(false);
    expect(run.report.external_write_count).toBe(1);
    expect(run.failed('I2')).toBe(true);
    expect(run.evidence('I2')).toMatch(/after the proposal expired at /);
  });

  it('approvals not bound to their proposal: tampered approvals authorize a write (I9)', async () => {
    const run = await gateWith(
      'binding',
      'tampered_approval',
      broken('approval_not_bound_to_input'),
    );
    expect(run.summary.passed).toBe(false);
    expect(run.failed('I9')).toBe(true);
    expect(run.evidence('I9')).toMatch(/evidence binds another proposal commitment/);
  });

  it('the snapshot is not checked against its commitment: a snapshot changed in the store is executed (I9)', async () => {
    const run = await gateWith('commitment', 'safe_refund', {
      ...broken('commitment_check_skipped'),
      wrapStore: (store, keyRing) =>
        swappedSnapshots(store, keyRing, (input) => ({ ...input, amount: '1.00' })),
    });
    expect(run.summary.passed).toBe(false);
    expect(run.failed('I9')).toBe(true);
    expect(run.evidence('I9')).toMatch(
      /executed an input whose commitment is not the proposal's \(the stored snapshot was changed\)/,
    );
  });
});
