/**
 * Every decision of the HTTP door is a `gateway_decided` event on the tenant's hash chain, beside
 * the guard's own events: each kind with its allow-listed attributes, a guarded call linked to its
 * proposal, hostile paths stored as templates, nothing private, and a chain that verifies. Real
 * sockets, the sandbox as the upstream, the fixture config.
 */
import { type LedgerEvent, verifyLedgerChain } from 'sideguard';
import type { ServedGateway } from 'sideguard/gateway';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSandbox } from '../sandbox/sandbox-helpers.js';
import { agentCall, agentKeys, serveFixture, type TestSandbox } from './gateway-helpers.js';

let sandbox: TestSandbox;
let gateway: ServedGateway;
let payments: string;
let crm: string;

/** Values the agent sent or the gateway holds that must never reach the ledger. */
const PRIVATE = [
  agentKeys.support,
  agentKeys.reader,
  'sk_test_sideguard_agent',
  'pat-sandbox-sideguard-agent',
  'agent-attempt-secret-7',
  're_sg_001',
  'cus_sg_001',
];

beforeAll(async () => {
  sandbox = await startTestSandbox();
  gateway = await serveFixture(sandbox);
  payments = gateway.upstreamUrls.payments ?? '';
  crm = gateway.upstreamUrls.crm ?? '';
  gateway.runtime.replay.add({
    upstream: 'payments-replay',
    method: 'GET',
    resource: '/v1/refunds/re_sg_replayed?',
    response: {
      status: 200,
      headers: [['content-type', 'application/json']],
      body: new TextEncoder().encode('{"id":"re_sg_replayed","object":"refund"}'),
    },
  });
});
afterAll(async () => {
  await gateway?.close();
  await sandbox?.stop();
});

const ledger = async (): Promise<readonly LedgerEvent[]> => {
  await gateway.runtime.decisions.flush();
  return gateway.runtime.store.readLedger({ tenant: 'acme' });
};
const decided = (events: readonly LedgerEvent[]) =>
  events.filter((event) => event.type === 'gateway_decided');

describe('decisions in the ledger (HTTP door)', () => {
  it('seals every decision kind with its door, kind, subject, agent and principal', async () => {
    const calls: [string, string, string, Parameters<typeof agentCall>[3]?][] = [
      [payments, 'GET', '/v1/refunds/re_sg_001'],
      [
        payments,
        'POST',
        '/v1/refunds',
        {
          form: { charge: 'ch_sg_002', amount: '300' },
          headers: { 'idempotency-key': 'agent-attempt-secret-7' },
        },
      ],
      [gateway.url, 'GET', '/payments-replay/v1/refunds/re_sg_replayed'],
      [gateway.url, 'GET', '/payments-replay/v1/refunds/re_sg_unrecorded'],
      [
        gateway.url,
        'PATCH',
        '/crm-shadow/crm/v3/objects/tickets/7001',
        {
          json: { properties: { hs_pipeline_stage: '3' } },
        },
      ],
      [gateway.url, 'GET', '/crm-shadow/crm/v3/objects/tickets/7001'],
      [payments, 'POST', '/v1/charges/ch_sg_001/capture', { form: {} }],
      [payments, 'GET', '/v1/customers/cus_sg_001'],
      [crm, 'GET', '/crm/v3/objects/contacts/1'],
      [payments, 'GET', '/v1/refunds/re_sg_001', { key: null }],
    ];
    const statuses: number[] = [];
    for (const [base, method, path, options] of calls) {
      statuses.push((await agentCall(base, method, path, options)).status);
    }
    expect(statuses).toEqual([200, 200, 200, 404, 202, 200, 403, 404, 403, 401]);
    const events = decided(await ledger());
    expect(
      events.map((event) => [event.data.decision, event.data.reason, event.data.subject]),
    ).toEqual([
      ['forward', 'declared_read', 'GET /v1/refunds/:id'],
      ['guarded', 'bound_write', 'POST /v1/refunds'],
      ['replay', 'replay_case', 'GET /v1/refunds/:id'],
      ['miss', 'replay_case_missing', 'GET /v1/refunds/:id'],
      ['shadow_write', 'shadow_mode_write', 'PATCH /crm/v3/objects/tickets/:id'],
      ['shadow_read', 'shadow_state', 'GET /crm/v3/objects/tickets/:id'],
      ['deny', 'write_not_bound', 'POST <unmatched>'],
      ['miss', 'route_not_declared', 'GET <unmatched>'],
      ['deny', 'deny_rule', 'GET <unmatched>'],
      ['deny', 'agent_key_missing', 'GET /v1/refunds/:id'],
    ]);
    for (const event of events.slice(0, -1)) {
      expect(event).toMatchObject({ proposal: null, status: null, revision: null });
      expect(event.data).toMatchObject({
        door: 'http',
        agent: 'support-bot',
        principal: 'support-team',
      });
    }
    expect(events[0]?.data).toMatchObject({
      upstream: 'payments',
      binding: 'refund-read',
      status: 200,
    });
    expect(events.at(-1)?.data).toMatchObject({ agent: null, principal: null, status: 401 });
  });

  it('links a guarded decision to the guard’s own events by proposal, without repeating them', async () => {
    const events = await ledger();
    const guarded = decided(events).find((event) => event.data.decision === 'guarded');
    expect(guarded?.data).toMatchObject({
      binding: 'refund',
      outcome: 'verified',
      code: 'completed',
      requestDigest: expect.any(String),
    });
    const proposal = String(guarded?.data.proposal);
    expect(proposal).toMatch(/^prop_/);
    const own = events.filter((event) => event.proposal === proposal).map((event) => event.type);
    expect(own).toContain('commit_started');
    expect(own).toContain('committed');
    expect(own).not.toContain('gateway_decided');
    // The decision follows the guard's events it reports on.
    const last = events.filter((event) => event.proposal === proposal).at(-1);
    expect(guarded?.sequence).toBeGreaterThan(last?.sequence ?? Number.POSITIVE_INFINITY);
  });

  it('stores a hostile path as its template or as unmatched, never raw', async () => {
    const hostile = [
      '/v1/refunds/%3Cscript%3Ealert(1)%3C%7Cscript%3E',
      "/v1/'%3B%20DROP%20TABLE%20ledger%3B--",
      `/v1/${'a'.repeat(3000)}`,
      '/v1/%F0%9F%92%A5%E2%80%AE',
    ];
    const before = decided(await ledger()).length;
    for (const path of hostile) {
      const answer = await agentCall(payments, 'GET', path);
      expect(answer.status, path.slice(0, 40)).toBe(404);
    }
    const events = decided(await ledger()).slice(before);
    expect(events.map((event) => event.data.subject)).toEqual([
      'GET /v1/refunds/:id',
      'GET <unmatched>',
      'GET <unmatched>',
      'GET <unmatched>',
    ]);
    const text = JSON.stringify(events);
    for (const fragment of ['script', 'DROP', 'aaaa', '\u202e', '💥']) {
      expect(text).not.toContain(fragment);
    }
    // A control character in the path is refused before any decision: nothing to record.
    const control = await agentCall(payments, 'GET', '/v1/refunds/%00%1B%5B31m');
    expect(control.status).toBe(400);
    expect(decided(await ledger()).length).toBe(before + hostile.length);
  });

  it('keeps the chain verifiable and free of keys, credentials and request values', async () => {
    const events = await ledger();
    expect(verifyLedgerChain(events)).toMatchObject({ kind: 'valid', count: events.length });
    const text = JSON.stringify(decided(events));
    for (const secret of PRIVATE) expect(text).not.toContain(secret);
    for (const event of decided(events)) {
      expect(Object.keys(event.data).sort()).toEqual(
        expect.arrayContaining(['door', 'decision', 'reason', 'subject']),
      );
    }
  });
});
