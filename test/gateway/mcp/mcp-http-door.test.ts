/**
 * `/mcp` over streamable HTTP with the official clients of both protocol eras: declared actions
 * as tools, one write per effect, pending approval answered at once, refusals as `isError`
 * results with the HTTP door's codes, `sideguard_proposal`, agent keys, and bad input.
 */
import { request as httpRequest } from 'node:http';
import type { Client } from '@modelcontextprotocol/client';
import type { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { GatewayDecisionEvent } from 'sideguard/gateway';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  agentKeys,
  connectLegacy,
  connectModern,
  refundConfig,
  serveHttpDoor,
  startTestSandbox,
  structured,
  testGateway,
} from './mcp-test-kit.js';

type Sandbox = Awaited<ReturnType<typeof startTestSandbox>>;

/**
 * Announces a POST body of `declaredBytes` on a connection of its own and resolves with the
 * status: the body is never sent, so the server can refuse it by its length alone.
 */
function announceBody(port: number, declaredBytes: number): Promise<number | undefined> {
  return new Promise((resolve, reject) => {
    const request = httpRequest({
      host: '127.0.0.1',
      port,
      path: '/mcp',
      method: 'POST',
      agent: false,
      headers: {
        authorization: `Bearer ${agentKeys.support}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'content-length': declaredBytes,
      },
    });
    request.on('response', (response) => {
      response.resume();
      resolve(response.statusCode);
      request.destroy();
    });
    request.on('error', reject);
    request.flushHeaders();
  });
}
type Door = Awaited<ReturnType<typeof serveHttpDoor>>;

const REFUND_TOOL = 'support.refund.v1';

describe('the MCP door over streamable HTTP', () => {
  let sandbox: Sandbox;
  let door: Door;
  let modern: Client;
  let legacy: V1Client;
  const events: GatewayDecisionEvent[] = [];

  const refundWrites = async () =>
    (await sandbox.control.observations()).receipts.filter(
      (receipt) => receipt.operation === 'create_refund',
    ).length;

  const post = (body: string, headers: Record<string, string> = {}) =>
    fetch(door.url, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${agentKeys.support}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...headers,
      },
      body,
    });

  beforeAll(async () => {
    sandbox = await startTestSandbox();
    const gateway = testGateway(refundConfig(sandbox.dataUrl), {
      hooks: { onDecision: (event) => void events.push(event) },
    });
    door = await serveHttpDoor(gateway);
    modern = await connectModern(door.url, agentKeys.support);
    legacy = await connectLegacy(door.url, agentKeys.support);
  });

  afterAll(async () => {
    await modern?.close();
    await legacy?.close();
    await door?.close();
    await sandbox?.stop();
  });

  it('serves 2026-07-28 and 2025-11-25 clients from one handler with the same tools', async () => {
    expect(modern.getNegotiatedProtocolVersion()).toBe('2026-07-28');
    expect(legacy.getServerVersion()).toMatchObject({ name: 'sideguard' });
    const modernTools = (await modern.listTools()).tools;
    const legacyTools = (await legacy.listTools()).tools;
    expect(modernTools.map((tool) => tool.name)).toEqual([REFUND_TOOL, 'sideguard_proposal']);
    expect(legacyTools.map((tool) => tool.name)).toEqual([REFUND_TOOL, 'sideguard_proposal']);
    const refund = modernTools.find((tool) => tool.name === REFUND_TOOL);
    // The JSON Schema comes from the zod contract: strict, with its patterns.
    expect(refund?.inputSchema).toMatchObject({
      type: 'object',
      properties: {
        charge: { type: 'string', pattern: '^ch_[A-Za-z0-9_]+$' },
        amount: { type: 'string' },
        requestId: { type: 'string', maxLength: 64 },
      },
      required: ['charge', 'amount'],
      additionalProperties: false,
    });
    // Annotations come from the declaration: a write, one effect per protected fields.
    expect(refund?.annotations).toMatchObject({
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: true,
    });
    expect(refund?.description).toContain('same charge, amount are one effect');
  });

  it('executes an allowed refund once; a retry with new retry metadata from the other era gets the original result', async () => {
    const before = await refundWrites();
    const first = await modern.callTool({
      name: REFUND_TOOL,
      arguments: { charge: 'ch_sg_001', amount: '1500', requestId: 'attempt-1' },
    });
    expect(first.isError).toBeFalsy();
    expect(structured(first)).toMatchObject({
      decision: 'guarded',
      code: 'completed',
      outcome: 'verified',
      status: 'verified',
      duplicate: false,
      action: 'support.refund@1',
      receipt: { provider: 'payments' },
      result: { amount: 1500, charge: 'ch_sg_001' },
    });
    const receiptId = structured(first).receipt.id as string;
    expect(receiptId).toMatch(/^re_/);

    const retry = await legacy.callTool({
      name: REFUND_TOOL,
      arguments: { charge: 'ch_sg_001', amount: '1500', requestId: 'attempt-2' },
    });
    expect(retry.isError).toBeFalsy();
    expect(structured(retry)).toMatchObject({
      code: 'completed',
      duplicate: true,
      proposal: structured(first).proposal,
      receipt: { id: receiptId },
      result: { refund: receiptId, amount: 1500 },
    });
    expect(await refundWrites()).toBe(before + 1);
  });

  it('answers a refund that needs approval at once, with the proposal id and the console URL', async () => {
    const before = await refundWrites();
    const pending = await modern.callTool({
      name: REFUND_TOOL,
      arguments: { charge: 'ch_sg_002', amount: '6000' },
    });
    expect(pending.isError).toBeFalsy();
    const proposal = structured(pending).proposal as string;
    expect(structured(pending)).toMatchObject({
      code: 'approval_required',
      verdict: 'pending_approval',
      status: 'awaiting_authority',
      approvalUrl: `http://127.0.0.1:4401/proposals/${proposal}`,
    });
    expect(structured(pending).hint).toContain('sideguard_proposal');

    const status = await legacy.callTool({
      name: 'sideguard_proposal',
      arguments: { proposal },
    });
    expect(status.isError).toBeFalsy();
    expect(structured(status)).toMatchObject({
      proposal,
      action: 'support.refund@1',
      tool: REFUND_TOOL,
      status: 'awaiting_authority',
      code: 'approval_required',
      needs: '1 more approval (approved so far: nobody)',
      approvals: { required: 1, approvedBy: [], rejectedBy: null },
      preview: { charge: 'ch_sg_002', amountMinor: '6000' },
      approvalUrl: `http://127.0.0.1:4401/proposals/${proposal}`,
    });
    expect(await refundWrites()).toBe(before);
  });

  it('refuses a blocked refund and a contract violation with the codes of the HTTP door, as isError results', async () => {
    const before = await refundWrites();
    const blocked = await modern.callTool({
      name: REFUND_TOOL,
      arguments: { charge: 'ch_sg_003', amount: '200000' },
    });
    expect(blocked.isError).toBe(true);
    expect(structured(blocked)).toMatchObject({
      code: 'policy_blocked',
      verdict: 'blocked',
      reasonCode: 'over_hard_limit',
    });
    const badAmount = await modern.callTool({
      name: REFUND_TOOL,
      arguments: { charge: 'ch_sg_003', amount: 'fifty' },
    });
    expect(badAmount.isError).toBe(true);
    expect(structured(badAmount)).toMatchObject({ code: 'contract_violation', status: null });
    expect(structured(badAmount).issues[0]).toMatchObject({ path: 'amount' });
    const unknownField = await legacy.callTool({
      name: REFUND_TOOL,
      arguments: { charge: 'ch_sg_003', amount: '100', currency: 'usd' },
    });
    expect(unknownField.isError).toBe(true);
    expect(structured(unknownField).code).toBe('contract_violation');
    expect(await refundWrites()).toBe(before);
  });

  it('refuses an unknown tool and a tool outside the agent’s roles as isError results, not protocol errors', async () => {
    const unknown = await modern.callTool({ name: 'support.refund.v9', arguments: {} });
    expect(unknown.isError).toBe(true);
    expect(structured(unknown)).toMatchObject({ decision: 'deny', code: 'tool_not_bound' });
    expect(structured(unknown).hint).toContain('tools/list');

    const reader = await connectModern(door.url, agentKeys.reader);
    try {
      expect((await reader.listTools()).tools.map((tool) => tool.name)).toEqual([
        'sideguard_proposal',
      ]);
      const refused = await reader.callTool({
        name: REFUND_TOOL,
        arguments: { charge: 'ch_sg_004', amount: '100' },
      });
      expect(refused.isError).toBe(true);
      expect(structured(refused)).toMatchObject({
        decision: 'deny',
        code: 'binding_not_permitted',
      });
      expect(structured(refused).hint).toContain('action:support.refund@1');
    } finally {
      await reader.close();
    }
  });

  it('shows a proposal only to the principal that proposed it; anything else looks unknown', async () => {
    const mine = await modern.callTool({
      name: REFUND_TOOL,
      arguments: { charge: 'ch_sg_005', amount: '7000' },
    });
    const proposal = structured(mine).proposal as string;
    const reader = await connectLegacy(door.url, agentKeys.reader);
    try {
      const foreign = await reader.callTool({
        name: 'sideguard_proposal',
        arguments: { proposal },
      });
      const madeUp = await reader.callTool({
        name: 'sideguard_proposal',
        arguments: { proposal: 'prop_0000000000000000' },
      });
      expect(structured(foreign)).toEqual(structured(madeUp));
      expect(structured(foreign)).toMatchObject({ code: 'proposal_not_found' });
      const malformed = await reader.callTool({
        name: 'sideguard_proposal',
        arguments: { proposal: 42 },
      });
      expect(malformed.isError).toBe(true);
      expect(structured(malformed).code).toBe('contract_violation');
    } finally {
      await reader.close();
    }
  });

  it('answers 401 with the reason code for a missing or unknown agent key, before any MCP handling', async () => {
    const initialize = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: {
        protocolVersion: '2025-11-25',
        capabilities: {},
        clientInfo: { name: 'raw', version: '1' },
      },
    });
    const missing = await post(initialize, { authorization: '' });
    expect(missing.status).toBe(401);
    expect(missing.headers.get('www-authenticate')).toContain('Bearer');
    expect(await missing.json()).toMatchObject({ code: 'agent_key_missing' });
    const wrong = await post(initialize, { authorization: 'Bearer sk_agent_not_configured_00' });
    expect(wrong.status).toBe(401);
    expect(await wrong.json()).toMatchObject({ code: 'agent_key_invalid' });
    await expect(connectModern(door.url, 'sk_agent_not_configured_00')).rejects.toThrow();
    expect(events.some((event) => event.reason === 'agent_key_invalid')).toBe(true);
  });

  it('answers malformed JSON-RPC with a JSON-RPC error and a 4xx, and keeps serving', async () => {
    const garbage = await post('{"jsonrpc": "2.0", "id": 1, "method": ');
    expect(garbage.status).toBe(400);
    expect(await garbage.json()).toMatchObject({ error: { code: -32700 } });
    const notRpc = await post(JSON.stringify({ hello: 'world' }));
    expect(notRpc.status).toBeGreaterThanOrEqual(400);
    expect(notRpc.status).toBeLessThan(500);
    await expect(
      modern.callTool({ name: REFUND_TOOL, arguments: 'not an object' as never }),
    ).rejects.toMatchObject({ code: -32602 });
    const still = await modern.callTool({
      name: 'sideguard_proposal',
      arguments: { proposal: 'x' },
    });
    expect(structured(still).code).toBe('proposal_not_found');
  });

  it('refuses oversized bodies (413), reserved headers (400) and foreign Host or Origin headers (403)', async () => {
    // Over the 256 KiB limit of the config, refused by its declared length before it is read.
    expect(await announceBody(door.port, 300_000)).toBe(413);
    const reserved = await post('{}', { 'x-sideguard-tenant': 'other' });
    expect(reserved.status).toBe(400);
    expect(await reserved.json()).toMatchObject({ code: 'reserved_header' });
    const rebinding = await fetch(door.url, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${agentKeys.support}`,
        'content-type': 'application/json',
        origin: 'http://evil.example',
      },
      body: '{}',
    });
    expect(rebinding.status).toBe(403);
  });

  it('records every decision as the gateway’s decision event, with a keyed digest of a write’s arguments', async () => {
    const refusals = events.filter((event) => event.code === 'contract_violation');
    expect(refusals.length).toBeGreaterThan(0);
    const completed = events.filter((event) => event.code === 'completed');
    expect(completed[0]).toMatchObject({
      v: 1,
      door: 'mcp',
      decision: 'guarded',
      reason: 'bound_write',
      tenant: 'acme',
      agent: 'support-bot',
      principal: 'support',
      subject: 'support.refund@1',
      outcome: 'verified',
      requestDigest: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
    });
    // The same arguments give the same digest only under the same key; the arguments never appear.
    expect(JSON.stringify(events)).not.toContain('ch_sg_001');
    expect(events.find((event) => event.code === 'tool_not_bound')).toMatchObject({
      decision: 'deny',
      subject: 'support.refund.v9',
    });
  });
});

describe('the approval seam of the MCP door', () => {
  it('hands a pending call to the approval hook with its era, and keeps the default answer when the hook declines', async () => {
    const sandbox = await startTestSandbox();
    const seen: { era: string; verdict: string; tool: string; agent: string }[] = [];
    const gateway = testGateway(refundConfig(sandbox.dataUrl), {
      hooks: {
        pendingApproval: async (pending) => {
          seen.push({
            era: pending.era,
            verdict: pending.result.verdict,
            tool: pending.tool,
            agent: pending.agent.id,
          });
          if (pending.era === 'legacy') return undefined;
          return {
            content: [{ type: 'text', text: 'approve in the console, then call again' }],
            structuredContent: { custom: true, proposal: pending.result.proposal },
          };
        },
      },
    });
    const door = await serveHttpDoor(gateway);
    const modern = await connectModern(door.url, agentKeys.support);
    const legacy = await connectLegacy(door.url, agentKeys.support);
    try {
      const args = { charge: 'ch_sg_004', amount: '8000' };
      const viaHook = await modern.callTool({ name: REFUND_TOOL, arguments: args });
      expect(structured(viaHook)).toMatchObject({ custom: true });
      const byDefault = await legacy.callTool({ name: REFUND_TOOL, arguments: args });
      expect(structured(byDefault)).toMatchObject({
        code: 'approval_required',
        proposal: structured(viaHook).proposal,
      });
      expect(seen).toEqual([
        { era: 'modern', verdict: 'pending_approval', tool: REFUND_TOOL, agent: 'support-bot' },
        { era: 'legacy', verdict: 'pending_approval', tool: REFUND_TOOL, agent: 'support-bot' },
      ]);
    } finally {
      await modern.close();
      await legacy.close();
      await door.close();
      await sandbox.stop();
    }
  });
});
