/**
 * Faults at the commit point, over real HTTP: every kind, with the write outcome traced, the
 * schedule deterministic from the seed, and fault plans validated with a clear error.
 */
import {
  faultSchedule,
  parseFaultPlan,
  SandboxConfigError,
  SandboxControlError,
  startSandbox,
} from 'sideguard/sandbox';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  call,
  formHeaders,
  keys,
  rawRequest,
  startTestSandbox,
  tempDir,
} from './sandbox-helpers.js';

type Sandbox = Awaited<ReturnType<typeof startTestSandbox>>;

function refundPlan(fault: Record<string, unknown>, requests: number[] = [0]) {
  return {
    version: 1,
    rules: [{ provider: 'payments', operation: 'create_refund', requests, fault }],
  };
}

describe('faults at the commit point', () => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await startTestSandbox();
  });
  afterAll(async () => {
    await sandbox.stop();
  });
  beforeEach(async () => {
    await sandbox.control.reset();
  });

  const refund = (amount: string, headers: Record<string, string> = {}) =>
    rawRequest(sandbox.dataUrl, 'POST', '/v1/refunds', {
      headers: formHeaders(keys.paymentsWriter, headers),
      body: `charge=ch_sg_001&amount=${amount}`,
      timeoutMs: 5_000,
    });

  const lastTrace = async () => (await sandbox.control.observations()).trace.at(-1);

  it('latency delays the answer and then proceeds normally', async () => {
    await sandbox.control.setFaults(refundPlan({ kind: 'latency', latencyMs: 150 }));
    const started = Date.now();
    const answer = await refund('10');
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
    expect(answer.kind === 'response' && answer.status).toBe(200);
    expect(await lastTrace()).toMatchObject({
      fault: 'latency',
      writeOutcome: 'committed',
      delivery: 'sent',
      status: 200,
      requestIndex: 0,
      ruleIndex: 0,
    });
  });

  it('error_before_write answers 500 in Stripe shape, writes nothing and saves nothing under the key', async () => {
    await sandbox.control.setFaults(refundPlan({ kind: 'error_before_write' }));
    const first = await refund('10', { 'Idempotency-Key': 'ebw' });
    expect(first.kind === 'response' && first.status).toBe(500);
    expect(first.kind === 'response' && JSON.parse(first.body).error.type).toBe('api_error');
    expect(await lastTrace()).toMatchObject({
      fault: 'error_before_write',
      writeOutcome: 'not_dispatched',
      status: 500,
    });
    expect((await sandbox.control.observations()).writes.total).toBe(0);
    const retry = await refund('10', { 'Idempotency-Key': 'ebw' });
    expect(retry.kind === 'response' && retry.status).toBe(200);
    expect(retry.kind === 'response' && retry.headers['idempotent-replayed']).toBeUndefined();
    expect((await sandbox.control.observations()).writes.total).toBe(1);
  });

  it('error_after_write commits, answers 500, and a retry with the key replays the committed refund', async () => {
    await sandbox.control.setFaults(refundPlan({ kind: 'error_after_write', status: 503 }));
    const first = await refund('20', { 'Idempotency-Key': 'eaw' });
    expect(first.kind === 'response' && first.status).toBe(503);
    expect(await lastTrace()).toMatchObject({
      fault: 'error_after_write',
      writeOutcome: 'committed',
      status: 503,
    });
    const retry = await refund('20', { 'Idempotency-Key': 'eaw' });
    expect(retry.kind === 'response' && retry.status).toBe(200);
    expect(retry.kind === 'response' && retry.headers['idempotent-replayed']).toBe('true');
    expect((await sandbox.control.observations()).writes.total).toBe(1);
  });

  it('drop_before_dispatch closes the connection with no response and nothing written', async () => {
    await sandbox.control.setFaults(refundPlan({ kind: 'drop_before_dispatch' }));
    const answer = await refund('30');
    expect(answer.kind).toBe('connection_error');
    const observations = await sandbox.control.observations();
    expect(observations.writes.total).toBe(0);
    expect(observations.trace.at(-1)).toMatchObject({
      fault: 'drop_before_dispatch',
      writeOutcome: 'not_dispatched',
      delivery: 'dropped',
      status: null,
    });
    expect(observations.requests.at(-1)).toMatchObject({
      decision: 'faulted',
      status: null,
      delivery: 'dropped',
    });
  });

  it('drop_after_write commits the write and closes the connection with zero response bytes', async () => {
    await sandbox.control.setFaults(refundPlan({ kind: 'drop_after_write' }));
    const answer = await refund('40');
    expect(answer).toEqual({ kind: 'connection_error', code: 'ECONNRESET' });
    const observations = await sandbox.control.observations();
    expect(observations.writes.total).toBe(1);
    expect(observations.receipts[0]).toMatchObject({ amountMinor: 40 });
    expect(observations.trace.at(-1)).toMatchObject({
      fault: 'drop_after_write',
      writeOutcome: 'committed',
      delivery: 'dropped',
      status: null,
    });
  });

  it('hang_after_write commits and sends nothing until the client gives up', async () => {
    await sandbox.control.setFaults(refundPlan({ kind: 'hang_after_write', hangMs: 1_500 }));
    const answer = await rawRequest(sandbox.dataUrl, 'POST', '/v1/refunds', {
      headers: formHeaders(),
      body: 'charge=ch_sg_001&amount=50',
      timeoutMs: 300,
    });
    expect(answer.kind).toBe('timeout');
    const observations = await sandbox.control.observations();
    expect(observations.writes.total).toBe(1);
    expect(observations.trace.at(-1)).toMatchObject({
      fault: 'hang_after_write',
      writeOutcome: 'committed',
      delivery: 'hung',
      status: null,
    });
  });

  it('shows a hanging request in the observations while it hangs, with its write committed', async () => {
    await sandbox.control.setFaults(refundPlan({ kind: 'hang_after_write', hangMs: 60_000 }));
    const hung = rawRequest(sandbox.dataUrl, 'POST', '/v1/refunds', {
      headers: formHeaders(keys.paymentsWriter, { 'Idempotency-Key': 'hanging-key' }),
      body: 'charge=ch_sg_001&amount=50&metadata[sideguard_effect]=hanging-effect',
      timeoutMs: 30_000,
    });
    let observations = await sandbox.control.observations();
    for (let poll = 0; poll < 500 && observations.inFlight[0]?.phase !== 'hanging'; poll++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      observations = await sandbox.control.observations();
    }
    expect(observations.inFlight).toHaveLength(1);
    expect(observations.inFlight[0]).toMatchObject({
      provider: 'payments',
      operation: 'create_refund',
      method: 'POST',
      path: '/v1/refunds',
      phase: 'hanging',
      fault: 'hang_after_write',
      writeOutcome: 'committed',
      idempotencyKey: 'hanging-key',
      effectKey: 'hanging-effect',
      receiptId: observations.receipts[0]?.receiptId,
    });
    expect(observations.inFlight[0]?.requestId).toMatch(/^req_/);
    // Not finished, so not yet among the completed requests.
    expect(observations.requests.filter((r) => r.operation === 'create_refund')).toEqual([]);
    await sandbox.control.reset();
    expect((await hung).kind).toBe('connection_error');
    expect((await sandbox.control.observations()).inFlight).toEqual([]);
  });

  it('shows a held request in the observations as held, with nothing written yet', async () => {
    await sandbox.control.setFaults(refundPlan({ kind: 'hold' }));
    const held = refund('7');
    await sandbox.control.waitForHeld(1);
    const observations = await sandbox.control.observations();
    expect(observations.inFlight).toMatchObject([
      { operation: 'create_refund', phase: 'held', fault: 'hold', writeOutcome: 'not_dispatched' },
    ]);
    await sandbox.control.releaseAll();
    expect(await held).toMatchObject({ kind: 'response', status: 200 });
    expect((await sandbox.control.observations()).inFlight).toEqual([]);
  });

  it('hold parks the request until released; a duplicate with the same key meanwhile gets 409', async () => {
    await sandbox.control.setFaults(refundPlan({ kind: 'hold' }));
    const pending = refund('60', { 'Idempotency-Key': 'held-key' });
    const [held] = await sandbox.control.waitForHeld(1);
    expect(held).toMatchObject({
      provider: 'payments',
      operation: 'create_refund',
      requestIndex: 0,
      idempotencyKey: 'held-key',
    });
    expect((await sandbox.control.observations()).writes.total).toBe(0);

    const duplicate = await refund('60', { 'Idempotency-Key': 'held-key' });
    expect(duplicate.kind === 'response' && duplicate.status).toBe(409);
    expect(duplicate.kind === 'response' && JSON.parse(duplicate.body).error.code).toBe(
      'idempotency_key_in_use',
    );

    await sandbox.control.release(held?.holdId ?? '');
    const answer = await pending;
    expect(answer.kind === 'response' && answer.status).toBe(200);
    const observations = await sandbox.control.observations();
    expect(observations.writes.total).toBe(1);
    expect(observations.trace.find((entry) => entry.fault === 'hold')).toMatchObject({
      writeOutcome: 'committed',
      delivery: 'sent',
      status: 200,
    });
    await expect(sandbox.control.release(held?.holdId ?? '')).rejects.toMatchObject({
      code: 'hold_not_found',
      status: 404,
    });
  });

  it('releases every held request at once', async () => {
    await sandbox.control.setFaults({
      version: 1,
      rules: [{ provider: 'payments', operation: 'create_refund', fault: { kind: 'hold' } }],
    });
    const pending = [refund('1'), refund('2'), refund('3')];
    await sandbox.control.waitForHeld(3);
    expect(await sandbox.control.releaseAll()).toEqual({ released: 3 });
    const answers = await Promise.all(pending);
    expect(answers.map((answer) => answer.kind === 'response' && answer.status)).toEqual([
      200, 200, 200,
    ]);
  });

  it('rate_limit answers 429 with Retry-After and writes nothing', async () => {
    await sandbox.control.setFaults(refundPlan({ kind: 'rate_limit', retryAfterSeconds: 7 }));
    const answer = await refund('70');
    expect(answer.kind === 'response' && answer.status).toBe(429);
    expect(answer.kind === 'response' && answer.headers['retry-after']).toBe('7');
    expect((await sandbox.control.observations()).writes.total).toBe(0);
    expect(await lastTrace()).toMatchObject({
      fault: 'rate_limit',
      writeOutcome: 'not_dispatched',
      status: 429,
    });
  });

  it('counts request indices per operation: only the listed indices are hit', async () => {
    await sandbox.control.setFaults(refundPlan({ kind: 'error_before_write' }, [1, 3]));
    const statuses: (number | false)[] = [];
    for (let index = 0; index < 5; index += 1) {
      const read = await call(sandbox.dataUrl, 'GET', '/v1/charges/ch_sg_001', {
        key: keys.paymentsWriter,
      });
      expect(read.status).toBe(200);
      const answer = await refund('1');
      statuses.push(answer.kind === 'response' && answer.status);
    }
    expect(statuses).toEqual([200, 500, 200, 500, 200]);
  });

  it('applies reset: state back to the seed, observations cleared, the start-time plan restored', async () => {
    await sandbox.control.setFaults(refundPlan({ kind: 'rate_limit' }));
    await sandbox.control.reset();
    expect((await sandbox.control.getFaults()).plan).toBeNull();
    expect((await refund('5')).kind === 'response').toBe(true);
    const observations = await sandbox.control.observations();
    expect(observations.requests).toHaveLength(1);
  });
});

describe('fault schedules and plan validation', () => {
  const probabilistic = {
    version: 1,
    rules: [
      {
        provider: 'payments',
        operation: 'retrieve_charge',
        probability: 0.3,
        fault: { kind: 'error_before_write' },
      },
    ],
  };

  it('gives the same schedule for the same seed and a different one for another seed', () => {
    const plan = parseFaultPlan(probabilistic);
    const first = faultSchedule(plan, 7, 'payments', 'retrieve_charge', 200);
    expect(faultSchedule(plan, 7, 'payments', 'retrieve_charge', 200)).toEqual(first);
    expect(faultSchedule(plan, 8, 'payments', 'retrieve_charge', 200)).not.toEqual(first);
    const hits = first.filter((kind) => kind !== null).length;
    expect(hits).toBeGreaterThan(30);
    expect(hits).toBeLessThan(90);
  });

  it('applies the same probabilistic schedule over HTTP in two sandboxes with the same seed', async () => {
    const statuses: number[][] = [];
    for (let run = 0; run < 2; run += 1) {
      const sandbox = await startTestSandbox({ seed: 99, faults: probabilistic });
      try {
        const seen: number[] = [];
        for (let index = 0; index < 30; index += 1) {
          seen.push(
            (
              await call(sandbox.dataUrl, 'GET', '/v1/charges/ch_sg_001', {
                key: keys.paymentsWriter,
              })
            ).status,
          );
        }
        statuses.push(seen);
        const trace = (await sandbox.control.observations()).trace;
        expect(trace.map((entry) => (entry.fault === null ? 200 : 500))).toEqual(seen);
      } finally {
        await sandbox.stop();
      }
    }
    expect(statuses[1]).toEqual(statuses[0]);
    expect(statuses[0]).toContain(500);
    expect(statuses[0]).toEqual(
      faultSchedule(parseFaultPlan(probabilistic), 99, 'payments', 'retrieve_charge', 30).map(
        (kind) => (kind === null ? 200 : 500),
      ),
    );
  });

  it('checks a rule for every provider ("*") against every enabled provider', async () => {
    const everywhere = (operation: string) => ({
      version: 1,
      rules: [{ provider: '*', operation, requests: [0], fault: { kind: 'rate_limit' } }],
    });
    const { dir, cleanup } = await tempDir();
    try {
      const error = await startSandbox({
        stateDir: dir,
        faults: everywhere('create_refnd'),
      }).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(SandboxConfigError);
      expect(error).toMatchObject({ code: 'fault_plan_invalid' });
      expect((error as Error).message).toMatch(
        /rules\[0\]\.operation: "create_refnd" is not an operation of any enabled provider \(payments: create_refund, /,
      );
    } finally {
      await cleanup();
    }
    const sandbox = await startTestSandbox();
    try {
      const error = await sandbox.control
        .setFaults(everywhere('refund_everything'))
        .catch((caught: unknown) => caught);
      expect(error).toMatchObject({ code: 'fault_plan_invalid', status: 400 });
      // An operation some provider has is fine; so is "*".
      await sandbox.control.setFaults(everywhere('update_ticket'));
      await sandbox.control.setFaults(everywhere('*'));
    } finally {
      await sandbox.stop();
    }
  });

  it('rejects a bad plan naming the bad field, on start and through the control plane', async () => {
    expect(() =>
      parseFaultPlan({
        version: 1,
        rules: [{ provider: 'payments', operation: 'create_refund', fault: { kind: 'latency' } }],
      }),
    ).toThrow(/rules\[0\]\.fault\.latencyMs/);
    expect(() => parseFaultPlan({ version: 1, rules: [], colour: 'red' })).toThrow(
      SandboxConfigError,
    );
    const { dir, cleanup } = await tempDir();
    try {
      await expect(
        startSandbox({ stateDir: dir, faults: { version: 2, rules: [] } }),
      ).rejects.toMatchObject({ code: 'fault_plan_invalid' });
    } finally {
      await cleanup();
    }
    const sandbox = await startTestSandbox();
    try {
      const error = await sandbox.control
        .setFaults({
          version: 1,
          rules: [
            { provider: 'payments', operation: 'refund_everything', fault: { kind: 'hold' } },
          ],
        })
        .catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(SandboxControlError);
      expect(error).toMatchObject({ code: 'fault_plan_invalid', status: 400 });
      expect((error as Error).message).toContain('rules[0].operation');
      const bad = await sandbox.control
        .setFaults({
          version: 1,
          rules: [
            {
              provider: 'payments',
              operation: '*',
              requests: [0],
              probability: 0.5,
              fault: { kind: 'hold' },
            },
          ],
        })
        .catch((caught: unknown) => caught);
      expect((bad as Error).message).toContain('rules[0].probability');
    } finally {
      await sandbox.stop();
    }
  });
});
