import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createHarness, refundArgs } from '../../test/support/guard-harness.js';
import {
  ConfigurationError,
  ContractViolationError,
  defineAction,
  ProposalNotFoundError,
} from '../index.js';
import { canonicalize } from './canonical-json.js';
import { keyedDigest, sha256Hex } from './commitment.js';

describe('contracts', () => {
  const malformed: [string, Record<string, unknown> | unknown, string][] = [
    [
      'a missing field',
      (() => {
        const { customerId: _omit, ...rest } = refundArgs();
        return rest;
      })(),
      'customerId',
    ],
    ['an unknown field', refundArgs({ note: 'hi' }), '(root)'],
    ['a wrong type', refundArgs({ amount: 42 }), 'amount'],
    [
      'a coerced string (number where a string is declared)',
      refundArgs({ orderId: 1001 }),
      'orderId',
    ],
    ['a malformed amount', refundArgs({ amount: '42' }), 'amount'],
  ];
  for (const [label, input, path] of malformed) {
    it(`rejects ${label}, records only contract_rejected and never calls the executor`, async () => {
      const { guard, refund, store, tenant, provider } = createHarness();
      const result = await guard.run(refund, { tenant, input, principal: 'agent-svc' });
      expect(result.outcome).toBe('rejected');
      expect(result.status).toBeNull();
      expect(result.revision).toBe(0);
      expect(result.issues?.map((issue) => issue.path)).toContain(path);
      expect(await store.getProposal(tenant, result.proposal)).toBeUndefined();
      const ledger = await store.readLedger({ tenant });
      expect(ledger.map((event) => event.type)).toEqual(['contract_rejected']);
      expect(ledger[0]?.data.issues).toEqual(result.issues);
      expect(provider.calls.execute).toBe(0);
      expect(await store.getEffectClaim(tenant, 'anything')).toBeUndefined();
    });
  }

  it('rejects input that is not an object at all', async () => {
    const { guard, refund, tenant } = createHarness();
    for (const input of [null, 'refund please', [1, 2], 42, undefined]) {
      const result = await guard.prepare(refund, { tenant, input, principal: 'agent-svc' });
      expect(result.outcome).toBe('rejected');
    }
  });

  it('rejects floats and unsafe integers through canonical JSON, not silently', async () => {
    const { guard, tenant, provider } = createHarness();
    const counted = defineAction({
      type: { namespace: 'crm', name: 'adjust', version: 1 },
      input: z.object({ ticket: z.string(), score: z.number() }),
      protectedFields: ['ticket', 'score'],
      policy: () => ({ decision: 'allow', reason: 'ok' }),
      execute: async () => {
        provider.calls.execute += 1;
        return { kind: 'failed_known', reason: 'unused' };
      },
      verify: async () => ({ kind: 'absent', final: true }),
    });
    const cases: [number, string][] = [
      [1.5, 'canonical_json_invalid'],
      [2 ** 53, 'canonical_json_invalid'],
      [Number.NaN, 'contract_violation'],
      [Number.POSITIVE_INFINITY, 'contract_violation'],
    ];
    for (const [score, reasonCode] of cases) {
      const result = await guard.run(counted, {
        tenant,
        input: { ticket: 't1', score },
        principal: 'p',
      });
      expect(result.outcome).toBe('rejected');
      expect(result.reasonCode).toBe(reasonCode);
    }
    expect(provider.calls.execute).toBe(0);
  });

  it('rejects an oversized input with a clear reason and stores nothing', async () => {
    const { guard, refund, store, tenant } = createHarness();
    const result = await guard.prepare(refund, {
      tenant,
      input: refundArgs({ reason: 'x'.repeat(200_000) }),
      principal: 'agent-svc',
    });
    expect(result.outcome).toBe('rejected');
    expect(result.reasonCode).toBe('input_too_large');
    expect(await store.getProposal(tenant, result.proposal)).toBeUndefined();
    const [event] = await store.readLedger({ tenant });
    expect(JSON.stringify(event)).not.toContain('xxxxxxxxxx');
  });

  it('caps the issues it records for hostile input with many unknown fields', async () => {
    const { guard, refund, tenant } = createHarness();
    const hostile: Record<string, unknown> = refundArgs();
    for (let i = 0; i < 500; i++) hostile[`field_${i}_${'y'.repeat(300)}`] = i;
    const result = await guard.prepare(refund, { tenant, input: hostile, principal: 'p' });
    expect(result.outcome).toBe('rejected');
    expect(result.issues?.length).toBeLessThanOrEqual(20);
    for (const issue of result.issues ?? []) expect(issue.message.length).toBeLessThanOrEqual(201);
  });

  it('throws ContractViolationError for a missing tenant or principal (misuse, not input)', async () => {
    const { guard, refund } = createHarness();
    for (const [tenant, principal] of [
      ['', 'p'],
      ['t', ''],
      ['t\u0000x', 'p'],
      ['t'.repeat(300), 'p'],
    ] as const) {
      await expect(
        guard.prepare(refund, { tenant, input: refundArgs(), principal }),
      ).rejects.toMatchObject({ name: 'ContractViolationError', code: 'invalid_argument' });
    }
    await expect(
      guard.prepare(refund, {
        tenant: 't',
        input: refundArgs(),
        principal: 'p',
        mode: 'yolo' as never,
      }),
    ).rejects.toBeInstanceOf(ContractViolationError);
  });

  it('refuses to define an action whose protected fields are missing, empty or not in the schema', () => {
    const base = {
      type: { namespace: 'support', name: 'refund', version: 1 },
      input: z.object({ orderId: z.string() }),
      policy: () => ({ decision: 'allow' as const, reason: 'ok' }),
      execute: async () => ({ kind: 'failed_known' as const, reason: 'x' }),
      verify: async () => ({ kind: 'unknown' as const }),
    };
    expect(() => defineAction({ ...base, protectedFields: [] })).toThrow(ConfigurationError);
    expect(() => defineAction({ ...base, protectedFields: ['nope' as 'orderId'] })).toThrow(
      /not in the input schema/,
    );
    expect(() =>
      defineAction({ ...base, protectedFields: ['orderId'], type: { ...base.type, version: 0 } }),
    ).toThrow(/version/);
    expect(() =>
      defineAction({
        ...base,
        protectedFields: ['orderId'],
        type: { ...base.type, namespace: 'Bad Space' },
      }),
    ).toThrow(/namespace/);
  });

  it('refuses an object that is not a defined action', async () => {
    const { guard } = createHarness();
    await expect(
      guard.prepare({} as never, { tenant: 't', input: {}, principal: 'p' }),
    ).rejects.toMatchObject({ code: 'action_not_defined' });
  });

  it('throws ProposalNotFoundError for an unknown proposal', async () => {
    const { guard, refund, tenant } = createHarness();
    await expect(guard.execute(refund, { tenant, proposal: 'prop_nope' })).rejects.toBeInstanceOf(
      ProposalNotFoundError,
    );
  });
});

describe('semantic effect keys', () => {
  it('map a retry with new request metadata to the same effect and replay the first proposal', async () => {
    const { guard, refund, store, tenant, provider } = createHarness();
    const first = await guard.run(refund, { tenant, input: refundArgs(), principal: 'agent' });
    const retry = await guard.run(refund, {
      tenant,
      input: refundArgs({ requestId: 'req-2', reason: 'asked again' }),
      principal: 'agent',
    });
    expect(first.outcome).toBe('verified');
    expect(retry.outcome).toBe('replayed');
    expect(retry.proposal).toBe(first.proposal);
    expect(retry.semanticEffectKey).toBe(first.semanticEffectKey);
    expect(provider.calls.execute).toBe(1);
    const events = await store.readLedger({ tenant, proposal: first.proposal });
    expect(events.map((e) => e.type)).toContain('retry_resolved');
  });

  it('make a different effect when any protected field changes', async () => {
    const { guard, refund, tenant, provider } = createHarness();
    const base = await guard.run(refund, { tenant, input: refundArgs(), principal: 'a' });
    for (const change of [
      { orderId: 'ord_2002' },
      { amount: '43.00' },
      { currency: 'USD' },
      { customerId: 'cus_bob' },
    ]) {
      const other = await guard.run(refund, {
        tenant,
        input: refundArgs(change),
        principal: 'a',
      });
      expect(other.outcome).toBe('verified');
      expect(other.semanticEffectKey).not.toBe(base.semanticEffectKey);
    }
    expect(provider.calls.execute).toBe(5);
  });

  it('are scoped by tenant', async () => {
    const { guard, refund } = createHarness();
    const a = await guard.run(refund, { tenant: 't-a', input: refundArgs(), principal: 'p' });
    const b = await guard.run(refund, { tenant: 't-b', input: refundArgs(), principal: 'p' });
    expect(a.semanticEffectKey).not.toBe(b.semanticEffectKey);
    expect(b.outcome).toBe('verified');
  });

  it('ignore unprotected fields and depend on every protected one (property)', async () => {
    const { guard, refund, tenant } = createHarness();
    const text = fc.string({ minLength: 1, maxLength: 12 });
    const amount = fc.integer({ min: 0, max: 99_99 }).map((n) => (n / 100).toFixed(2));
    await fc.assert(
      fc.asyncProperty(
        fc.record({ orderId: text, amount, customerId: text }),
        text,
        text,
        async (fields, requestA, requestB) => {
          const key = async (input: Record<string, unknown>) =>
            (await guard.prepare(refund, { tenant, input, principal: 'p', mode: 'dry_run' }))
              .semanticEffectKey;
          const a = await key(refundArgs({ ...fields, requestId: requestA, reason: requestA }));
          const b = await key(refundArgs({ ...fields, requestId: requestB, reason: requestB }));
          const c = await key(refundArgs({ ...fields, orderId: `${fields.orderId}x` }));
          expect(a).toBe(b);
          expect(c).not.toBe(a);
        },
      ),
      { numRuns: 60 },
    );
  });
});

describe('policy', () => {
  it('block: status blocked with the reason, executor never called, execute stays blocked', async () => {
    const { guard, refund, tenant, provider } = createHarness();
    const result = await guard.run(refund, {
      tenant,
      input: refundArgs({ amount: '5000.00' }),
      principal: 'agent',
    });
    expect(result).toMatchObject({ outcome: 'blocked', status: 'blocked' });
    expect(result.reasonCode).toBe('amount_over_hard_limit');
    const again = await guard.execute(refund, { tenant, proposal: result.proposal });
    expect(again.outcome).toBe('blocked');
    expect(provider.calls.execute).toBe(0);
  });

  it('allow: authorized without human evidence, recorded as a policy decision', async () => {
    const { guard, refund, store, tenant } = createHarness();
    const result = await guard.prepare(refund, { tenant, input: refundArgs(), principal: 'a' });
    expect(result).toMatchObject({ outcome: 'authorized', status: 'authorized', revision: 1 });
    const events = await store.readLedger({ tenant, proposal: result.proposal });
    expect(events.map((e) => e.type)).toEqual([
      'contract_validated',
      'policy_decided',
      'idempotency_decided',
    ]);
    expect(events[1]?.data).toMatchObject({ decision: 'allow', reasonCode: 'within_auto_limit' });
    expect(await store.listEvidence(tenant, result.proposal)).toEqual([]);
  });

  it('require_approval: awaiting_authority, and execute does not run without authority', async () => {
    const { guard, refund, tenant, provider } = createHarness();
    const result = await guard.run(refund, {
      tenant,
      input: refundArgs({ amount: '500.00' }),
      principal: 'a',
    });
    expect(result).toMatchObject({ outcome: 'authority_pending', status: 'awaiting_authority' });
    const executed = await guard.execute(refund, { tenant, proposal: result.proposal });
    expect(executed.outcome).toBe('authority_pending');
    expect(provider.calls.execute).toBe(0);
  });

  it('rejects the proposal, storing nothing, when the policy answers outside the vocabulary', async () => {
    const { guard, tenant, provider, store } = createHarness();
    const { refundAction } = await import('../../test/support/guard-harness.js');
    const odd = refundAction(provider, {
      policy: () => ({ decision: 'maybe' as never, reason: 'x' }),
    });
    const result = await guard.prepare(odd, { tenant, input: refundArgs(), principal: 'p' });
    expect(result).toMatchObject({
      outcome: 'rejected',
      status: null,
      reasonCode: 'policy_result_invalid',
    });
    expect(await store.getProposal(tenant, result.proposal)).toBeUndefined();
    const events = await store.readLedger({ tenant });
    expect(events.map((event) => event.type)).toEqual(['contract_rejected']);
  });
});

describe('dry run', () => {
  it('predicts the write, records only dry_run_predicted, claims nothing and never executes', async () => {
    const { guard, refund, store, tenant, provider } = createHarness();
    const result = await guard.prepare(refund, {
      tenant,
      input: refundArgs(),
      principal: 'a',
      mode: 'dry_run',
    });
    expect(result).toMatchObject({ outcome: 'dry_run_predicted', status: null, revision: 0 });
    expect(result.prediction).toMatchObject({ wouldBe: 'authorized', wouldWrite: true });
    expect(await store.getProposal(tenant, result.proposal)).toBeUndefined();
    const ledger = await store.readLedger({ tenant });
    expect(ledger.map((e) => e.type)).toEqual(['dry_run_predicted']);
    expect(provider.calls.execute).toBe(0);
    // A real run afterwards is a new effect, not a replay of the dry run.
    const real = await guard.run(refund, { tenant, input: refundArgs(), principal: 'a' });
    expect(real.outcome).toBe('verified');
    expect(provider.calls.execute).toBe(1);
  });

  it('predicts a block and a replay without changing anything', async () => {
    const { guard, refund, tenant } = createHarness();
    const blocked = await guard.prepare(refund, {
      tenant,
      input: refundArgs({ amount: '9999.00' }),
      principal: 'a',
      mode: 'dry_run',
    });
    expect(blocked.prediction).toMatchObject({ wouldBe: 'blocked', wouldWrite: false });
    const done = await guard.run(refund, { tenant, input: refundArgs(), principal: 'a' });
    const replay = await guard.prepare(refund, {
      tenant,
      input: refundArgs({ requestId: 'again' }),
      principal: 'a',
      mode: 'dry_run',
    });
    expect(replay.prediction).toMatchObject({ wouldBe: 'replayed', replayOf: done.proposal });
  });
});

describe('facts', () => {
  it('are what the policy decides on, stay out of the ledger, and return from read', async () => {
    const { guard, tenant, provider, store } = createHarness();
    const { refundAction } = await import('../../test/support/guard-harness.js');
    const refund = refundAction(provider, {
      policy: (input, context) => {
        const eligible = (context.facts as { eligibleMinor?: number } | null)?.eligibleMinor ?? 0;
        return Math.round(Number(input.amount) * 100) <= eligible
          ? { decision: 'allow', reason: 'within_eligible_amount' }
          : { decision: 'block', reason: 'exceeds_eligible_amount' };
      },
    });
    const allowed = await guard.prepare(refund, {
      tenant,
      input: refundArgs(),
      principal: 'agent-svc',
      facts: { eligibleMinor: 5_000, customerEmail: 'ada@example.test' },
    });
    expect(allowed.outcome).toBe('authorized');
    const blocked = await guard.prepare(refund, {
      tenant,
      input: refundArgs({ orderId: 'ord_2' }),
      principal: 'agent-svc',
      facts: { eligibleMinor: 100 },
    });
    expect(blocked).toMatchObject({ outcome: 'blocked', reasonCode: 'exceeds_eligible_amount' });
    const view = await guard.read(refund, {
      tenant,
      proposal: allowed.proposal,
      reader: 'agent-svc',
    });
    expect(view.facts).toEqual({ eligibleMinor: 5_000, customerEmail: 'ada@example.test' });
    const ledger = JSON.stringify(await store.readLedger({ tenant }));
    expect(ledger).not.toContain('ada@example.test');
    expect(ledger).toContain('factsDigest');
  });

  it('change the commitment, so evidence for other facts does not bind', async () => {
    const { guard, refund, tenant } = createHarness();
    const a = await guard.prepare(refund, {
      tenant,
      input: refundArgs({ amount: '500.00' }),
      principal: 'p',
      facts: { eligibleMinor: 1 },
    });
    const viewA = await guard.read(refund, { tenant, proposal: a.proposal, reader: 'p' });
    const other = createHarness();
    const b = await other.guard.prepare(other.refund, {
      tenant,
      input: refundArgs({ amount: '500.00' }),
      principal: 'p',
      facts: { eligibleMinor: 2 },
    });
    const viewB = await other.guard.read(other.refund, {
      tenant,
      proposal: b.proposal,
      reader: 'p',
    });
    expect(viewA.evidenceBindings?.semanticEffectKey).toBe(
      viewB.evidenceBindings?.semanticEffectKey,
    );
    expect(viewA.evidenceBindings?.proposalCommitment.value).not.toBe(
      viewB.evidenceBindings?.proposalCommitment.value,
    );
  });

  it('are rejected like input when they are not canonical JSON', async () => {
    const { guard, refund, tenant, store } = createHarness();
    const result = await guard.prepare(refund, {
      tenant,
      input: refundArgs(),
      principal: 'p',
      facts: { ratio: 0.5 },
    });
    expect(result).toMatchObject({ outcome: 'rejected', reasonCode: 'canonical_json_invalid' });
    expect(result.issues?.[0]?.path).toBe('facts');
    expect(await store.getProposal(tenant, result.proposal)).toBeUndefined();
  });

  it('are refreshed by resolve on drift, and the fresh proposal is decided on the new facts', async () => {
    const { guard, tenant, provider } = createHarness();
    const { refundAction } = await import('../../test/support/guard-harness.js');
    const refund = refundAction(provider, {
      policy: (input, context) =>
        Math.round(Number(input.amount) * 100) <=
        (context.facts as { eligibleMinor: number }).eligibleMinor
          ? { decision: 'allow', reason: 'within_eligible_amount' }
          : { decision: 'block', reason: 'exceeds_eligible_amount' },
      resolve: async () => ({
        kind: 'drifted',
        reason: 'order_refunded_elsewhere',
        facts: { eligibleMinor: 0 },
      }),
    });
    const prepared = await guard.prepare(refund, {
      tenant,
      input: refundArgs(),
      principal: 'p',
      facts: { eligibleMinor: 5_000 },
    });
    const executed = await guard.execute(refund, { tenant, proposal: prepared.proposal });
    expect(executed).toMatchObject({ outcome: 'stale', status: 'stale' });
    const fresh = await guard.read(refund, {
      tenant,
      proposal: executed.freshProposal!,
      reader: 'p',
    });
    expect(fresh).toMatchObject({
      status: 'blocked',
      reasonCode: 'exceeds_eligible_amount',
      facts: { eligibleMinor: 0 },
    });
    expect(provider.calls.execute).toBe(0);
  });
});

describe('the facts digest in the ledger', () => {
  async function factsDigestOf(
    harness: ReturnType<typeof createHarness>,
    facts: unknown,
    orderId = 'ord_1',
  ) {
    const prepared = await harness.guard.prepare(harness.refund, {
      tenant: harness.tenant,
      input: refundArgs({ orderId }),
      principal: 'agent-svc',
      facts,
    });
    const events = await harness.store.readLedger({
      tenant: harness.tenant,
      proposal: prepared.proposal,
    });
    const decided = events.find((event) => event.type === 'policy_decided');
    return decided?.data as { factsDigest?: string; factsDigestKey?: string };
  }

  it('cannot be recovered by guessing a small fact: it is keyed, not a plain SHA-256', async () => {
    const harness = createHarness();
    const { factsDigest, factsDigestKey } = await factsDigestOf(harness, { eligibleMinor: 4_217 });
    expect(factsDigest).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(factsDigestKey).toBe('development:1');
    // Whoever reads the ledger can try every small amount; none gives the digest.
    for (let guess = 0; guess <= 10_000; guess++) {
      const plain = sha256Hex(canonicalize({ eligibleMinor: guess }));
      expect(plain === factsDigest).toBe(false);
    }
  });

  it('is recomputable by an auditor holding the key, and differs per proposal for the same facts', async () => {
    const harness = createHarness();
    const facts = { eligibleMinor: 4_217 };
    const first = await factsDigestOf(harness, facts, 'ord_1');
    const second = await factsDigestOf(harness, facts, 'ord_2');
    expect(first.factsDigest).not.toBe(second.factsDigest);
    const events = await harness.store.readLedger({ tenant: harness.tenant });
    const proposal = events.find((event) => event.type === 'policy_decided')?.proposal;
    expect(
      keyedDigest(harness.keyRing, 'facts', harness.keyRing.current, 'sideguard/policy-facts/v1', {
        tenant: harness.tenant,
        proposal: proposal ?? null,
        facts,
      }),
    ).toBe(first.factsDigest);
  });
});
