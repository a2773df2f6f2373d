/**
 * Fuzzes the data plane with fast-check (a few thousand requests, no fault plan): no 5xx, no
 * crash, and a rejected request never changes provider state. A failure prints its seed.
 */
import { Agent, request as httpRequest } from 'node:http';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, keys, startTestSandbox } from './sandbox-helpers.js';

type Sandbox = Awaited<ReturnType<typeof startTestSandbox>>;

interface FuzzRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: Record<string, string>;
  readonly body: string;
  readonly oversized: boolean;
}

const runs = 2_500;
const agent = new Agent({ keepAlive: true, maxSockets: 1 });

const idSegment = fc.oneof(
  fc.constantFrom(
    'ch_sg_001',
    're_sg_001',
    'cus_sg_002',
    'pi_sg_003',
    '5001',
    '10002',
    'SUP-3',
    'ord_1004',
    '..',
    '.',
    '%2e%2e',
    '..%2F..%2Fstate.json',
    '__proto__',
    'constructor',
    '%00',
    '%ZZ',
    '',
  ),
  fc.string({ maxLength: 20 }).map((text) => encodeURIComponent(text)),
);

const path = fc.oneof(
  fc
    .tuple(
      fc.constantFrom(
        '/v1/refunds',
        '/v1/refunds/',
        '/v1/charges/',
        '/v1/customers/',
        '/v1/payment_intents/',
        '/crm/v3/objects/tickets/',
        '/rest/api/3/issue/',
        '/commerce/orders/',
        '/commerce/orders',
      ),
      idSegment,
      fc.constantFrom(
        '',
        '/transitions',
        '/x',
        '?limit=3',
        '?charge=ch_sg_001',
        '?limit=abc',
        '?properties=subject',
        '?%zz=1',
        '?expand[]=charge',
      ),
    )
    .map(([prefix, id, suffix]) =>
      prefix.endsWith('/') ? `${prefix}${id}${suffix}` : `${prefix}${suffix}`,
    ),
  fc.constantFrom(
    '/',
    '/health',
    '/export',
    '/reset',
    '/faults',
    '/held',
    '/v1',
    '/crm',
    '/commerce',
    '//v1/refunds',
    '/v1/refunds/../../x',
  ),
  fc.string({ maxLength: 30 }).map((text) => `/${encodeURIComponent(text)}`),
);

const authorization = fc.oneof(
  fc.constant<string | undefined>(undefined),
  fc.constantFrom(...Object.values(keys)).map((key) => `Bearer ${key}`),
  fc.constantFrom(
    'Bearer',
    'Bearer ',
    'Basic !!!',
    'Basic Og==',
    `Basic ${Buffer.from(`me:${keys.issuesWriter}`).toString('base64')}`,
    'Token abc',
  ),
  fc.string({ maxLength: 20 }).map((text) => `Bearer ${encodeURIComponent(text)}`),
);

const validRefund = fc
  .record({
    charge: fc.constantFrom('ch_sg_001', 'ch_sg_002', 'ch_sg_003', 'ch_missing'),
    amount: fc.integer({ min: -5, max: 500 }),
  })
  .map(({ charge, amount }) => `charge=${charge}&amount=${amount}&metadata[sideguard_effect]=fuzz`);

const body = fc.oneof(
  fc.constant(''),
  validRefund,
  fc.string({ maxLength: 200 }),
  fc.constantFrom(
    'charge=ch_sg_001&amount=1&amount[x]=2',
    'metadata=1&metadata[a]=b',
    '%',
    'a[b][c]=1',
    '{"properties":{"subject":"hi"}}',
    '{"fields":{"summary":"x"}}',
    '{"transition":{"id":"31"}}',
    'charge=ch_sg_002&amount=1&metadata[__proto__]=x&metadata[sideguard_effect]=constructor',
    '{"fields":{"__proto__":{"x":1}},"transition":{"id":"21"}}',
    'null',
    '[]',
    '{"properties":null}',
  ),
  fc.json({ maxDepth: 3 }),
);

const fuzzRequest = fc
  .record({
    method: fc.constantFrom('GET', 'POST', 'PATCH', 'PUT', 'DELETE', 'HEAD', 'OPTIONS'),
    path,
    authorization,
    contentType: fc.constantFrom(
      undefined,
      'application/x-www-form-urlencoded',
      'application/json',
      'text/plain',
      'multipart/form-data; boundary=x',
      'application/json; charset=utf-8',
    ),
    reserved: fc.integer({ min: 0, max: 15 }).map((roll) => roll === 0),
    idempotencyKey: fc.option(fc.constantFrom('fuzz-1', 'fuzz-2', 'k'.repeat(300)), {
      nil: undefined,
    }),
    body,
    oversized: fc.integer({ min: 0, max: 99 }).map((roll) => roll === 0),
  })
  .map((input): FuzzRequest => {
    const headers: Record<string, string> = {};
    if (input.authorization !== undefined) headers.Authorization = input.authorization;
    if (input.contentType !== undefined) headers['Content-Type'] = input.contentType;
    if (input.reserved) headers['X-Sideguard-Test'] = '1';
    if (input.idempotencyKey !== undefined) headers['Idempotency-Key'] = input.idempotencyKey;
    if (input.oversized) {
      return {
        method: 'POST',
        path: '/v1/refunds',
        headers,
        body: `charge=ch_sg_001&metadata[n]=${'x'.repeat(70_000)}`,
        oversized: true,
      };
    }
    return {
      method: input.method,
      path: input.path,
      headers,
      body: input.method === 'GET' || input.method === 'HEAD' ? '' : input.body,
      oversized: false,
    };
  });

/** Mostly well-formed requests (right route, key and content type), so writes happen too. */
const wellFormedRequest = fc.oneof(
  fc
    .record({
      refund: validRefund,
      idempotencyKey: fc.option(fc.constantFrom('wf-1', 'wf-2'), { nil: undefined }),
    })
    .map(
      ({ refund, idempotencyKey }): FuzzRequest => ({
        method: 'POST',
        path: '/v1/refunds',
        headers: {
          Authorization: `Bearer ${keys.paymentsWriter}`,
          'Content-Type': 'application/x-www-form-urlencoded',
          ...(idempotencyKey === undefined ? {} : { 'Idempotency-Key': idempotencyKey }),
        },
        body: refund,
        oversized: false,
      }),
    ),
  fc
    .constantFrom(
      '/v1/charges/ch_sg_001',
      '/v1/refunds?limit=2',
      '/commerce/orders/ord_1002',
      '/crm/v3/objects/tickets/5001',
      '/rest/api/3/issue/SUP-1',
    )
    .map((target): FuzzRequest => {
      const key = target.startsWith('/v1')
        ? keys.paymentsReader
        : target.startsWith('/commerce')
          ? keys.orders
          : target.startsWith('/crm')
            ? keys.crmReader
            : keys.issuesReader;
      return {
        method: 'GET',
        path: target,
        headers: { Authorization: `Bearer ${key}` },
        body: '',
        oversized: false,
      };
    }),
  fc
    .record({
      stage: fc.constantFrom('1', '2', '3', '4', '7'),
      effect: fc.oneof(
        fc.string({ maxLength: 12 }),
        fc.constantFrom('__proto__', 'constructor', 'toString'),
      ),
    })
    .map(
      ({ stage, effect }): FuzzRequest => ({
        method: 'PATCH',
        path: '/crm/v3/objects/tickets/5002',
        headers: { Authorization: `Bearer ${keys.crmWriter}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({
          properties: { hs_pipeline_stage: stage, sideguard_effect: effect },
        }),
        oversized: false,
      }),
    ),
  fc.constantFrom('11', '21', '31', '99').map(
    (transition): FuzzRequest => ({
      method: 'POST',
      path: '/rest/api/3/issue/10003/transitions',
      headers: { Authorization: `Bearer ${keys.issuesWriter}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ transition: { id: transition } }),
      oversized: false,
    }),
  ),
);

type Outcome =
  | { kind: 'response'; status: number }
  | { kind: 'connection_error'; code: string | undefined };

function send(baseUrl: string, request: FuzzRequest): Promise<Outcome> {
  const url = new URL(baseUrl);
  return new Promise((resolve) => {
    const outgoing = httpRequest(
      {
        hostname: url.hostname,
        port: url.port,
        path: request.path,
        method: request.method,
        headers: request.headers,
        agent,
      },
      (incoming) => {
        incoming.resume();
        incoming.on('end', () => resolve({ kind: 'response', status: incoming.statusCode ?? 0 }));
        incoming.on('error', (error: NodeJS.ErrnoException) =>
          resolve({ kind: 'connection_error', code: error.code }),
        );
      },
    );
    outgoing.on('error', (error: NodeJS.ErrnoException) =>
      resolve({ kind: 'connection_error', code: error.code }),
    );
    outgoing.end(request.body.length > 0 ? request.body : undefined);
  });
}

describe('data-plane fuzzing', () => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await startTestSandbox({ durability: 'os' });
  });
  afterAll(async () => {
    agent.destroy();
    await sandbox.stop();
  });

  it(`survives ${runs} random requests: no unplanned 5xx, no crash, rejected requests change nothing`, async () => {
    let digest = (await sandbox.control.digest()).digest;
    const seen = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          { arbitrary: fuzzRequest, weight: 3 },
          { arbitrary: wellFormedRequest, weight: 1 },
        ),
        async (request) => {
          const outcome = await send(sandbox.dataUrl, request);
          const after = (await sandbox.control.digest()).digest;
          const previous = digest;
          digest = after;
          if (outcome.kind === 'connection_error') {
            // Only an oversized body may lose its connection (the server closes after its 413).
            expect(
              request.oversized,
              `connection error ${outcome.code} for ${request.method} ${request.path}`,
            ).toBe(true);
            expect(after).toBe(previous);
            return;
          }
          seen.set(outcome.status, (seen.get(outcome.status) ?? 0) + 1);
          expect(outcome.status, `${request.method} ${request.path}`).toBeLessThan(500);
          if (outcome.status >= 400)
            expect(
              after,
              `${request.method} ${request.path} → ${outcome.status} changed state`,
            ).toBe(previous);
        },
      ),
      { numRuns: runs, interruptAfterTimeLimit: 40_000 },
    );
    const statuses = [...seen.keys()].sort();
    expect(statuses).toEqual(expect.arrayContaining([200, 204, 400, 401, 403, 404, 413]));
    expect((await sandbox.control.observations()).writes.total).toBeGreaterThan(10);
    const health = await call(sandbox.dataUrl, 'GET', '/v1/charges/ch_sg_001', {
      key: keys.paymentsWriter,
    });
    expect(health.status).toBe(200);
    const observations = await sandbox.control.observations();
    expect(
      observations.requests.filter((entry) => entry.status !== null && entry.status >= 500),
    ).toEqual([]);
  }, 60_000);
});
