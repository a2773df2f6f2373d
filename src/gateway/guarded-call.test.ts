import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { approvals, defineAction, type ExecuteResult, type VerifyResult } from '../core/action.js';
import { createDevelopmentKeyRing } from '../core/key-ring.js';
import { createGuard } from '../create-guard.js';
import { createMemoryStore } from '../stores/memory/memory-store.js';
import { createExecutionCapture } from './execution-capture.js';
import { type GuardedCallContext, runGuardedCall, runShadowWrite } from './guarded-call.js';

/** An in-process provider whose executor the test steers. */
function setup(
  options: { execute?: () => Promise<ExecuteResult>; verify?: () => Promise<VerifyResult> } = {},
) {
  const calls = { execute: 0, verify: 0 };
  const capture = createExecutionCapture();
  const action = defineAction({
    type: { namespace: 'support', name: 'refund', version: 1 },
    input: z.object({
      orderId: z.string(),
      amount: z.number().int(),
      requestId: z.string().optional(),
    }),
    protectedFields: ['orderId', 'amount'],
    policy: (input) =>
      input.amount > 10_000
        ? { decision: 'block', reason: 'over_hard_limit' }
        : input.amount > 100
          ? { decision: 'require_approval', reason: 'over_auto_limit' }
          : { decision: 'allow', reason: 'within_auto_limit' },
    approval: approvals.single('finance'),
    execute: async (_input, context) => {
      calls.execute += 1;
      const result = options.execute
        ? await options.execute()
        : {
            kind: 'accepted' as const,
            receipt: { id: `re_${calls.execute}`, provider: 'payments' },
          };
      capture.record(context.proposal, { output: { answer: `response ${calls.execute}` } });
      return result;
    },
    verify: async () => {
      calls.verify += 1;
      return options.verify
        ? options.verify()
        : { kind: 'present', receipt: { id: 're_1', provider: 'payments' } };
    },
  });
  const guard = createGuard({
    store: createMemoryStore(),
    keyRing: createDevelopmentKeyRing('gateway-test'),
  });
  const context: GuardedCallContext = {
    guard,
    capture,
    inProgressWaitMs: 60_000,
    now: () => Date.now(),
    sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  };
  const call = (input: unknown) =>
    runGuardedCall(context, { action, tenant: 'acme', principal: 'support', agent: 'bot', input });
  return { calls, call, guard, action, context };
}

describe('the guarded call', () => {
  it('executes an allowed write once and returns the answer this call received', async () => {
    const { calls, call } = setup();
    const result = await call({ orderId: 'o1', amount: 50 });
    expect(result).toMatchObject({
      verdict: 'completed',
      code: 'completed',
      status: 'verified',
      duplicate: false,
      output: { answer: 'response 1' },
    });
    expect(result.receipts.map((receipt) => receipt.id)).toEqual(['re_1']);
    expect(calls.execute).toBe(1);
  });

  it('maps a retry with other retry metadata to the same effect and never executes it again', async () => {
    const { calls, call } = setup();
    const first = await call({ orderId: 'o1', amount: 50, requestId: 'a' });
    const second = await call({ orderId: 'o1', amount: 50, requestId: 'b' });
    expect(second).toMatchObject({
      verdict: 'completed',
      duplicate: true,
      proposal: first.proposal,
    });
    expect(calls.execute).toBe(1);
  });

  it('answers pending approval without executing, blocked and rejected calls with their codes', async () => {
    const { calls, call } = setup();
    expect(await call({ orderId: 'o2', amount: 500 })).toMatchObject({
      verdict: 'pending_approval',
      code: 'approval_required',
      status: 'awaiting_authority',
    });
    expect(await call({ orderId: 'o3', amount: 50_000 })).toMatchObject({
      verdict: 'blocked',
      code: 'policy_blocked',
      reasonCode: 'over_hard_limit',
    });
    const rejected = await call({ orderId: 'o4', amount: 'fifty' });
    expect(rejected).toMatchObject({
      verdict: 'rejected',
      code: 'contract_violation',
      status: null,
    });
    expect(rejected.issues?.[0]).toMatchObject({ path: 'amount' });
    expect(calls.execute).toBe(0);
  });

  it('returns the upstream refusal it received when the write certainly did not happen', async () => {
    const { call } = setup({ execute: async () => ({ kind: 'failed_known', reason: 'http_400' }) });
    expect(await call({ orderId: 'o5', amount: 50 })).toMatchObject({
      verdict: 'upstream_refused',
      code: 'upstream_refused',
      reasonCode: 'http_400',
      output: { answer: 'response 1' },
    });
  });

  it('verifies an unknown outcome instead of resending, and reports it unknown while absent is not final', async () => {
    const { calls, call } = setup({
      execute: async () => ({ kind: 'failed_unknown', reason: 'upstream_timeout' }),
      verify: async () => ({ kind: 'absent', final: false }),
    });
    const first = await call({ orderId: 'o6', amount: 50 });
    expect(first).toMatchObject({ verdict: 'outcome_unknown', code: 'outcome_unknown' });
    const retry = await call({ orderId: 'o6', amount: 50 });
    expect(retry).toMatchObject({ verdict: 'outcome_unknown', duplicate: true });
    expect(calls.execute).toBe(1);
    expect(calls.verify).toBeGreaterThanOrEqual(2);
  });

  it('confirms a lost response through verification: one execution, completed', async () => {
    const { calls, call } = setup({
      execute: async () => ({ kind: 'failed_unknown', reason: 'upstream_response_lost' }),
    });
    const result = await call({ orderId: 'o7', amount: 50 });
    expect(result).toMatchObject({ verdict: 'completed', status: 'verified' });
    expect(calls.execute).toBe(1);
  });

  it('lets a duplicate that arrives while the original executes wait for it, then complete', async () => {
    let release: () => void = () => {};
    const started: Promise<void>[] = [];
    let signalStarted: () => void = () => {};
    started.push(new Promise((resolve) => (signalStarted = resolve)));
    const { calls, call } = setup({
      execute: async () => {
        signalStarted();
        await new Promise<void>((resolve) => (release = resolve));
        return { kind: 'accepted', receipt: { id: 're_1', provider: 'payments' } };
      },
    });
    const original = call({ orderId: 'o8', amount: 50 });
    await started[0];
    const duplicate = call({ orderId: 'o8', amount: 50, requestId: 'retry' });
    release();
    const [first, second] = await Promise.all([original, duplicate]);
    expect(first.verdict).toBe('completed');
    expect(second).toMatchObject({
      verdict: 'completed',
      duplicate: true,
      proposal: first.proposal,
    });
    expect(calls.execute).toBe(1);
  });

  it('gives up waiting at the deadline with in_progress, and never executes twice', async () => {
    let release: () => void = () => {};
    let signalStarted: () => void = () => {};
    const started = new Promise<void>((resolve) => (signalStarted = resolve));
    const { calls, action, context } = setup({
      execute: async () => {
        signalStarted();
        await new Promise<void>((resolve) => (release = resolve));
        return { kind: 'accepted', receipt: { id: 're_1', provider: 'payments' } };
      },
    });
    const request = { action, tenant: 'acme', principal: 'support', agent: 'bot' };
    const original = runGuardedCall(context, { ...request, input: { orderId: 'o9', amount: 50 } });
    await started;
    const impatient = await runGuardedCall(
      { ...context, inProgressWaitMs: 0 },
      { ...request, input: { orderId: 'o9', amount: 50 } },
    );
    expect(impatient).toMatchObject({
      verdict: 'in_progress',
      code: 'in_progress',
      status: 'executing',
    });
    release();
    expect((await original).verdict).toBe('completed');
    expect(calls.execute).toBe(1);
  });

  it('checks a shadow write with a dry run: nothing executes, blocked and rejected still refuse', async () => {
    const { calls, guard, action } = setup();
    const request = { action, tenant: 'acme', principal: 'support', agent: 'bot' };
    expect(
      await runShadowWrite(guard, { ...request, input: { orderId: 'o1', amount: 50 } }),
    ).toMatchObject({
      verdict: 'recorded',
      wouldBe: 'authorized',
    });
    expect(
      await runShadowWrite(guard, { ...request, input: { orderId: 'o1', amount: 50_000 } }),
    ).toMatchObject({ verdict: 'blocked', code: 'policy_blocked' });
    expect(await runShadowWrite(guard, { ...request, input: { orderId: 1 } })).toMatchObject({
      verdict: 'rejected',
      code: 'contract_violation',
    });
    expect(calls.execute).toBe(0);
  });
});
