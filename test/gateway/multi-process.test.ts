/**
 * Two `sideguard serve` processes on one PostgreSQL store behave as one gateway: a racing pair
 * of identical calls writes once and both callers get the original response; a duplicate that
 * reaches the other process while the original still executes waits for it. Skips with a
 * printed reason without PostgreSQL, unless SIDEGUARD_REQUIRE_POSTGRES=1.
 */
import { randomBytes } from 'node:crypto';
import { type LedgerEvent, verifyLedgerChain } from 'sideguard';
import { createPostgresStore } from 'sideguard/postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSandbox } from '../sandbox/sandbox-helpers.js';
import { freshTestSchema, postgresTestUrl } from '../support/postgres.js';
import { agentCall, fixtureConfig, sandboxWrites, type TestSandbox } from './gateway-helpers.js';
import { type ServeProcess, startServeProcess } from './serve-process.js';

const url = await postgresTestUrl();

describe.skipIf(url === undefined)('two gateway processes on one PostgreSQL store', () => {
  let sandbox: TestSandbox;
  let first: ServeProcess;
  let second: ServeProcess;
  const schema = freshTestSchema(url ?? '', 'gateway_multi');

  const openStore = () =>
    createPostgresStore({ connectionString: url ?? '', schema: schema.schema });
  const ledgerSequence = async () => {
    const store = await openStore();
    try {
      return (await store.ledgerHead('acme'))?.sequence ?? 0;
    } finally {
      await store.close();
    }
  };
  /** Waits until the shared ledger holds an event of this type after `afterSequence`. */
  const waitForLedgerEvent = async (type: string, afterSequence: number) => {
    const store = await openStore();
    try {
      for (let attempt = 0; attempt < 500; attempt++) {
        const events = await store.readLedger({ tenant: 'acme', afterSequence });
        if (events.some((event) => event.type === type)) return;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      throw new Error(`no ${type} event appeared in the ledger`);
    } finally {
      await store.close();
    }
  };

  beforeAll(async () => {
    sandbox = await startTestSandbox();
    const environment = {
      SG_TEST_SANDBOX_URL: sandbox.dataUrl,
      SG_TEST_STORE: url ?? '',
      SG_TEST_STORE_SCHEMA: schema.schema,
      SIDEGUARD_KEYS: `current=k1:1;effect=k1:1;k1:1=${randomBytes(32).toString('base64url')}`,
    };
    const args = [
      'serve',
      '--config',
      fixtureConfig,
      '--port',
      '0',
      '--upstream-port',
      'payments=0',
    ];
    // Started one after the other: both migrate the same schema; the advisory lock serialises them.
    [first, second] = await Promise.all([
      startServeProcess(args, environment),
      startServeProcess(args, environment),
    ]);
  });
  afterAll(async () => {
    expect(await first?.stop()).toBe(0);
    expect(await second?.stop()).toBe(0);
    await sandbox?.stop();
    await schema.drop();
  });

  it('writes a racing pair once and gives both callers the original response', async () => {
    await sandbox.control.reset();
    const form = { charge: 'ch_sg_001', amount: '410' };
    const [a, b] = await Promise.all([
      agentCall(first.upstreams.payments ?? '', 'POST', '/v1/refunds', { form }),
      agentCall(second.upstreams.payments ?? '', 'POST', '/v1/refunds', { form }),
    ]);
    expect(a.status).toBe(200);
    expect(b.status).toBe(200);
    expect(b.text).toBe(a.text);
    expect(a.body).toMatchObject({ object: 'refund', amount: 410 });
    expect(await sandboxWrites(sandbox)).toEqual({ 'payments.create_refund': 1 });
  });

  it('lets a duplicate at the other process wait for the original still executing, then replay it', async () => {
    await sandbox.control.reset();
    await sandbox.control.setFaults({
      version: 1,
      rules: [
        {
          provider: 'payments',
          operation: 'create_refund',
          requests: [0],
          fault: { kind: 'hold' },
        },
      ],
    });
    const form = { charge: 'ch_sg_002', amount: '420' };
    const original = agentCall(first.upstreams.payments ?? '', 'POST', '/v1/refunds', { form });
    const [held] = await sandbox.control.waitForHeld(1, 10_000);
    const before = await ledgerSequence();
    const duplicate = agentCall(second.upstreams.payments ?? '', 'POST', '/v1/refunds', {
      form,
      headers: { 'idempotency-key': 'another-attempt' },
    });
    // Release only once the second process has resolved the duplicate to the executing original.
    await waitForLedgerEvent('retry_resolved', before);
    await sandbox.control.release(held?.holdId ?? '');
    const [a, b] = await Promise.all([original, duplicate]);
    expect(a.status).toBe(200);
    expect(b.status).toBe(200);
    expect(b.text).toBe(a.text);
    expect(b.headers.get('x-sideguard-duplicate')).toBe('true');
    expect(await sandboxWrites(sandbox)).toEqual({ 'payments.create_refund': 1 });
  });

  it('shares shadow state: a write shadowed through one process is read back through the other', async () => {
    const body = { properties: { hs_pipeline_stage: '3' } };
    const write = await agentCall(first.url, 'PATCH', '/crm-shadow/crm/v3/objects/tickets/5004', {
      json: body,
    });
    expect(write.status).toBe(202);
    const read = await agentCall(second.url, 'GET', '/crm-shadow/crm/v3/objects/tickets/5004');
    expect(read.headers.get('x-sideguard-decision')).toBe('shadow_read');
    expect(read.body).toEqual(body);
  });
  it('seals both processes’ decisions into the one tenant chain, which verifies', async () => {
    const start = await ledgerSequence();
    const reads = 12;
    await Promise.all(
      [first, second].flatMap((process) =>
        Array.from({ length: reads }, () =>
          agentCall(process.upstreams.payments ?? '', 'GET', '/v1/refunds/re_sg_001'),
        ),
      ),
    );
    const store = await openStore();
    try {
      let decided: readonly LedgerEvent[] = [];
      for (let attempt = 0; attempt < 250 && decided.length < 2 * reads; attempt++) {
        // Each process seals its decisions within about 100 ms (decision 070).
        await new Promise((resolve) => setTimeout(resolve, 20));
        decided = (await store.readLedger({ tenant: 'acme', afterSequence: start })).filter(
          (event) => event.type === 'gateway_decided' && event.data.decision === 'forward',
        );
      }
      expect(decided).toHaveLength(2 * reads);
      const whole = await store.readLedger({ tenant: 'acme' });
      expect(verifyLedgerChain(whole)).toMatchObject({ kind: 'valid', count: whole.length });
    } finally {
      await store.close();
    }
  });
});
