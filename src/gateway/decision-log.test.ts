/**
 * Every gateway decision is one `gateway_decided` ledger event and one OpenTelemetry span carrying
 * the same allow-listed attributes — never a body, a raw path, an agent key or a provider credential (I8). Runs the
 * HTTP door's handler in process (no sockets) with a real OpenTelemetry SDK installed.
 */
import { trace } from '@opentelemetry/api';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testAgentKeys, testGatewayConfig } from '../../test/support/gateway-config.js';
import { createDevelopmentKeyRing } from '../core/key-ring.js';
import { compileGatewayConfig } from './config-compile.js';
import { type GatewayRuntime, openGatewayRuntime } from './gateway-runtime.js';
import { handleHttpCall } from './http-door.js';

const exporter = new InMemorySpanExporter();
let runtime: GatewayRuntime;

beforeAll(async () => {
  trace.setGlobalTracerProvider(
    new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }),
  );
  // Without the replay upstream: its cases file is not needed here.
  const { archive: _archive, ...upstreams } = testGatewayConfig().upstreams;
  const full = testGatewayConfig();
  const config = {
    ...full,
    upstreams,
    bindings: full.bindings.filter((binding) => binding.upstream !== 'archive'),
    roles: { ...full.roles, support: { bindings: ['payments:*', 'crm:*', 'memory:*'] } },
  };
  const compiled = compileGatewayConfig(config);
  if (compiled.kind !== 'compiled') throw new Error(JSON.stringify(compiled.problems));
  runtime = await openGatewayRuntime(
    { file: '/virtual/sideguard.config.ts', directory: '/virtual', config, table: compiled.table },
    { keyRing: createDevelopmentKeyRing('decision-log-test'), store: { kind: 'memory' } },
  );
});
afterAll(async () => {
  await runtime?.close();
  trace.disable();
});

const call = (upstream: string, method: string, target: string, init: RequestInit = {}) =>
  handleHttpCall(runtime, {
    upstream,
    target,
    request: new Request(`http://gateway.test${target}`, { method, ...init }),
  });

describe('decision events and spans', () => {
  it('records a refusal and a shadow write with allow-listed attributes only', async () => {
    exporter.reset();
    const denied = await call('payments', 'POST', '/v1/charges/ch_secret_1/capture', {
      headers: { authorization: `Bearer ${testAgentKeys.support}` },
    });
    expect(denied.status).toBe(403);
    const body = JSON.stringify({ ticketId: 'ignored', private: 'customer note: Jane Doe' });
    const shadowed = await call('crm', 'PATCH', '/crm/v3/objects/tickets/5001', {
      headers: {
        authorization: `Bearer ${testAgentKeys.support}`,
        'content-type': 'application/json',
      },
      body,
    });
    expect(shadowed.status).toBe(202);
    const spans = exporter.getFinishedSpans();
    expect(spans.map((span) => span.name)).toEqual([
      'sideguard.gateway.http',
      'sideguard.gateway.http',
    ]);
    expect(spans[0]?.attributes).toMatchObject({
      'sideguard.decision': 'deny',
      'sideguard.reason': 'write_not_bound',
      'sideguard.subject': 'POST <unmatched>',
      'sideguard.agent': 'support-bot',
      'sideguard.principal': 'support-team',
      'sideguard.tenant': 'acme',
      'http.response.status_code': 403,
    });
    expect(spans[1]?.attributes).toMatchObject({
      'sideguard.decision': 'shadow_write',
      'sideguard.binding': 'ticket-update',
      'sideguard.subject': 'PATCH /crm/v3/objects/tickets/:id',
      'sideguard.request_digest': expect.any(String),
    });
    await runtime.decisions.flush();
    const events = (await runtime.store.readLedger({ tenant: 'acme' })).filter(
      (event) => event.type === 'gateway_decided',
    );
    expect(events.map((event) => event.data.decision)).toEqual(['deny', 'shadow_write']);
    const everything = JSON.stringify([...spans.map((span) => span.attributes), ...events]);
    for (const secret of ['ch_secret_1', 'Jane Doe', testAgentKeys.support, 'sk_test_provider']) {
      expect(everything).not.toContain(secret);
    }
  });

  it('records an unauthenticated call under the default tenant with no agent', async () => {
    exporter.reset();
    const missing = await call('payments', 'GET', '/v1/refunds/re_1');
    expect(missing.status).toBe(401);
    expect(exporter.getFinishedSpans()[0]?.attributes).toMatchObject({
      'sideguard.decision': 'deny',
      'sideguard.reason': 'agent_key_missing',
      'sideguard.tenant': 'acme',
    });
    expect(exporter.getFinishedSpans()[0]?.attributes['sideguard.agent']).toBeUndefined();
  });
});
