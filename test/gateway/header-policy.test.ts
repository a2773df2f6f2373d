/**
 * Credentials never cross the gateway: the upstream sees the injected credential and none of the
 * agent's (authorization, cookies, API-key headers), and the agent sees none of the upstream's
 * cookies or token headers. A real upstream on a socket records what it received.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createDevelopmentKeyRing, type GatewayConfig } from 'sideguard';
import {
  compileGatewayConfig,
  type GatewayRuntime,
  openGatewayRuntime,
  type RunningGateway,
  startGatewayServer,
} from 'sideguard/gateway';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

let upstream: Server;
let runtime: GatewayRuntime;
let gateway: RunningGateway;
const received: IncomingHttpHeaders[] = [];
const urls: string[] = [];

beforeAll(async () => {
  upstream = createServer((request, response) => {
    received.push(request.headers);
    urls.push(request.url ?? '');
    response.setHeader('content-type', 'application/json');
    response.setHeader('set-cookie', 'session=upstream-secret; HttpOnly');
    response.setHeader('x-upstream-token', 'tok_secret');
    response.setHeader('x-request-id', 'req_1');
    response.end('{"ok":true}');
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  const config: GatewayConfig = {
    actions: [],
    upstreams: {
      api: {
        kind: 'http',
        baseUrl: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/base`,
        mount: { prefix: '/api' },
        passReads: true,
        credentials: { headers: { Authorization: 'Bearer provider-secret' } },
      },
    },
    bindings: [],
    agents: [{ id: 'bot', principal: 'p', key: 'sg_agent_header_test_0123', roles: ['all'] }],
    roles: { all: { bindings: ['api:*'] } },
  };
  const compiled = compileGatewayConfig(config);
  if (compiled.kind !== 'compiled') throw new Error(JSON.stringify(compiled.problems));
  runtime = await openGatewayRuntime(
    { file: '/virtual/sideguard.config.ts', directory: '/virtual', config, table: compiled.table },
    { keyRing: createDevelopmentKeyRing('header-policy'), store: { kind: 'memory' } },
  );
  gateway = await startGatewayServer(runtime, { port: 0 });
});
afterAll(async () => {
  await gateway?.close();
  await runtime?.close();
  await new Promise((resolve) => upstream?.close(resolve));
});

describe('the header policy', () => {
  it('swaps the agent’s credentials for the provider’s and keeps the upstream’s secrets from the agent', async () => {
    const response = await fetch(`${gateway.url}/api/things?x=1`, {
      headers: {
        authorization: 'Bearer sg_agent_header_test_0123',
        cookie: 'agent-session=1',
        'x-api-key': 'agent-side-key',
        'accept-language': 'en',
      },
    });
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('{"ok":true}');
    expect(response.headers.get('set-cookie')).toBeNull();
    expect(response.headers.get('x-upstream-token')).toBeNull();
    expect(response.headers.get('x-request-id')).toBe('req_1');
    const seen = received.at(-1) ?? {};
    expect(seen.authorization).toBe('Bearer provider-secret');
    expect(seen.cookie).toBeUndefined();
    expect(seen['x-api-key']).toBeUndefined();
    expect(seen['accept-language']).toBe('en');
  });

  it('keeps the upstream base path and the query as sent', async () => {
    await fetch(`${gateway.url}/api/things/a%20b?x=1&x=2`, {
      headers: { authorization: 'Bearer sg_agent_header_test_0123' },
    });
    expect(urls.at(-1)).toBe('/base/things/a%20b?x=1&x=2');
  });
});
