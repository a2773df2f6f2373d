/**
 * Faults at the upstream's commit point, through the HTTP door: a response lost after the write,
 * an upstream that hangs past the gateway's deadline, a request held before the write, and the
 * official `stripe` client retrying on its own — each ends with at most one provider write, and
 * an unknown outcome is verified with the upstream, never blindly sent again.
 */
import type { ServedGateway } from 'sideguard/gateway';
import Stripe from 'stripe';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestSandbox } from '../sandbox/sandbox-helpers.js';
import {
  agentCall,
  agentKeys,
  gatewayDecisions,
  sandboxWrites,
  serveFixture,
  type TestSandbox,
} from './gateway-helpers.js';

let sandbox: TestSandbox;
let gateway: ServedGateway;

const fault = (kind: Record<string, unknown>) => ({
  version: 1,
  rules: [{ provider: 'payments', operation: 'create_refund', requests: [0], fault: kind }],
});

/** Every create_refund request that reached the sandbox (traced when its fault was decided). */
const createRefundRequests = async () =>
  (await sandbox.control.observations()).trace.filter(
    (entry) => entry.operation === 'create_refund',
  );

/** Waits (bounded) until the sandbox has recorded a finished request of this operation. */
async function waitForObservedRequest(operation: string): Promise<void> {
  for (let attempt = 0; attempt < 500; attempt++) {
    const { requests } = await sandbox.control.observations();
    if (requests.some((request) => request.operation === operation)) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`the sandbox never finished a ${operation} request`);
}

beforeAll(async () => {
  sandbox = await startTestSandbox();
  // A short upstream deadline, so a hang becomes an unknown outcome within seconds (long enough
  // that a loaded machine still answers the verifying read in time).
  gateway = await serveFixture(sandbox, { SG_TEST_TIMEOUT_MS: '3000' });
});
afterAll(async () => {
  await gateway?.close();
  await sandbox?.stop();
});
beforeEach(async () => {
  await sandbox.control.reset();
});

describe('an upstream that fails at the commit point', () => {
  it('verifies a response lost after the write: one write, the agent gets the refund, a retry gets the same', async () => {
    await sandbox.control.setFaults(fault({ kind: 'drop_after_write' }));
    const payments = gateway.upstreamUrls.payments ?? '';
    const first = await agentCall(payments, 'POST', '/v1/refunds', {
      form: { charge: 'ch_sg_003', amount: '700' },
    });
    expect(first.status).toBe(200);
    expect(first.headers.get('x-sideguard-outcome')).toBe('verified');
    expect(first.body).toMatchObject({ object: 'refund', amount: 700, charge: 'ch_sg_003' });
    const receipt = (await sandbox.control.observations()).receipts.at(-1);
    expect(first.body.id).toBe(receipt?.objectId);
    const retry = await agentCall(payments, 'POST', '/v1/refunds', {
      form: { charge: 'ch_sg_003', amount: '700' },
    });
    expect(retry.text).toBe(first.text);
    expect(await sandboxWrites(sandbox)).toEqual({ 'payments.create_refund': 1 });
    expect(await createRefundRequests()).toHaveLength(1);
  });

  it('turns an upstream hanging past the deadline into the unknown-outcome path: verified, not resent', async () => {
    await sandbox.control.setFaults(fault({ kind: 'hang_after_write', hangMs: 60_000 }));
    const answer = await agentCall(gateway.upstreamUrls.payments ?? '', 'POST', '/v1/refunds', {
      form: { charge: 'ch_sg_004', amount: '900' },
    });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ object: 'refund', amount: 900 });
    expect(await sandboxWrites(sandbox)).toEqual({ 'payments.create_refund': 1 });
    expect(await createRefundRequests()).toHaveLength(1);
  });

  it('reports an outcome it cannot establish as unknown and never sends the write again', async () => {
    await sandbox.control.setFaults(fault({ kind: 'hold' }));
    const payments = gateway.upstreamUrls.payments ?? '';
    const pending = agentCall(payments, 'POST', '/v1/refunds', {
      form: { charge: 'ch_sg_002', amount: '800' },
    });
    const [held] = await sandbox.control.waitForHeld(1, 10_000);
    const answer = await pending;
    // The deadline passed and the refund list did not show it — but the held request may still
    // land while its lease runs, so the absence is not trusted yet (issue 8, window 2): the
    // outcome stays unknown, and it is never sent again.
    expect(answer.status).toBe(502);
    expect(answer.body).toMatchObject({
      code: 'outcome_unknown',
      reasonCode: 'absence_not_yet_trusted',
    });
    expect(answer.headers.get('retry-after')).toBe('2');
    // The held request goes on late (the gateway had already given up on it); wait until the
    // sandbox has finished with it, so that a second request could not hide behind it.
    await sandbox.control.release(held?.holdId ?? '');
    await waitForObservedRequest('create_refund');
    const retry = await agentCall(payments, 'POST', '/v1/refunds', {
      form: { charge: 'ch_sg_002', amount: '800' },
    });
    expect(retry.status).toBe(502);
    expect(retry.body.code).toBe('outcome_unknown');
    expect(retry.headers.get('x-sideguard-duplicate')).toBe('true');
    const observed = (await sandbox.control.observations()).requests;
    expect(observed.filter((request) => request.operation === 'create_refund')).toHaveLength(1);
    // The guard's own evidence: one commit started for the effect, never a second send.
    const ledger = await gateway.runtime.store.readLedger({
      tenant: 'acme',
      proposal: answer.body.proposal,
    });
    expect(ledger.filter((event) => event.type === 'commit_started')).toHaveLength(1);
  });
});

describe('the official stripe client pointed at the HTTP door', () => {
  const stripeFor = (options: { timeout?: number; maxNetworkRetries?: number } = {}) => {
    const url = new URL(gateway.upstreamUrls.payments ?? '');
    return new Stripe(agentKeys.support, {
      host: url.hostname,
      port: Number(url.port),
      protocol: 'http',
      maxNetworkRetries: options.maxNetworkRetries ?? 2,
      ...(options.timeout === undefined ? {} : { timeout: options.timeout }),
    });
  };

  it('creates a refund unchanged, and an application-level retry (a new client key) gets the same refund', async () => {
    const stripe = stripeFor();
    const refund = await stripe.refunds.create({ charge: 'ch_sg_001', amount: 250 });
    expect(refund).toMatchObject({ object: 'refund', amount: 250, charge: 'ch_sg_001' });
    const again = await stripe.refunds.create({ charge: 'ch_sg_001', amount: 250 });
    expect(again.id).toBe(refund.id);
    expect(await sandboxWrites(sandbox)).toEqual({ 'payments.create_refund': 1 });
    const fetched = await stripe.refunds.retrieve(refund.id);
    expect(fetched.id).toBe(refund.id);
  });

  it('survives the client’s own retries over a hanging upstream: one refund, and the client gets it', async () => {
    await sandbox.control.setFaults(fault({ kind: 'hang_after_write', hangMs: 60_000 }));
    const before = (await gatewayDecisions(gateway)).length;
    // The client gives up on each attempt long before the gateway's upstream deadline.
    const stripe = stripeFor({ timeout: 500, maxNetworkRetries: 6 });
    const refund = await stripe.refunds.create({ charge: 'ch_sg_005', amount: 120 });
    expect(refund).toMatchObject({ object: 'refund', amount: 120, charge: 'ch_sg_005' });
    expect(await sandboxWrites(sandbox)).toEqual({ 'payments.create_refund': 1 });
    expect(await createRefundRequests()).toHaveLength(1);
    const attempts = (await gatewayDecisions(gateway))
      .slice(before)
      .filter((event) => event.subject === 'POST /v1/refunds');
    expect(attempts.length).toBeGreaterThanOrEqual(2);
  });

  it('surfaces the gateway’s refusals as the client’s own error classes', async () => {
    const stripe = stripeFor({ maxNetworkRetries: 0 });
    await expect(
      stripe.refunds.create({ charge: 'ch_sg_001', amount: 200_000 }),
    ).rejects.toMatchObject({
      statusCode: 403,
      type: 'StripePermissionError',
    });
    await expect(
      stripe.refunds.create({ charge: 'ch_missing', amount: 100 }),
    ).rejects.toMatchObject({
      statusCode: 400,
      code: 'resource_missing',
    });
    const reader = new Stripe(agentKeys.reader, {
      host: new URL(gateway.upstreamUrls.payments ?? '').hostname,
      port: Number(new URL(gateway.upstreamUrls.payments ?? '').port),
      protocol: 'http',
      maxNetworkRetries: 0,
    });
    await expect(reader.refunds.create({ charge: 'ch_sg_001', amount: 100 })).rejects.toMatchObject(
      {
        statusCode: 403,
      },
    );
    expect(await sandboxWrites(sandbox)).toEqual({});
  });
});
