/**
 * The HubSpot-shaped CRM, Jira-shaped issues and commerce orders providers over real HTTP:
 * routes, rules, error shapes, identity, effect observation and live refund eligibility.
 */
import { buildSeedCatalogue } from 'sideguard/sandbox';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { call, keys, rawRequest, startTestSandbox } from './sandbox-helpers.js';

type Sandbox = Awaited<ReturnType<typeof startTestSandbox>>;

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

describe('crm provider (HubSpot tickets)', () => {
  it('reads a ticket in HubSpot shape, optionally limited to some properties', async () => {
    const ticket = await call(sandbox.dataUrl, 'GET', '/crm/v3/objects/tickets/5001', {
      key: keys.crmReader,
    });
    expect(ticket.status).toBe(200);
    expect(ticket.body).toMatchObject({
      id: '5001',
      archived: false,
      properties: { hs_object_id: '5001', order_id: 'ord_1001' },
    });
    expect(typeof ticket.body.createdAt).toBe('string');
    const limited = await call(
      sandbox.dataUrl,
      'GET',
      '/crm/v3/objects/tickets/5001?properties=subject,hs_pipeline_stage',
      { key: keys.crmReader },
    );
    expect(Object.keys(limited.body.properties).sort()).toEqual([
      'hs_object_id',
      'hs_pipeline_stage',
      'subject',
    ]);
  });

  it('patches properties, records the sideguard_effect property as the effect, and returns the object', async () => {
    const patched = await call(sandbox.dataUrl, 'PATCH', '/crm/v3/objects/tickets/5002', {
      key: keys.crmWriter,
      json: { properties: { hs_pipeline_stage: '4', sideguard_effect: 'close-5002' } },
    });
    expect(patched.status).toBe(200);
    expect(patched.body.properties).toMatchObject({
      hs_pipeline_stage: '4',
      sideguard_effect: 'close-5002',
    });
    const read = await call(sandbox.dataUrl, 'GET', '/crm/v3/objects/tickets/5002', {
      key: keys.crmReader,
    });
    expect(read.body.properties.sideguard_effect).toBe('close-5002');
    const observations = await sandbox.control.observations();
    expect(observations.writes.byEffect['close-5002']).toEqual({
      count: 1,
      byOperation: { 'crm.update_ticket': 1 },
    });
    expect(observations.receipts[0]).toMatchObject({
      provider: 'crm',
      operation: 'update_ticket',
      objectId: '5002',
    });
  });

  it('answers errors in HubSpot shape with a correlationId, and writes nothing', async () => {
    const before = await sandbox.control.digest();
    const missing = await call(sandbox.dataUrl, 'GET', '/crm/v3/objects/tickets/9999', {
      key: keys.crmReader,
    });
    expect(missing.status).toBe(404);
    expect(missing.body).toMatchObject({ status: 'error', category: 'OBJECT_NOT_FOUND' });
    expect(missing.body.correlationId).toBe(missing.headers.get('x-hubspot-correlation-id'));
    const unknownProperty = await call(sandbox.dataUrl, 'PATCH', '/crm/v3/objects/tickets/5001', {
      key: keys.crmWriter,
      json: { properties: { colour: 'red' } },
    });
    expect(unknownProperty.status).toBe(400);
    expect(unknownProperty.body.category).toBe('VALIDATION_ERROR');
    const badStage = await call(sandbox.dataUrl, 'PATCH', '/crm/v3/objects/tickets/5001', {
      key: keys.crmWriter,
      json: { properties: { hs_pipeline_stage: '9' } },
    });
    expect(badStage.status).toBe(400);
    const malformed = await call(sandbox.dataUrl, 'PATCH', '/crm/v3/objects/tickets/5001', {
      key: keys.crmWriter,
      body: '{"properties":',
      headers: { 'Content-Type': 'application/json' },
    });
    expect(malformed.status).toBe(400);
    const wrongType = await call(sandbox.dataUrl, 'PATCH', '/crm/v3/objects/tickets/5001', {
      key: keys.crmWriter,
      body: 'properties=1',
      headers: { 'Content-Type': 'text/plain' },
    });
    expect(wrongType.status).toBe(415);
    const extraField = await call(sandbox.dataUrl, 'PATCH', '/crm/v3/objects/tickets/5001', {
      key: keys.crmWriter,
      json: { properties: {}, archived: true },
    });
    expect(extraField.status).toBe(400);
    expect(await sandbox.control.digest()).toEqual(before);
  });

  it('answers a missing or unknown token with 401 and a read-only token on PATCH with 403', async () => {
    const missing = await call(sandbox.dataUrl, 'GET', '/crm/v3/objects/tickets/5001');
    expect([missing.status, missing.body.category]).toEqual([401, 'INVALID_AUTHENTICATION']);
    const unknown = await call(sandbox.dataUrl, 'GET', '/crm/v3/objects/tickets/5001', {
      key: 'pat-unknown',
    });
    expect([unknown.status, unknown.body.category]).toEqual([401, 'INVALID_AUTHENTICATION']);
    const forbidden = await call(sandbox.dataUrl, 'PATCH', '/crm/v3/objects/tickets/5001', {
      key: keys.crmReader,
      json: { properties: { subject: 'x' } },
    });
    expect([forbidden.status, forbidden.body.category]).toEqual([403, 'MISSING_SCOPES']);
  });

  it('commits a PATCH whose response is dropped after the write', async () => {
    await sandbox.control.setFaults({
      version: 1,
      rules: [
        {
          provider: 'crm',
          operation: 'update_ticket',
          requests: [0],
          fault: { kind: 'drop_after_write' },
        },
      ],
    });
    const answer = await rawRequest(sandbox.dataUrl, 'PATCH', '/crm/v3/objects/tickets/5003', {
      headers: { Authorization: `Bearer ${keys.crmWriter}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({
        properties: { hs_ticket_priority: 'URGENT', sideguard_effect: 'urgent-5003' },
      }),
    });
    expect(answer.kind).toBe('connection_error');
    const read = await call(sandbox.dataUrl, 'GET', '/crm/v3/objects/tickets/5003', {
      key: keys.crmReader,
    });
    expect(read.body.properties.hs_ticket_priority).toBe('URGENT');
    expect((await sandbox.control.observations()).trace[0]).toMatchObject({
      fault: 'drop_after_write',
      writeOutcome: 'committed',
    });
  });
});

describe('issues provider (Jira)', () => {
  const basic = (token: string) =>
    `Basic ${Buffer.from(`agent@example.test:${token}`).toString('base64')}`;

  it('reads an issue by id or key in Jira shape', async () => {
    const byId = await call(sandbox.dataUrl, 'GET', '/rest/api/3/issue/10001', {
      headers: { Authorization: basic(keys.issuesReader) },
    });
    expect(byId.status).toBe(200);
    expect(byId.body).toMatchObject({
      id: '10001',
      key: 'SUP-1',
      self: `${sandbox.dataUrl}/rest/api/3/issue/10001`,
      fields: { status: { name: 'To Do' } },
    });
    const byKey = await call(sandbox.dataUrl, 'GET', '/rest/api/3/issue/SUP-1', {
      key: keys.issuesReader,
    });
    expect(byKey.body.id).toBe('10001');
  });

  it('edits fields with PUT → 204 and records the sideguard_effect field as the effect', async () => {
    const put = await call(sandbox.dataUrl, 'PUT', '/rest/api/3/issue/SUP-2', {
      headers: { Authorization: basic(keys.issuesWriter) },
      json: {
        fields: {
          labels: ['refund', 'escalated'],
          priority: { name: 'High' },
          sideguard_effect: 'edit-sup-2',
        },
      },
    });
    expect(put.status).toBe(204);
    expect(put.text).toBe('');
    const read = await call(sandbox.dataUrl, 'GET', '/rest/api/3/issue/SUP-2', {
      key: keys.issuesReader,
    });
    expect(read.body.fields).toMatchObject({
      labels: ['refund', 'escalated'],
      priority: { name: 'High' },
      sideguard_effect: 'edit-sup-2',
    });
    expect(
      (await sandbox.control.observations()).writes.byEffect['edit-sup-2']?.byOperation,
    ).toEqual({ 'issues.update_issue': 1 });
  });

  it('lists and performs transitions; a transition to the current status is not available', async () => {
    const listed = await call(sandbox.dataUrl, 'GET', '/rest/api/3/issue/10001/transitions', {
      key: keys.issuesReader,
    });
    expect(listed.body.transitions.map((transition: { id: string }) => transition.id)).toEqual([
      '21',
      '31',
    ]);
    const done = await call(sandbox.dataUrl, 'POST', '/rest/api/3/issue/10001/transitions', {
      key: keys.issuesWriter,
      json: { transition: { id: '31' }, fields: { sideguard_effect: 'close-sup-1' } },
    });
    expect(done.status).toBe(204);
    const read = await call(sandbox.dataUrl, 'GET', '/rest/api/3/issue/10001', {
      key: keys.issuesReader,
    });
    expect(read.body.fields.status).toEqual({ id: '10001', name: 'Done' });
    const again = await call(sandbox.dataUrl, 'POST', '/rest/api/3/issue/10001/transitions', {
      key: keys.issuesWriter,
      json: { transition: { id: '31' } },
    });
    expect(again.status).toBe(400);
    expect(again.body).toEqual({
      errorMessages: ["Transition id '31' is not valid for this issue."],
      errors: {},
    });
    expect((await sandbox.control.observations()).writes.total).toBe(1);
  });

  it('answers bad input and bad keys in Jira shape without writing', async () => {
    const before = await sandbox.control.digest();
    const unknownField = await call(sandbox.dataUrl, 'PUT', '/rest/api/3/issue/10001', {
      key: keys.issuesWriter,
      json: { fields: { customfield_1: 'x' } },
    });
    expect(unknownField.status).toBe(400);
    expect(unknownField.body.errors.customfield_1).toContain('cannot be set');
    const blankSummary = await call(sandbox.dataUrl, 'PUT', '/rest/api/3/issue/10001', {
      key: keys.issuesWriter,
      json: { fields: { summary: '  ' } },
    });
    expect(blankSummary.body.errors.summary).toBe('You must specify a summary of the issue.');
    const missing = await call(sandbox.dataUrl, 'GET', '/rest/api/3/issue/NOPE-9', {
      key: keys.issuesReader,
    });
    expect(missing.status).toBe(404);
    expect(missing.body.errorMessages[0]).toContain('Issue does not exist');
    expect((await call(sandbox.dataUrl, 'GET', '/rest/api/3/issue/10001')).status).toBe(401);
    expect(
      (await call(sandbox.dataUrl, 'GET', '/rest/api/3/issue/10001', { key: 'jira-unknown' }))
        .status,
    ).toBe(401);
    const forbidden = await call(sandbox.dataUrl, 'PUT', '/rest/api/3/issue/10001', {
      key: keys.issuesReader,
      json: { fields: { summary: 'x' } },
    });
    expect(forbidden.status).toBe(403);
    expect(await sandbox.control.digest()).toEqual(before);
  });
});

describe('orders provider', () => {
  it('lists the seeded orders with line items and links to their charges', async () => {
    const catalogue = buildSeedCatalogue(42);
    const list = await call(sandbox.dataUrl, 'GET', '/commerce/orders', { key: keys.orders });
    expect(list.status).toBe(200);
    expect(list.body.data.map((order: { id: string }) => order.id)).toEqual(
      catalogue.orders.map((order) => order.id),
    );
    const first = list.body.data[0];
    expect(first).toMatchObject({
      id: 'ord_1001',
      charge_id: 'ch_sg_001',
      payment_intent_id: 'pi_sg_001',
      currency: 'usd',
    });
    expect(
      first.line_items.reduce(
        (sum: number, item: { amount_minor: number }) => sum + item.amount_minor,
        0,
      ),
    ).toBe(first.total_amount_minor);
    const byCustomer = await call(
      sandbox.dataUrl,
      'GET',
      '/commerce/orders?customer_id=cus_sg_001',
      { key: keys.orders },
    );
    expect(byCustomer.body.data.map((order: { id: string }) => order.id)).toEqual([
      'ord_1001',
      'ord_1006',
    ]);
  });

  it('computes the eligible refund amount live from payments state (refunds made elsewhere change it)', async () => {
    const before = await call(sandbox.dataUrl, 'GET', '/commerce/orders/ord_1002', {
      key: keys.orders,
    });
    expect(before.body.eligible_refund_amount_minor).toBe(before.body.total_amount_minor);
    await call(sandbox.dataUrl, 'POST', '/v1/refunds', {
      key: keys.paymentsWriter,
      form: { charge: 'ch_sg_002', amount: '700' },
    });
    const after = await call(sandbox.dataUrl, 'GET', '/commerce/orders/ord_1002', {
      key: keys.orders,
    });
    expect(after.body.eligible_refund_amount_minor).toBe(before.body.total_amount_minor - 700);
    expect(after.body.refunded_amount_minor).toBe(700);
    const fullyRefunded = await call(sandbox.dataUrl, 'GET', '/commerce/orders/ord_1006', {
      key: keys.orders,
    });
    expect(fullyRefunded.body.eligible_refund_amount_minor).toBe(0);
  });

  it('answers unknown orders, unknown parameters and keys in its own shape', async () => {
    const missing = await call(sandbox.dataUrl, 'GET', '/commerce/orders/ord_9999', {
      key: keys.orders,
    });
    expect([missing.status, missing.body.error.code]).toEqual([404, 'order_not_found']);
    const unknownParameter = await call(sandbox.dataUrl, 'GET', '/commerce/orders?sort=desc', {
      key: keys.orders,
    });
    expect([unknownParameter.status, unknownParameter.body.error.code]).toEqual([
      400,
      'unknown_parameter',
    ]);
    expect((await call(sandbox.dataUrl, 'GET', '/commerce/orders')).status).toBe(401);
    const unknownKey = await call(sandbox.dataUrl, 'GET', '/commerce/orders', {
      key: 'orders_wrong',
    });
    expect([unknownKey.status, unknownKey.body.error.code]).toEqual([403, 'invalid_api_key']);
    const wrongProviderKey = await call(sandbox.dataUrl, 'GET', '/commerce/orders', {
      key: keys.paymentsWriter,
    });
    expect(wrongProviderKey.status).toBe(403);
  });
});

describe('seed data', () => {
  it('is deterministic from the seed, with fixed ids and seed-dependent contents', () => {
    expect(buildSeedCatalogue(42)).toEqual(buildSeedCatalogue(42));
    const other = buildSeedCatalogue(43);
    expect(other.orders.map((order) => order.id)).toEqual(
      buildSeedCatalogue(42).orders.map((order) => order.id),
    );
    expect(other).not.toEqual(buildSeedCatalogue(42));
  });
});
