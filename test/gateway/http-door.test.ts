/**
 * The HTTP front door on real sockets: every decision kind, original-response replay, identity,
 * reserved headers, limits and unsafe paths, against the sandbox as the upstream.
 */

import { buildAuthorityEvidence } from 'sideguard';
import type { ServedGateway } from 'sideguard/gateway';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestSandbox } from '../sandbox/sandbox-helpers.js';
import {
  agentCall,
  agentKeys,
  sandboxWrites,
  serveFixture,
  type TestSandbox,
} from './gateway-helpers.js';

let sandbox: TestSandbox;
let gateway: ServedGateway;
let payments: string;
let crm: string;

beforeAll(async () => {
  sandbox = await startTestSandbox();
  gateway = await serveFixture(sandbox);
  payments = gateway.upstreamUrls.payments ?? '';
  crm = gateway.upstreamUrls.crm ?? '';
});
afterAll(async () => {
  await gateway?.close();
  await sandbox?.stop();
});
beforeEach(async () => {
  await sandbox.control.reset();
});

describe('forward', () => {
  it('forwards a declared read with the provider’s credentials and returns the upstream’s answer unchanged', async () => {
    const direct = await fetch(`${sandbox.dataUrl}/v1/refunds/re_sg_001`, {
      headers: { authorization: 'Bearer sk_test_sideguard_agent' },
    });
    const through = await agentCall(payments, 'GET', '/v1/refunds/re_sg_001');
    expect(through.status).toBe(200);
    expect(through.headers.get('x-sideguard-decision')).toBe('forward');
    const directBody = (await direct.json()) as { id: string };
    expect(through.body).toMatchObject({ id: 're_sg_001', object: 'refund' });
    expect(through.body).toEqual(directBody);
  });

  it('never passes the agent’s key upstream: the upstream sees only the injected credential', async () => {
    const through = await agentCall(payments, 'GET', '/v1/refunds/re_sg_001');
    expect(through.status).toBe(200);
    const requests = (await sandbox.control.observations()).requests;
    expect(requests.at(-1)).toMatchObject({ operation: 'retrieve_refund', role: 'refunds_writer' });
  });
});

describe('guarded writes', () => {
  const refund = { charge: 'ch_sg_001', amount: '500', reason: 'requested_by_customer' };

  it('executes a bound write once and replays the original response byte for byte to a duplicate', async () => {
    const first = await agentCall(payments, 'POST', '/v1/refunds', {
      form: refund,
      headers: { 'idempotency-key': 'agent-attempt-1' },
    });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ object: 'refund', amount: 500, charge: 'ch_sg_001' });
    expect(first.headers.get('x-sideguard-decision')).toBe('guarded');
    expect(first.headers.get('x-sideguard-outcome')).toBe('verified');
    const second = await agentCall(payments, 'POST', '/v1/refunds', {
      form: refund,
      headers: { 'idempotency-key': 'agent-attempt-2' },
    });
    expect(second.status).toBe(200);
    expect(second.text).toBe(first.text);
    expect(second.headers.get('x-sideguard-duplicate')).toBe('true');
    expect(second.headers.get('x-sideguard-proposal')).toBe(
      first.headers.get('x-sideguard-proposal'),
    );
    expect(await sandboxWrites(sandbox)).toEqual({ 'payments.create_refund': 1 });
  });

  it('sends the provider idempotency key derived from the effect, not the agent’s', async () => {
    await agentCall(payments, 'POST', '/v1/refunds', {
      form: { charge: 'ch_sg_002', amount: '300' },
      headers: { 'idempotency-key': 'agent-key-x' },
    });
    const receipt = (await sandbox.control.observations()).receipts.at(-1);
    expect(receipt?.idempotencyKey).toMatch(/^sg-[0-9a-f]{48}$/);
  });

  it('answers a write that needs approval with 202, a problem body and Retry-After; nothing is sent', async () => {
    const answer = await agentCall(payments, 'POST', '/v1/refunds', {
      form: { charge: 'ch_sg_002', amount: '6000' },
    });
    expect(answer.status).toBe(202);
    expect(answer.headers.get('content-type')).toBe('application/problem+json');
    expect(answer.headers.get('retry-after')).toBe('30');
    expect(answer.body).toMatchObject({
      code: 'approval_required',
      status: 202,
      decision: 'guarded',
      reasonCode: 'over_auto_limit',
      proposal: expect.stringMatching(/^prop_/),
    });
    const again = await agentCall(payments, 'POST', '/v1/refunds', {
      form: { charge: 'ch_sg_002', amount: '6000' },
    });
    expect(again.body.proposal).toBe(answer.body.proposal);
    expect(await sandboxWrites(sandbox)).toEqual({});
  });

  it('executes an approved write once when the agent retries it, and replays it afterwards', async () => {
    const form = { charge: 'ch_sg_001', amount: '7000' };
    const pending = await agentCall(payments, 'POST', '/v1/refunds', { form });
    expect(pending.status).toBe(202);
    const refund = gateway.runtime.table.actions.get('support.refund@1');
    if (refund === undefined) throw new Error('no refund action');
    const { guard } = gateway.runtime;
    const view = await guard.read(refund, {
      tenant: 'acme',
      proposal: pending.body.proposal,
      reader: 'finance-lead',
    });
    const evidence = buildAuthorityEvidence(view.evidenceBindings!, {
      authority: 'finance-lead',
      decision: 'approve',
      channelAssurance: 'high',
      issuedAt: Date.now(),
    });
    const approved = await guard.recordAuthority(refund, {
      tenant: 'acme',
      evidence,
      authenticatedAuthority: 'finance-lead',
    });
    expect(approved.status).toBe('authorized');
    expect(await sandboxWrites(sandbox)).toEqual({});
    const executed = await agentCall(payments, 'POST', '/v1/refunds', { form });
    expect(executed.status).toBe(200);
    expect(executed.body).toMatchObject({ object: 'refund', amount: 7000 });
    expect(executed.headers.get('x-sideguard-proposal')).toBe(pending.body.proposal);
    const again = await agentCall(payments, 'POST', '/v1/refunds', { form });
    expect(again.text).toBe(executed.text);
    expect(await sandboxWrites(sandbox)).toEqual({ 'payments.create_refund': 1 });
  });

  it('refuses a blocked write with 403 and a contract violation with 422 naming the field', async () => {
    const blocked = await agentCall(payments, 'POST', '/v1/refunds', {
      form: { charge: 'ch_sg_002', amount: '200000' },
    });
    expect(blocked.status).toBe(403);
    expect(blocked.body).toMatchObject({ code: 'policy_blocked', reasonCode: 'over_hard_limit' });
    const rejected = await agentCall(payments, 'POST', '/v1/refunds', {
      form: { charge: 'ch_sg_002', amount: 'lots' },
    });
    expect(rejected.status).toBe(422);
    expect(rejected.body).toMatchObject({ code: 'contract_violation' });
    expect(rejected.body.issues).toEqual([expect.objectContaining({ path: 'amount' })]);
    expect(await sandboxWrites(sandbox)).toEqual({});
  });

  it('returns the upstream’s own refusal when it certainly did not apply the write', async () => {
    const answer = await agentCall(payments, 'POST', '/v1/refunds', {
      form: { charge: 'ch_missing', amount: '100' },
    });
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ error: { code: 'resource_missing' } });
    expect(answer.headers.get('x-sideguard-outcome')).toBe('failed_known');
  });

  it('guards a JSON write on a prefix-mounted upstream and replays it to a duplicate', async () => {
    const body = { properties: { hs_pipeline_stage: '4' } };
    const first = await agentCall(crm, 'PATCH', '/crm/v3/objects/tickets/5001', { json: body });
    expect(first.status).toBe(200);
    expect(first.body.properties).toMatchObject({ hs_pipeline_stage: '4' });
    const second = await agentCall(crm, 'PATCH', '/crm/v3/objects/tickets/5001', { json: body });
    expect(second.text).toBe(first.text);
    expect(await sandboxWrites(sandbox)).toEqual({ 'crm.update_ticket': 1 });
  });
});

describe('refusals', () => {
  it('refuses a missing or unknown key with 401 and a role using another role’s binding with 403', async () => {
    const missing = await agentCall(payments, 'GET', '/v1/refunds/re_sg_001', { key: null });
    expect(missing.status).toBe(401);
    expect(missing.headers.get('www-authenticate')).toContain('Bearer');
    expect(missing.body).toMatchObject({ code: 'agent_key_missing', decision: 'deny' });
    const wrong = await agentCall(payments, 'GET', '/v1/refunds/re_sg_001', {
      key: 'sk_test_sideguard_agent',
    });
    expect(wrong.status).toBe(401);
    expect(wrong.body.code).toBe('agent_key_invalid');
    const reader = await agentCall(payments, 'POST', '/v1/refunds', {
      key: agentKeys.reader,
      form: { charge: 'ch_sg_001', amount: '100' },
    });
    expect(reader.status).toBe(403);
    expect(reader.body.code).toBe('binding_not_permitted');
    expect(await sandboxWrites(sandbox)).toEqual({});
  });

  it('refuses reserved x-sideguard-* headers with 400 before anything else', async () => {
    const answer = await agentCall(payments, 'POST', '/v1/refunds', {
      form: { charge: 'ch_sg_001', amount: '100' },
      headers: { 'X-Sideguard-Decision': 'forward' },
    });
    expect(answer.status).toBe(400);
    expect(answer.body.code).toBe('reserved_header');
    expect(await sandboxWrites(sandbox)).toEqual({});
  });

  it('refuses a body over the limit with 413 and forwards nothing', async () => {
    const answer = await agentCall(payments, 'POST', '/v1/refunds', {
      form: { charge: 'ch_sg_001', amount: '100', reason: 'x'.repeat(10_000) },
    });
    expect(answer.status).toBe(413);
    expect(answer.body.code).toBe('body_too_large');
    expect(await sandboxWrites(sandbox)).toEqual({});
  });

  it('denies unbound writes, misses undeclared reads, applies deny rules, and refuses unsafe paths', async () => {
    const unbound = await agentCall(payments, 'POST', '/v1/charges/ch_sg_001/capture', {
      form: {},
    });
    expect(unbound.status).toBe(403);
    expect(unbound.body).toMatchObject({ code: 'write_not_bound', decision: 'deny' });
    const undeclared = await agentCall(payments, 'GET', '/v1/customers/cus_sg_001');
    expect(undeclared.status).toBe(404);
    expect(undeclared.body.code).toBe('route_not_declared');
    const denied = await agentCall(crm, 'GET', '/crm/v3/objects/contacts/1');
    expect(denied.status).toBe(403);
    expect(denied.body.code).toBe('deny_rule');
    const traversal = await agentCall(
      payments,
      'GET',
      '/v1/refunds/..%2F..%2Fcustomers%2Fcus_sg_001',
    );
    expect(traversal.status).toBe(400);
    expect(traversal.body.code).toBe('path_invalid');
    const nowhere = await agentCall(gateway.url, 'GET', '/unknown/v1/refunds');
    expect(nowhere.status).toBe(404);
  });

  it('answers malformed bodies of bound writes with 4xx, never 5xx', async () => {
    const badJson = await agentCall(crm, 'PATCH', '/crm/v3/objects/tickets/5001', {
      body: '{"properties":',
      headers: { 'content-type': 'application/json' },
    });
    expect(badJson.status).toBe(400);
    expect(badJson.body.code).toBe('body_invalid');
    const wrongType = await agentCall(crm, 'PATCH', '/crm/v3/objects/tickets/5001', {
      body: '<xml/>',
      headers: { 'content-type': 'application/xml' },
    });
    expect(wrongType.status).toBe(415);
    const notAnObject = await agentCall(crm, 'PATCH', '/crm/v3/objects/tickets/5001', {
      json: [1, 2],
    });
    expect(notAnObject.status).toBe(422);
  });
});

describe('shadow mode', () => {
  it('records a write instead of sending it and answers a later read of the resource from shadow state', async () => {
    const before = await agentCall(gateway.url, 'GET', '/crm-shadow/crm/v3/objects/tickets/5002');
    expect(before.status).toBe(200);
    expect(before.headers.get('x-sideguard-decision')).toBe('forward');
    const body = { properties: { hs_pipeline_stage: '4' } };
    const write = await agentCall(gateway.url, 'PATCH', '/crm-shadow/crm/v3/objects/tickets/5002', {
      json: body,
    });
    expect(write.status).toBe(202);
    expect(write.body).toMatchObject({
      mode: 'shadow_write',
      upstream: 'crm-shadow',
      action: 'support.update_ticket@1',
      wouldBe: 'authorized',
    });
    const after = await agentCall(gateway.url, 'GET', '/crm-shadow/crm/v3/objects/tickets/5002');
    expect(after.headers.get('x-sideguard-decision')).toBe('shadow_read');
    expect(after.body).toEqual(body);
    const other = await agentCall(gateway.url, 'GET', '/crm-shadow/crm/v3/objects/tickets/5003');
    expect(other.headers.get('x-sideguard-decision')).toBe('forward');
    expect(await sandboxWrites(sandbox)).toEqual({});
  });

  it('still refuses a shadow write that breaks the contract', async () => {
    const write = await agentCall(gateway.url, 'PATCH', '/crm-shadow/crm/v3/objects/tickets/5002', {
      json: { properties: { hs_pipeline_stage: '9' } },
    });
    expect(write.status).toBe(422);
    expect(write.body.code).toBe('contract_violation');
  });
});
