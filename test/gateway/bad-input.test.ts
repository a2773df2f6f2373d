/**
 * An attacker's requests against the HTTP door: odd methods, unsafe paths, broken encodings,
 * garbage and hostile bodies, bogus credentials, oversized chunked bodies. None gets a 5xx (an
 * agent's mistake is a 4xx with a code), none reaches the upstream as a write, and the gateway
 * keeps answering.
 */
import { request as httpRequest } from 'node:http';
import type { ServedGateway } from 'sideguard/gateway';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { rawRequest, startTestSandbox } from '../sandbox/sandbox-helpers.js';
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

beforeAll(async () => {
  sandbox = await startTestSandbox();
  gateway = await serveFixture(sandbox);
  payments = gateway.upstreamUrls.payments ?? '';
});
beforeEach(async () => {
  await sandbox.control.reset();
});
afterAll(async () => {
  await gateway?.close();
  await sandbox?.stop();
});

const auth = { authorization: `Bearer ${agentKeys.support}` };

describe('hostile requests', () => {
  it('answers every malformed request with a 4xx and a code, never a 5xx, and writes nothing', async () => {
    const cases: {
      method: string;
      path: string;
      headers?: Record<string, string>;
      body?: string;
    }[] = [
      { method: 'PROPFIND', path: '/v1/refunds', headers: auth },
      { method: 'DELETE', path: '/v1/refunds/re_sg_001', headers: auth },
      { method: 'GET', path: '/v1/refunds/%', headers: auth },
      { method: 'GET', path: '/v1/refunds/%2e%2e/%2e%2e/customers', headers: auth },
      { method: 'GET', path: '/v1//refunds', headers: auth },
      { method: 'GET', path: `/v1/refunds/${'a'.repeat(4_000)}`, headers: auth },
      { method: 'GET', path: '/v1/refunds?limit=%zz', headers: auth },
      {
        method: 'GET',
        path: '/v1/refunds/re_sg_001',
        headers: { authorization: 'Basic !!!notbase64' },
      },
      { method: 'GET', path: '/v1/refunds/re_sg_001', headers: { authorization: 'Bearer' } },
      {
        method: 'GET',
        path: '/v1/refunds/re_sg_001',
        headers: { authorization: `Bearer ${'x'.repeat(8_000)}` },
      },
      {
        method: 'POST',
        path: '/v1/refunds',
        headers: { ...auth, 'content-type': 'application/json' },
        body: '{"charge": "ch_sg_001", "amount": ',
      },
      {
        method: 'POST',
        path: '/v1/refunds',
        headers: { ...auth, 'content-type': 'application/json' },
        body: `${'['.repeat(5_000)}${']'.repeat(5_000)}`,
      },
      {
        method: 'POST',
        path: '/v1/refunds',
        headers: { ...auth, 'content-type': 'application/x-www-form-urlencoded' },
        body: '__proto__[charge]=ch_sg_001&__proto__[amount]=100',
      },
      {
        method: 'POST',
        path: '/v1/refunds',
        headers: { ...auth, 'content-type': 'application/x-www-form-urlencoded' },
        body: 'charge=%E0%A4%A&amount=1',
      },
      {
        method: 'POST',
        path: '/v1/refunds',
        headers: { ...auth, 'content-type': 'application/x-www-form-urlencoded' },
        body: 'a[b][c]=1',
      },
      {
        method: 'POST',
        path: '/v1/refunds',
        headers: { ...auth, 'content-type': 'application/octet-stream' },
        body: '\u0000\u0001\u0002',
      },
      {
        method: 'POST',
        path: '/v1/refunds',
        headers: { ...auth, 'content-type': 'application/json' },
        body: '{"charge":"ch_sg_001","amount":100}',
      },
      {
        method: 'POST',
        path: '/v1/refunds',
        headers: { ...auth, 'content-type': 'application/json' },
        body: '{"charge":"ch_sg_001","amount":1e400}',
      },
    ];
    for (const entry of cases) {
      const outcome = await rawRequest(payments, entry.method, entry.path, {
        headers: {
          ...entry.headers,
          ...(entry.body === undefined
            ? {}
            : { 'content-length': String(Buffer.byteLength(entry.body)) }),
        },
        ...(entry.body === undefined ? {} : { body: entry.body }),
      });
      const label = `${entry.method} ${entry.path.slice(0, 60)} ${entry.body?.slice(0, 60) ?? ''}`;
      expect(outcome.kind, label).toBe('response');
      if (outcome.kind !== 'response') continue;
      expect(outcome.status, label).toBeGreaterThanOrEqual(400);
      expect(outcome.status, label).toBeLessThan(500);
    }
    expect(await sandboxWrites(sandbox)).toEqual({});
    const healthy = await agentCall(payments, 'GET', '/v1/refunds/re_sg_001');
    expect(healthy.status).toBe(200);
  });

  it('refuses an oversized chunked body (no Content-Length) with 413 after reading no more than the limit', async () => {
    const status = await new Promise<number>((resolve, reject) => {
      const url = new URL(payments);
      const outgoing = httpRequest(
        {
          hostname: url.hostname,
          port: url.port,
          path: '/v1/refunds',
          method: 'POST',
          headers: {
            ...auth,
            'content-type': 'application/x-www-form-urlencoded',
            'transfer-encoding': 'chunked',
          },
        },
        (incoming) => {
          incoming.resume();
          resolve(incoming.statusCode ?? 0);
        },
      );
      outgoing.on('error', reject);
      outgoing.write(`charge=ch_sg_001&amount=1&reason=${'x'.repeat(6_000)}`);
      outgoing.write('y'.repeat(6_000));
      outgoing.end();
    });
    expect(status).toBe(413);
    expect(await sandboxWrites(sandbox)).toEqual({});
  });
});
