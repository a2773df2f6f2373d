import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ledgerOf, ofType, PRINCIPAL } from '../../test/support/evidence-helpers.js';
import { createHarness, refundAction, refundArgs } from '../../test/support/guard-harness.js';
import { ContractViolationError } from './errors.js';
import type { GuardStore } from './store.js';

const principal = PRINCIPAL;
/** 119 letters and an emoji: a cut at 120 UTF-16 units splits the emoji's surrogate pair. */
const EMOJI_AT_THE_CUT = `${'x'.repeat(119)}😀 and more`;
const LONE_SURROGATE = 'card \uD83D declined';

/** An object whose every listed field throws when read. */
function throwingGetters(keys: readonly string[]): Record<string, unknown> {
  const object = {};
  for (const key of keys) {
    Object.defineProperty(object, key, {
      enumerable: true,
      get() {
        throw new Error(`hostile ${key}`);
      },
    });
  }
  return object as Record<string, unknown>;
}

/** A proxy on which every operation throws, including `then`, `toString` and key listing. */
const trap = () => {
  throw new Error('hostile proxy');
};
const hostileProxy = new Proxy(
  {},
  { get: trap, has: trap, ownKeys: trap, getPrototypeOf: trap, getOwnPropertyDescriptor: trap },
);

/** A thrown value with a throwing `code`, `name`, `message` and `toString`. */
const hostileError = throwingGetters(['code', 'name', 'message', 'toString']);

describe('host values after the provider wrote (window 4)', () => {
  it('records an unknown outcome whose reason is cut through an emoji, and verifies it', async () => {
    const h = createHarness();
    const refund = refundAction(h.provider, {
      execute: async (_input, context) => {
        h.provider.writes.set(context.providerIdempotencyKey, { id: 're_1', provider: 'payments' });
        return { kind: 'failed_unknown', reason: EMOJI_AT_THE_CUT };
      },
    });
    const result = await h.guard.run(refund, { tenant: h.tenant, input: refundArgs(), principal });
    expect(result).toMatchObject({ status: 'verified', outcome: 'verified' });
    const [unknown] = ofType(await ledgerOf(h, result.proposal), 'commit_outcome_unknown');
    expect(unknown?.data.reasonCode).toMatch(/^reason_not_a_code:[A-Za-z0-9_-]{16}$/);
  });

  it('keeps reconcile working when the verifier answers a reason with a lone surrogate', async () => {
    const h = createHarness();
    const refund = refundAction(h.provider, {
      verify: async () => ({ kind: 'unknown', reason: LONE_SURROGATE }),
    });
    h.provider.steps = ['lost_after_write'];
    const result = await h.guard.run(refund, { tenant: h.tenant, input: refundArgs(), principal });
    expect(result.status).toBe('verification_pending');
    h.clock.advance(1);
    const again = await h.guard.reconcile(refund, { tenant: h.tenant, proposal: result.proposal });
    expect(again.status).toBe('verification_pending');
    const observed = ofType(await ledgerOf(h, result.proposal), 'verification_observed');
    expect(observed).toHaveLength(2);
    expect(observed[0]?.data.reasonCode).toBe(observed[1]?.data.reasonCode);
    expect(String(observed[0]?.data.reasonCode)).toMatch(/^reason_not_a_code:/);
  });

  it('turns a reason that is not a code into a stable code and digest, never the words', async () => {
    const codes: unknown[] = [];
    for (let run = 0; run < 2; run++) {
      const h = createHarness();
      const refund = refundAction(h.provider, {
        execute: async () => ({ kind: 'failed_known', reason: 'Card of Ada Lovelace declined' }),
      });
      const result = await h.guard.run(refund, {
        tenant: h.tenant,
        input: refundArgs(),
        principal,
      });
      expect(result.status).toBe('failed_known');
      codes.push(result.reasonCode);
      expect(await h.guard.exportLedger({ tenant: h.tenant })).not.toContain('Lovelace');
    }
    expect(codes[0]).toMatch(/^reason_not_a_code:/);
    expect(codes[1]).toBe(codes[0]);
  });

  it('does not trust a receipt whose id is not well-formed text: the write is verified instead', async () => {
    const h = createHarness();
    const refund = refundAction(h.provider, {
      execute: async (_input, context) => {
        h.provider.writes.set(context.providerIdempotencyKey, {
          id: 're_ok',
          provider: 'payments',
        });
        return { kind: 'accepted', receipt: { id: `re_${LONE_SURROGATE}`, provider: 'payments' } };
      },
    });
    const result = await h.guard.run(refund, { tenant: h.tenant, input: refundArgs(), principal });
    expect(result.status).toBe('verified');
    expect(result.result?.receipts.map((receipt) => receipt.id)).toEqual(['re_ok']);
    const [unknown] = ofType(await ledgerOf(h, result.proposal), 'commit_outcome_unknown');
    expect(unknown?.data.reasonCode).toBe('executor_receipt_invalid');
  });

  it.each([
    ['a result whose fields throw when read', async () => throwingGetters(['kind', 'receipt'])],
    ['a result that is a proxy throwing on everything', async () => hostileProxy],
    [
      'a thrown value whose code, name and toString throw',
      async () => {
        throw hostileError;
      },
    ],
    [
      'a thrown proxy',
      async () => {
        throw hostileProxy;
      },
    ],
    [
      'partial items with hostile steps and receipts',
      async () => ({
        kind: 'partial',
        items: [
          { step: EMOJI_AT_THE_CUT, outcome: 'committed', receipt: hostileProxy },
          throwingGetters(['step', 'outcome']),
        ],
      }),
    ],
  ])('records %s as an unknown outcome and verifies it', async (_label, execute) => {
    const h = createHarness();
    const refund = refundAction(h.provider, { execute: execute as never });
    const result = await h.guard.run(refund, { tenant: h.tenant, input: refundArgs(), principal });
    expect(result.status).not.toBe('executing');
    expect(['verification_pending', 'verification_unresolved', 'failed_unknown']).toContain(
      result.status,
    );
    expect((await h.guard.verifyLedger({ tenant: h.tenant })).kind).toBe('valid');
  });

  it('records an unknown outcome when recording the real one fails, instead of staying executing', async () => {
    const inner = createHarness().store;
    let failures = 0;
    const store: GuardStore = {
      ...inner,
      commit: async (write) => {
        if (failures === 0 && write.events.some((event) => event.type === 'committed')) {
          failures += 1;
          throw new ContractViolationError('canonical_json_invalid', 'an unforeseen value');
        }
        return inner.commit(write);
      },
    };
    const h = createHarness({ store });
    const result = await h.guard.run(h.refund, {
      tenant: h.tenant,
      input: refundArgs(),
      principal,
    });
    expect(result).toMatchObject({
      status: 'failed_unknown',
      reasonCode: 'outcome_not_recordable',
    });
    const [unknown] = ofType(await ledgerOf(h, result.proposal), 'commit_outcome_unknown');
    expect(unknown?.data).toMatchObject({
      reasonCode: 'outcome_not_recordable',
      cause: 'guard_error:canonical_json_invalid',
    });
    const reconciled = await h.guard.reconcile(h.refund, {
      tenant: h.tenant,
      proposal: result.proposal,
    });
    expect(reconciled.status).toBe('verified');
    expect(h.provider.calls.execute).toBe(1);
  });
});

describe('host values before anything was stored', () => {
  it.each([
    [
      'a policy reason with a lone surrogate',
      { policy: () => ({ decision: 'allow', reason: LONE_SURROGATE }) },
      'policy_result_invalid',
    ],
    [
      'a policy that throws',
      {
        policy: () => {
          throw hostileError;
        },
      },
      'policy_failed',
    ],
    [
      'a policy verdict whose fields throw',
      { policy: () => throwingGetters(['decision']) },
      'policy_result_invalid',
    ],
    [
      'a preview that is not canonical JSON',
      { preview: () => ({ ratio: 1.5 }) },
      'preview_invalid',
    ],
    [
      'a preview that throws',
      {
        preview: () => {
          throw new Error('Ada Lovelace');
        },
      },
      'preview_invalid',
    ],
  ])(
    'rejects the proposal for %s, storing nothing and never throwing',
    async (_label, overrides, code) => {
      const h = createHarness();
      const refund = refundAction(h.provider, overrides as never);
      for (const mode of ['commit', 'dry_run'] as const) {
        const result = await h.guard.prepare(refund, {
          tenant: h.tenant,
          input: refundArgs(),
          principal,
          mode,
        });
        expect(result).toMatchObject({ outcome: 'rejected', status: null, reasonCode: code });
        expect(await h.store.getProposal(h.tenant, result.proposal)).toBeUndefined();
      }
      const ledger = await h.guard.exportLedger({ tenant: h.tenant });
      expect(ledger).not.toContain('Lovelace');
      expect(ofType(await ledgerOf(h), 'contract_rejected')).toHaveLength(2);
    },
  );

  it('rejects an input whose fields throw when the contract reads them', async () => {
    const h = createHarness();
    const input = refundArgs();
    Object.defineProperty(input, 'orderId', {
      enumerable: true,
      get() {
        throw new Error('hostile orderId');
      },
    });
    const result = await h.guard.prepare(h.refund, { tenant: h.tenant, input, principal });
    expect(result).toMatchObject({ outcome: 'rejected', reasonCode: 'contract_violation' });
    expect(result.issues?.[0]?.code).toBe('input_unreadable');
  });

  it('keeps a policy reason that is not a code as a stable code and digest', async () => {
    const h = createHarness();
    const refund = refundAction(h.provider, {
      policy: () => ({ decision: 'allow', reason: 'Within the limit for Ada' }),
    });
    const result = await h.guard.prepare(refund, {
      tenant: h.tenant,
      input: refundArgs(),
      principal,
    });
    expect(result.reasonCode).toMatch(/^policy_reason_not_a_code:[A-Za-z0-9_-]{16}$/);
    expect(await h.guard.exportLedger({ tenant: h.tenant })).not.toContain('Ada');
  });
});

/** Strings that break naive handling: lone surrogates, cuts through pairs, long and private text. */
const hostileString = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 300 }),
  fc
    .array(fc.integer({ min: 0xd800, max: 0xdfff }), { minLength: 1, maxLength: 4 })
    .map((units) => `r${String.fromCharCode(...units)}`),
  fc.integer({ min: 0, max: 300 }).map((n) => `${'x'.repeat(n)}😀`),
  fc.constantFrom('executor_ok', 'Card of Ada Lovelace declined', ''),
);

/**
 * Hostile objects are generated as plain markers and made hostile only in the test body
 * (fast-check itself inspects the values it generates, and a proxy would break it).
 */
type Marker =
  | { readonly hostile: 'proxy' }
  | { readonly hostile: 'error' }
  | { readonly hostile: 'getters'; readonly keys: readonly string[] };

const isMarker = (value: unknown): value is Marker =>
  typeof value === 'object' &&
  value !== null &&
  'hostile' in value &&
  Object.keys(value).length <= 2;

/** Replaces every marker in generated plain data with the hostile object it stands for. */
function materialize(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(materialize);
  if (typeof value !== 'object' || value === null) return value;
  if (isMarker(value)) {
    if (value.hostile === 'proxy') return hostileProxy;
    if (value.hostile === 'error') return hostileError;
    return throwingGetters(value.keys);
  }
  const prototype = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== null) return value;
  return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, materialize(inner)]));
}

/** Any value, wrapped hostilely at times. */
const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.anything(),
  hostileString,
  fc.constant({ hostile: 'proxy' } as const),
  fc.constant({ hostile: 'error' } as const),
  fc
    .array(fc.constantFrom('kind', 'id', 'provider', 'reason', 'items', 'step', 'then', 'code'))
    .map((keys) => ({ hostile: 'getters', keys }) as const),
);

const hostileReceipt = fc.oneof(
  hostileValue,
  fc.record(
    { id: hostileString, provider: hostileString, details: hostileValue },
    { requiredKeys: [] },
  ),
  fc.record({ id: fc.constant('re_1'), provider: fc.constant('payments'), details: hostileValue }),
);

/** What a hostile executor or verifier hands back. */
const hostileResult = fc.oneof(
  hostileValue,
  fc.record(
    {
      kind: fc.constantFrom(
        'accepted',
        'failed_known',
        'failed_unknown',
        'partial',
        'present',
        'absent',
        'unknown',
        'other',
      ),
      receipt: hostileReceipt,
      reason: fc.oneof(hostileString, hostileValue),
      output: hostileValue,
      final: fc.oneof(fc.boolean(), hostileValue),
      items: fc.oneof(
        hostileValue,
        fc.array(
          fc.oneof(
            hostileValue,
            fc.record(
              {
                step: fc.oneof(hostileString, hostileValue),
                outcome: fc.constantFrom('committed', 'failed', 'unknown', 'odd'),
                receipt: hostileReceipt,
                reason: fc.oneof(hostileString, hostileValue),
              },
              { requiredKeys: [] },
            ),
          ),
          { maxLength: 70 },
        ),
      ),
    },
    { requiredKeys: [] },
  ),
);

/** How the host hands a value back: returned, thrown, or as a rejected promise. */
const delivery = fc.constantFrom('return', 'throw') as fc.Arbitrary<'return' | 'throw'>;
const deliver = (how: 'return' | 'throw', value: unknown): Promise<never> =>
  how === 'throw' ? Promise.reject(value) : Promise.resolve(value as never);

describe('hostile host results (property)', () => {
  it('the guard always records an executor it ran, and never throws after it ran', async () => {
    await fc.assert(
      fc.asyncProperty(
        hostileResult,
        delivery,
        hostileResult,
        delivery,
        async (result, how, answer, verifyHow) => {
          const h = createHarness();
          const refund = refundAction(h.provider, {
            execute: async () => deliver(how, result),
            verify: async () => deliver(verifyHow, answer),
            compensate: async () => deliver(verifyHow, answer),
          });
          const run = await h.guard.run(refund, {
            tenant: h.tenant,
            input: refundArgs(),
            principal,
          });
          expect(run.status).not.toBe('executing');
          const stored = await h.store.getProposal(h.tenant, run.proposal);
          expect(stored?.status).toBe(run.status);
          h.clock.advance(refund.executionLeaseMs);
          const reconciled = await h.guard.reconcile(refund, {
            tenant: h.tenant,
            proposal: run.proposal,
          });
          expect(reconciled.status).not.toBe('executing');
          if (
            reconciled.status === 'compensation_required' ||
            reconciled.status === 'partially_succeeded'
          ) {
            await h.guard.compensate(refund, { tenant: h.tenant, proposal: run.proposal });
          }
          expect((await h.guard.verifyLedger({ tenant: h.tenant })).kind).toBe('valid');
        },
      ),
      { numRuns: 200 },
    );
  });

  it('prepare never throws for a hostile policy verdict or preview', async () => {
    await fc.assert(
      fc.asyncProperty(hostileResult, delivery, hostileValue, async (verdict, how, preview) => {
        const h = createHarness();
        const refund = refundAction(h.provider, {
          policy: () => {
            if (how === 'throw') throw materialize(verdict);
            return materialize(verdict) as never;
          },
          preview: () => materialize(preview) as never,
        });
        const result = await h.guard.prepare(refund, {
          tenant: h.tenant,
          input: refundArgs(),
          principal,
        });
        expect(['rejected', 'authorized', 'authority_pending', 'blocked']).toContain(
          result.outcome,
        );
        expect((await h.guard.verifyLedger({ tenant: h.tenant })).kind).toBe('valid');
      }),
      { numRuns: 200 },
    );
  });
});
