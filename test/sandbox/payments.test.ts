/**
 * The Stripe-shaped payments provider over real HTTP: routes, refund rules, Stripe's error
 * shape, idempotency semantics, identity, reserved headers and bad input.
 */
import { startSandbox } from 'sideguard/sandbox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  call,
  formHeaders,
  keys,
  rawRequest,
  startTestSandbox,
  tempDir,
} from './sandbox-helpers.js';

type Sandbox = Awaited<ReturnType<typeof startTestSandbox>>;

describe('payments provider', () => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await startTestSandbox();
  });
  afterAll(async () => {
    await sandbox.stop();
  });

  const post = (form: Record<string, string>, headers: Record<string, string> = {}) =>
    call(sandbox.dataUrl, 'POST', '/v1/refunds', { key: keys.paymentsWriter, form, headers });

  it('serves seeded charges, customers and payment intents by id with a Request-Id header', async () => {
    const charge = await call(sandbox.dataUrl, 'GET', '/v1/charges/ch_sg_001', {
      key: keys.paymentsWriter,
    });
    expect(charge.status).toBe(200);
    expect(charge.body).toMatchObject({
      id: 'ch_sg_001',
      object: 'charge',
      amount_refunded: 0,
      customer: 'cus_sg_001',
      payment_intent: 'pi_sg_001',
    });
    expect(Number.isInteger(charge.body.amount)).toBe(true);
    expect(charge.headers.get('request-id')).toMatch(/^req_[A-Za-z0-9]{14}$/);
    const customer = await call(sandbox.dataUrl, 'GET', '/v1/customers/cus_sg_002', {
      key: keys.paymentsReader,
    });
    expect(customer.body).toMatchObject({ id: 'cus_sg_002', object: 'customer' });
    const intent = await call(sandbox.dataUrl, 'GET', '/v1/payment_intents/pi_sg_003', {
      key: keys.paymentsReader,
    });
    expect(intent.body).toMatchObject({
      id: 'pi_sg_003',
      object: 'payment_intent',
      latest_charge: 'ch_sg_003',
      status: 'succeeded',
    });
  });

  it('creates a refund, records its effect key, and serves it by id and in filtered lists', async () => {
    const created = await post({
      charge: 'ch_sg_002',
      amount: '300',
      reason: 'requested_by_customer',
      'metadata[sideguard_effect]': 'effect-list-1',
    });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({
      object: 'refund',
      amount: 300,
      charge: 'ch_sg_002',
      payment_intent: 'pi_sg_002',
      status: 'succeeded',
      reason: 'requested_by_customer',
    });
    expect(created.body.metadata).toEqual({ sideguard_effect: 'effect-list-1' });
    expect(created.body.id).toMatch(/^re_[A-Za-z0-9]{24}$/);

    const fetched = await call(sandbox.dataUrl, 'GET', `/v1/refunds/${created.body.id}`, {
      key: keys.paymentsReader,
    });
    expect(fetched.body).toEqual(created.body);

    const byCharge = await call(sandbox.dataUrl, 'GET', '/v1/refunds?charge=ch_sg_002&limit=5', {
      key: keys.paymentsReader,
    });
    expect(byCharge.body).toMatchObject({ object: 'list', has_more: false, url: '/v1/refunds' });
    expect(byCharge.body.data.map((refund: { id: string }) => refund.id)).toEqual([
      created.body.id,
    ]);
    const byIntent = await call(sandbox.dataUrl, 'GET', '/v1/refunds?payment_intent=pi_sg_002', {
      key: keys.paymentsReader,
    });
    expect(byIntent.body.data).toHaveLength(1);

    const observations = await sandbox.control.observations();
    expect(observations.writes.byEffect['effect-list-1']).toEqual({
      count: 1,
      byOperation: { 'payments.create_refund': 1 },
    });
    const receipt = observations.receipts.find((entry) => entry.objectId === created.body.id);
    expect(receipt).toMatchObject({
      provider: 'payments',
      operation: 'create_refund',
      amountMinor: 300,
      currency: 'usd',
      effectKey: 'effect-list-1',
    });
  });

  it('refunds through a payment intent and by default refunds what is left of the charge', async () => {
    const charge = await call(sandbox.dataUrl, 'GET', '/v1/charges/ch_sg_003', {
      key: keys.paymentsWriter,
    });
    const created = await post({ payment_intent: 'pi_sg_003' });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({ amount: charge.body.amount, charge: 'ch_sg_003' });
    const after = await call(sandbox.dataUrl, 'GET', '/v1/charges/ch_sg_003', {
      key: keys.paymentsWriter,
    });
    expect(after.body).toMatchObject({ amount_refunded: charge.body.amount, refunded: true });
  });

  it('never refunds more than is left of a charge: amount_too_large, then charge_already_refunded', async () => {
    const charge = (
      await call(sandbox.dataUrl, 'GET', '/v1/charges/ch_sg_004', { key: keys.paymentsWriter })
    ).body;
    const tooLarge = await post({ charge: 'ch_sg_004', amount: String(charge.amount + 1) });
    expect(tooLarge.status).toBe(400);
    expect(tooLarge.body.error).toMatchObject({
      type: 'invalid_request_error',
      code: 'amount_too_large',
      param: 'amount',
    });
    expect((await post({ charge: 'ch_sg_004', amount: String(charge.amount - 100) })).status).toBe(
      200,
    );
    const rest = await post({ charge: 'ch_sg_004', amount: '101' });
    expect(rest.body.error.code).toBe('amount_too_large');
    expect((await post({ charge: 'ch_sg_004', amount: '100' })).status).toBe(200);
    const done = await post({ charge: 'ch_sg_004', amount: '1' });
    expect(done.status).toBe(400);
    expect(done.body.error).toMatchObject({
      type: 'invalid_request_error',
      code: 'charge_already_refunded',
    });
    const seededFull = await post({ charge: 'ch_sg_006' });
    expect(seededFull.body.error.code).toBe('charge_already_refunded');
  });

  it('answers missing objects with resource_missing: 404 by id, 400 when referenced', async () => {
    const byId = await call(sandbox.dataUrl, 'GET', '/v1/refunds/re_nope', {
      key: keys.paymentsWriter,
    });
    expect(byId.status).toBe(404);
    expect(byId.body.error).toEqual({
      type: 'invalid_request_error',
      code: 'resource_missing',
      param: 'id',
      message: "No such refund: 're_nope'",
    });
    const referenced = await post({ charge: 'ch_missing', amount: '1' });
    expect(referenced.status).toBe(400);
    expect(referenced.body.error).toMatchObject({ code: 'resource_missing', param: 'charge' });
  });

  it('rejects unknown parameters, bad integers, bad reasons, missing targets and wrong content types without writing', async () => {
    const before = await sandbox.control.digest();
    const cases: [Record<string, string>, string | undefined, string | undefined][] = [
      [{ charge: 'ch_sg_001', colour: 'blue' }, 'parameter_unknown', 'colour'],
      [{ charge: 'ch_sg_001', amount: '12.5' }, 'parameter_invalid_integer', 'amount'],
      [{ charge: 'ch_sg_001', amount: '0' }, 'parameter_invalid_integer', 'amount'],
      [{ charge: 'ch_sg_001', amount: '-3' }, 'parameter_invalid_integer', 'amount'],
      [{ charge: 'ch_sg_001', reason: 'boredom' }, undefined, 'reason'],
      [{ amount: '100' }, 'parameter_missing', undefined],
    ];
    for (const [form, code, param] of cases) {
      const answer = await post(form);
      expect(answer.status, JSON.stringify(form)).toBe(400);
      expect(answer.body.error.type).toBe('invalid_request_error');
      expect(answer.body.error.code).toBe(code);
      expect(answer.body.error.param).toBe(param);
    }
    const json = await call(sandbox.dataUrl, 'POST', '/v1/refunds', {
      key: keys.paymentsWriter,
      json: { charge: 'ch_sg_001' },
    });
    expect(json.status).toBe(400);
    expect(json.body.error.message).toContain('unsupported Content-Type application/json');
    expect(await sandbox.control.digest()).toEqual(before);
  });

  it('answers a missing key and an unknown key with 401, and a read-only key on a write with 403, like Stripe', async () => {
    const missing = await call(sandbox.dataUrl, 'GET', '/v1/charges/ch_sg_001');
    expect(missing.status).toBe(401);
    expect(missing.body.error.message).toContain('You did not provide an API key');
    const unknown = await call(sandbox.dataUrl, 'GET', '/v1/charges/ch_sg_001', {
      key: 'sk_test_not_a_real_key',
    });
    expect(unknown.status).toBe(401);
    expect(unknown.body.error.message).toBe('Invalid API Key provided: sk_test_**********_key');
    const forbidden = await call(sandbox.dataUrl, 'POST', '/v1/refunds', {
      key: keys.paymentsReader,
      form: { charge: 'ch_sg_001', amount: '1' },
    });
    expect(forbidden.status).toBe(403);
    expect(forbidden.body.error.type).toBe('invalid_request_error');
    const basic = await call(sandbox.dataUrl, 'GET', '/v1/charges/ch_sg_001', {
      headers: {
        Authorization: `Basic ${Buffer.from(`${keys.paymentsWriter}:`).toString('base64')}`,
      },
    });
    expect(basic.status).toBe(200);
    const decisions = (await sandbox.control.observations()).requests
      .slice(-4)
      .map((entry) => [entry.decision, entry.status, entry.writeOutcome]);
    expect(decisions).toEqual([
      ['unauthenticated', 401, 'not_dispatched'],
      ['unknown_key', 401, 'not_dispatched'],
      ['forbidden', 403, 'not_dispatched'],
      ['served', 200, 'not_dispatched'],
    ]);
  });

  it('rejects any x-sideguard-* header with 400 and changes nothing', async () => {
    const before = await sandbox.control.digest();
    const answer = await post(
      { charge: 'ch_sg_001', amount: '5' },
      { 'X-Sideguard-Fault': 'none' },
    );
    expect(answer.status).toBe(400);
    expect(answer.body.error).toMatchObject({
      type: 'invalid_request_error',
      code: 'reserved_header',
    });
    expect(await sandbox.control.digest()).toEqual(before);
  });

  it('never answers control routes on the data plane: 404 in the provider shape', async () => {
    for (const path of ['/health', '/export', '/reset', '/v1/reset', '/faults']) {
      const answer = await call(sandbox.dataUrl, path === '/reset' ? 'POST' : 'GET', path, {
        key: keys.paymentsWriter,
      });
      expect(answer.status, path).toBe(404);
    }
    const stripeShaped = await call(sandbox.dataUrl, 'GET', '/v1/export', {
      key: keys.paymentsWriter,
    });
    expect(stripeShaped.body.error.message).toContain('Unrecognized request URL (GET: /v1/export)');
  });

  it('answers an oversized body with 413 in Stripe shape and keeps serving', async () => {
    const big = `charge=ch_sg_001&metadata[note]=${'x'.repeat(70 * 1024)}`;
    const answer = await rawRequest(sandbox.dataUrl, 'POST', '/v1/refunds', {
      headers: formHeaders(),
      body: big,
    });
    if (answer.kind === 'response') {
      expect(answer.status).toBe(413);
      expect(JSON.parse(answer.body).error.type).toBe('invalid_request_error');
    } else {
      // The server may close while the client is still sending: still no write.
      expect(answer.kind).toBe('connection_error');
    }
    expect(
      (await call(sandbox.dataUrl, 'GET', '/v1/charges/ch_sg_001', { key: keys.paymentsWriter }))
        .status,
    ).toBe(200);
  });

  it('treats path traversal in ids as a missing object or an unknown route, never a file', async () => {
    const headers = { Authorization: `Bearer ${keys.paymentsWriter}` };
    for (const id of [
      '..%2F..%2Fstate.json',
      '%2e%2e',
      '__proto__',
      'constructor',
      '..%5Cjournal.jsonl',
    ]) {
      const answer = await rawRequest(sandbox.dataUrl, 'GET', `/v1/refunds/${id}`, { headers });
      expect(answer.kind === 'response' && answer.status, id).toBe(404);
      expect(answer.kind === 'response' && JSON.parse(answer.body).error.code, id).toBe(
        'resource_missing',
      );
    }
    const dotted = await rawRequest(sandbox.dataUrl, 'GET', '/v1/refunds/../../state.json', {
      headers,
    });
    expect(dotted.kind === 'response' && dotted.status).toBe(404);
    expect(dotted.kind === 'response' && JSON.parse(dotted.body).error.type).toBe(
      'invalid_request_error',
    );
  });

  describe('Idempotency-Key (Stripe semantics)', () => {
    it('replays the saved response for the same key and parameters, with Idempotent-Replayed', async () => {
      const form = { charge: 'ch_sg_001', amount: '111', 'metadata[sideguard_effect]': 'idem-1' };
      const first = await post(form, { 'Idempotency-Key': 'key-replay' });
      const second = await post(
        { 'metadata[sideguard_effect]': 'idem-1', amount: '111', charge: 'ch_sg_001' },
        { 'Idempotency-Key': 'key-replay' },
      );
      expect(second.status).toBe(200);
      expect(second.text).toBe(first.text);
      expect(second.headers.get('idempotent-replayed')).toBe('true');
      expect(second.headers.get('original-request')).toBe(first.headers.get('request-id'));
      const observations = await sandbox.control.observations();
      expect(observations.writes.byEffect['idem-1']?.count).toBe(1);
      expect(observations.requests.at(-1)).toMatchObject({
        decision: 'replayed',
        writeOutcome: 'not_dispatched',
        idempotencyKey: 'key-replay',
      });
    });

    it('replays an execution error too (amount_too_large), but never saves a validation failure', async () => {
      const tooLarge = { charge: 'ch_sg_001', amount: '99999999' };
      const first = await post(tooLarge, { 'Idempotency-Key': 'key-error' });
      expect(first.body.error.code).toBe('amount_too_large');
      const replay = await post(tooLarge, { 'Idempotency-Key': 'key-error' });
      expect(replay.status).toBe(400);
      expect(replay.headers.get('idempotent-replayed')).toBe('true');

      const invalid = await post(
        { charge: 'ch_sg_001', amount: 'ten' },
        { 'Idempotency-Key': 'key-validation' },
      );
      expect(invalid.body.error.code).toBe('parameter_invalid_integer');
      const valid = await post(
        { charge: 'ch_sg_001', amount: '10' },
        { 'Idempotency-Key': 'key-validation' },
      );
      expect(valid.status).toBe(200);
      expect(valid.headers.get('idempotent-replayed')).toBeNull();
    });

    it('rejects the same key with different parameters with an idempotency_error', async () => {
      await post({ charge: 'ch_sg_001', amount: '12' }, { 'Idempotency-Key': 'key-mismatch' });
      const other = await post(
        { charge: 'ch_sg_001', amount: '13' },
        { 'Idempotency-Key': 'key-mismatch' },
      );
      expect(other.status).toBe(400);
      expect(other.body.error.type).toBe('idempotency_error');
      expect(other.body.error.message).toContain("Try using a key other than 'key-mismatch'");
    });

    it('scopes keys to the API key that used them', async () => {
      const { dir, cleanup } = await tempDir();
      const scoped = await startSandbox({
        stateDir: dir,
        controlToken: 'test-control-token-0123456789',
        apiKeys: [
          { provider: 'payments', role: 'refunds_writer', key: 'sk_test_one' },
          { provider: 'payments', role: 'refunds_writer', key: 'sk_test_two' },
        ],
      });
      try {
        const form = { charge: 'ch_sg_001', amount: '5' };
        await call(scoped.dataUrl, 'POST', '/v1/refunds', {
          key: 'sk_test_one',
          form,
          headers: { 'Idempotency-Key': 'shared' },
        });
        const second = await call(scoped.dataUrl, 'POST', '/v1/refunds', {
          key: 'sk_test_two',
          form,
          headers: { 'Idempotency-Key': 'shared' },
        });
        expect(second.headers.get('idempotent-replayed')).toBeNull();
        expect((await scoped.control.observations()).writes.total).toBe(2);
      } finally {
        await scoped.close();
        await cleanup();
      }
    });

    it('rejects a key longer than 255 characters', async () => {
      const answer = await post(
        { charge: 'ch_sg_001', amount: '1' },
        { 'Idempotency-Key': 'k'.repeat(256) },
      );
      expect(answer.status).toBe(400);
      expect(answer.body.error.param).toBe('Idempotency-Key');
    });
  });
});

describe('payments provider configured to ignore idempotency keys', () => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await startTestSandbox({ idempotency: { payments: 'ignore' } });
  });
  afterAll(async () => {
    await sandbox.stop();
  });

  it('executes every request even with the same key, and echoes no replay headers', async () => {
    const form = { charge: 'ch_sg_001', amount: '50', 'metadata[sideguard_effect]': 'dup' };
    const first = await call(sandbox.dataUrl, 'POST', '/v1/refunds', {
      key: keys.paymentsWriter,
      form,
      headers: { 'Idempotency-Key': 'same' },
    });
    const second = await call(sandbox.dataUrl, 'POST', '/v1/refunds', {
      key: keys.paymentsWriter,
      form,
      headers: { 'Idempotency-Key': 'same' },
    });
    expect(first.status).toBe(200);
    expect(second.status).toBe(200);
    expect(second.body.id).not.toBe(first.body.id);
    expect(second.headers.get('idempotent-replayed')).toBeNull();
    expect((await sandbox.control.observations()).writes.byEffect.dup?.count).toBe(2);
    expect((await sandbox.control.health()).idempotency).toEqual({ payments: 'ignore' });
  });

  it('still records the key each request sent, in the request log and on its receipt', async () => {
    await sandbox.control.reset();
    const form = { charge: 'ch_sg_002', amount: '5', 'metadata[sideguard_effect]': 'logged' };
    for (const key of ['first-key', 'first-key', 'second-key']) {
      const answer = await call(sandbox.dataUrl, 'POST', '/v1/refunds', {
        key: keys.paymentsWriter,
        form,
        headers: { 'Idempotency-Key': key },
      });
      expect(answer.status).toBe(200);
    }
    await call(sandbox.dataUrl, 'POST', '/v1/refunds', { key: keys.paymentsWriter, form });
    const observations = await sandbox.control.observations();
    const writes = observations.requests.filter((r) => r.operation === 'create_refund');
    expect(writes.map((r) => r.idempotencyKey)).toEqual([
      'first-key',
      'first-key',
      'second-key',
      null,
    ]);
    expect(writes.map((r) => r.decision)).toEqual(['served', 'served', 'served', 'served']);
    expect(observations.receipts.map((r) => r.idempotencyKey)).toEqual([
      'first-key',
      'first-key',
      'second-key',
      null,
    ]);
  });
});
