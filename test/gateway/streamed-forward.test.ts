/**
 * Forwarded reads are streamed from the upstream to the agent (decision 110): the agent gets the
 * upstream's exact bytes, status and returnable headers, large or small; an agent that goes away
 * mid-body neither crashes the gateway nor loses the decision's ledger event; an upstream that
 * fails mid-body never looks like a complete answer.
 */
import { randomBytes } from 'node:crypto';
import { createServer, get, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { GatewayConfig } from 'sideguard';
import type { GatewayRuntime, RunningGateway } from 'sideguard/gateway';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startConfigGateway } from './gateway-helpers.js';

const agentKey = 'sg_agent_stream_test_0123';
const blob = randomBytes(256 * 1024);
let upstream: Server;
let runtime: GatewayRuntime;
let gateway: RunningGateway;
let stopGateway: (() => Promise<void>) | undefined;
/** Responses of `/v1/stalled` that are still open, and whether each closed before finishing. */
const stalled: { response: ServerResponse; closedEarly: Promise<boolean> }[] = [];

function serveUpstream(path: string, response: ServerResponse): void {
  if (path === '/v1/blob') {
    // Chunked, in 16 KiB pieces: the gateway must pass every byte through unchanged.
    response.writeHead(200, {
      'content-type': 'application/octet-stream',
      'x-request-id': 'req_blob',
      'set-cookie': 'session=upstream-secret',
    });
    for (let offset = 0; offset < blob.length; offset += 16 * 1024)
      response.write(blob.subarray(offset, offset + 16 * 1024));
    response.end();
  } else if (path === '/v1/missing') {
    response.writeHead(404, { 'content-type': 'application/json', 'x-request-id': 'req_404' });
    response.end('{"error":{"code":"resource_missing"}}');
  } else if (path === '/v1/empty') {
    response.writeHead(204, { 'x-request-id': 'req_204' });
    response.end();
  } else if (path === '/v1/stalled') {
    response.writeHead(200, { 'content-type': 'text/plain' });
    response.write('first part, then nothing');
    stalled.push({
      response,
      closedEarly: new Promise((resolve) =>
        response.once('close', () => resolve(!response.writableFinished)),
      ),
    });
  } else if (path === '/v1/broken') {
    response.writeHead(200, { 'content-type': 'text/plain', 'content-length': '1000' });
    response.write('only a part of the promised thousand bytes');
    setTimeout(() => response.destroy(), 20);
  }
}

beforeAll(async () => {
  upstream = createServer((request, response) => serveUpstream(request.url ?? '', response));
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  const config: GatewayConfig = {
    actions: [],
    upstreams: {
      files: {
        kind: 'http',
        baseUrl: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`,
        mount: { port: 0 },
        passReads: true,
        credentials: { headers: { authorization: 'Bearer provider-secret' } },
      },
    },
    bindings: [],
    agents: [{ id: 'reader', principal: 'p', key: agentKey, roles: ['all'] }],
    roles: { all: { bindings: ['files:*'] } },
  };
  const started = await startConfigGateway(config, 'streamed-forward');
  ({ runtime, gateway } = started);
  stopGateway = started.close;
});
afterAll(async () => {
  for (const entry of stalled) entry.response.destroy();
  await stopGateway?.();
  await new Promise((resolve) => upstream?.close(resolve));
});

const url = (path: string) => `${gateway.upstreamUrls.files}${path}`;
const read = (path: string, method = 'GET') =>
  fetch(url(path), { method, headers: { authorization: `Bearer ${agentKey}` } });

async function forwardEvents(): Promise<number> {
  await runtime.decisions.flush();
  const events = await runtime.store.readLedger({ tenant: runtime.table.tenant });
  return events.filter(
    (event) => event.type === 'gateway_decided' && event.data.decision === 'forward',
  ).length;
}

describe('streamed forwarded reads', () => {
  it('returns a large chunked body byte for byte with the upstream’s status and returnable headers', async () => {
    const response = await read('/v1/blob');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/octet-stream');
    expect(response.headers.get('x-request-id')).toBe('req_blob');
    expect(response.headers.get('x-sideguard-decision')).toBe('forward');
    expect(response.headers.get('set-cookie')).toBeNull();
    expect(Buffer.from(await response.arrayBuffer()).equals(blob)).toBe(true);
  });

  it('passes the upstream’s own statuses through: a 404 with its body, a 204 and a HEAD without one', async () => {
    const missing = await read('/v1/missing');
    expect(missing.status).toBe(404);
    const body = '{"error":{"code":"resource_missing"}}';
    expect(missing.headers.get('content-length')).toBe(String(Buffer.byteLength(body)));
    expect(await missing.text()).toBe(body);
    const empty = await read('/v1/empty');
    expect(empty.status).toBe(204);
    expect(empty.headers.get('x-request-id')).toBe('req_204');
    const head = await read('/v1/missing', 'HEAD');
    expect(head.status).toBe(404);
    expect(await head.text()).toBe('');
  });

  it('drops the upstream request when the agent goes away mid-body, keeps the decision, and keeps serving', async () => {
    const before = await forwardEvents();
    await new Promise<void>((resolve, reject) => {
      const request = get(url('/v1/stalled'), { headers: { authorization: `Bearer ${agentKey}` } });
      request.once('error', () => resolve());
      request.once('response', (response) => {
        expect(response.statusCode).toBe(200);
        response.once('data', () => {
          request.destroy();
          resolve();
        });
      });
      setTimeout(() => reject(new Error('no first chunk')), 5_000);
    });
    await expect(stalled[0]?.closedEarly).resolves.toBe(true);
    expect(await forwardEvents()).toBe(before + 1);
    const next = await read('/v1/missing');
    expect(next.status).toBe(404);
    await next.arrayBuffer();
  });

  it('never lets an upstream that fails mid-body look like a complete answer', async () => {
    // The status may already be on its way (the body streams), but the body never completes.
    await expect(read('/v1/broken').then((response) => response.text())).rejects.toThrow();
    const next = await read('/v1/blob');
    expect(Buffer.from(await next.arrayBuffer()).equals(blob)).toBe(true);
  });
});
