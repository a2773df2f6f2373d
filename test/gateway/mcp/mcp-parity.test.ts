/**
 * Parity of the two front doors on one running gateway (`serveGateway` with `/mcp` mounted):
 * the same refund through the HTTP door and through the MCP door is one semantic effect — one
 * write, one proposal, one executor (the HTTP binding's) — whichever door comes first, and the
 * same refusal has the same code on both doors. Both doors write to one decision log.
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Client } from '@modelcontextprotocol/client';
import { createDevelopmentKeyRing } from 'sideguard';
import { type ServedGateway, serveGateway } from 'sideguard/gateway';
import { mcpServeExtension } from 'sideguard/mcp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSandbox } from '../../sandbox/sandbox-helpers.js';
import { projectRoot } from '../../support/cli.js';
import { agentCall, agentKeys, gatewayDecisions, sandboxWrites } from '../gateway-helpers.js';
import { connectModern, structured } from './mcp-test-kit.js';

const CONFIG = fileURLToPath(new URL('./fixtures/parity.config.ts', import.meta.url));
const REFUND_TOOL = 'support.refund.v1';

describe('one gateway, two doors', () => {
  let sandbox: Awaited<ReturnType<typeof startTestSandbox>>;
  let served: ServedGateway;
  let mcp: Client;
  let payments: string;

  const refundWrites = async () => (await sandboxWrites(sandbox))['payments.create_refund'] ?? 0;
  const post = (form: Record<string, string>, key?: string | null) =>
    agentCall(payments, 'POST', '/v1/refunds', { form, ...(key === undefined ? {} : { key }) });

  beforeAll(async () => {
    sandbox = await startTestSandbox();
    const saved = { ...process.env };
    Object.assign(process.env, {
      SG_TEST_SANDBOX_URL: sandbox.dataUrl,
      SG_TEST_REPLAY_CASES: join(projectRoot, 'test', 'gateway', 'fixtures', 'replay-cases.json'),
    });
    try {
      served = await serveGateway({
        configFile: CONFIG,
        port: 0,
        upstreamPorts: { payments: 0 },
        keyRing: createDevelopmentKeyRing('gateway-tests'),
        store: { kind: 'memory' },
        extensions: [mcpServeExtension({ configFile: CONFIG, upstreamStderr: 'ignore' })],
      });
    } finally {
      for (const name of Object.keys(process.env)) if (!(name in saved)) delete process.env[name];
      Object.assign(process.env, saved);
    }
    payments = served.upstreamUrls.payments ?? '';
    mcp = await connectModern(
      new URL(`${served.url.replace('127.0.0.1', 'localhost')}/mcp`),
      agentKeys.support,
    );
  });

  afterAll(async () => {
    await mcp?.close();
    await served?.close();
    await sandbox?.stop();
  });

  it('serves the declared action at /mcp, executed through its HTTP binding', async () => {
    const tools = (await mcp.listTools()).tools.map((tool) => tool.name);
    expect(tools).toEqual([REFUND_TOOL, 'sideguard_proposal']);
  });

  it('makes an HTTP refund and the same refund over MCP one effect: one write, one proposal', async () => {
    const before = await refundWrites();
    const http = await post({ charge: 'ch_sg_001', amount: '1500' });
    expect(http.status).toBe(200);
    const viaMcp = await mcp.callTool({
      name: REFUND_TOOL,
      arguments: { charge: 'ch_sg_001', amount: '1500', requestId: 'mcp-retry' },
    });
    expect(viaMcp.isError).toBeFalsy();
    expect(structured(viaMcp)).toMatchObject({
      code: 'completed',
      duplicate: true,
      proposal: http.headers.get('x-sideguard-proposal'),
      receipt: { id: http.body.id, provider: 'payments' },
    });
    expect(await refundWrites()).toBe(before + 1);
  });

  it('makes an MCP refund and the same refund over HTTP one effect, and HTTP replays the original response', async () => {
    const before = await refundWrites();
    const viaMcp = await mcp.callTool({
      name: REFUND_TOOL,
      arguments: { charge: 'ch_sg_002', amount: '1200' },
    });
    // The binding's executor ran (the action's own execute would refuse: only_through_the_gateway).
    expect(structured(viaMcp)).toMatchObject({ code: 'completed', duplicate: false });
    const refundId = structured(viaMcp).receipt.id as string;
    expect(refundId).toMatch(/^re_/);
    const http = await post({ charge: 'ch_sg_002', amount: '1200' });
    expect(http.status).toBe(200);
    expect(http.headers.get('x-sideguard-duplicate')).toBe('true');
    expect(http.headers.get('x-sideguard-proposal')).toBe(structured(viaMcp).proposal);
    expect(http.body).toMatchObject({ id: refundId, object: 'refund', amount: 1200 });
    expect(await refundWrites()).toBe(before + 1);
  });

  it('refuses the same call with the same code on both doors', async () => {
    const cases: { form: Record<string, string>; key?: string | null; code: string }[] = [
      { form: { charge: 'ch_sg_003', amount: '200000' }, code: 'policy_blocked' },
      { form: { charge: 'ch_sg_003', amount: 'lots' }, code: 'contract_violation' },
      { form: { charge: 'ch_sg_003', amount: '9000' }, code: 'approval_required' },
      {
        form: { charge: 'ch_sg_003', amount: '100' },
        key: agentKeys.reader,
        code: 'binding_not_permitted',
      },
    ];
    for (const entry of cases) {
      const http = await post(entry.form, entry.key);
      expect(http.body.code, `HTTP ${JSON.stringify(entry)}`).toBe(entry.code);
      const client =
        entry.key === undefined
          ? mcp
          : await connectModern(
              new URL(`${served.url.replace('127.0.0.1', 'localhost')}/mcp`),
              entry.key ?? '',
            );
      try {
        const viaMcp = await client.callTool({ name: REFUND_TOOL, arguments: entry.form });
        expect(structured(viaMcp).code, `MCP ${JSON.stringify(entry)}`).toBe(entry.code);
      } finally {
        if (client !== mcp) await client.close();
      }
    }
    const missing = await post({ charge: 'ch_sg_003', amount: '100' }, null);
    const mcpMissing = await fetch(`${served.url}/mcp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: '{}',
    });
    expect(missing.status).toBe(401);
    expect(mcpMissing.status).toBe(401);
    expect(missing.body.code).toBe('agent_key_missing');
    expect(((await mcpMissing.json()) as { code?: string }).code).toBe('agent_key_missing');
  });

  it('writes the decisions of both doors to the one ledger chain', async () => {
    const events = await gatewayDecisions(served);
    expect(events.some((event) => event.door === 'http' && event.code === 'completed')).toBe(true);
    expect(events.some((event) => event.door === 'mcp' && event.code === 'completed')).toBe(true);
    expect(events.some((event) => event.door === 'mcp' && event.code === 'policy_blocked')).toBe(
      true,
    );
  });
});
