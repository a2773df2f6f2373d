/**
 * The first MCP danger: under 2026-07-28 a client MUST re-issue a call whose response stream
 * broke, as a new request — and MCP has no idempotency key for tool calls. A proxy between the
 * client and `/mcp` lets the gateway finish the call (the refund is written in the sandbox),
 * then cuts the connection before a byte of the answer reaches the client. The re-issued call
 * must get the original result, and the sandbox must have seen one write.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Client } from '@modelcontextprotocol/client';
import type { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
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

const REFUND_TOOL = 'support.refund.v1';
const HOP_BY_HOP = new Set(['host', 'connection', 'content-length', 'transfer-encoding']);

async function bodyOf(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** True for the `tools/call` of `tool` the proxy should cut (each id once). */
function callOf(body: Buffer, tool: string): boolean {
  try {
    const message = JSON.parse(body.toString('utf8')) as {
      method?: string;
      params?: { name?: string };
    };
    return message.method === 'tools/call' && message.params?.name === tool;
  } catch {
    return false;
  }
}

/**
 * Forwards to `target`; the first `tools/call` of `tool` is answered by the gateway in full and
 * then the client's connection is destroyed without a byte of the answer.
 */
async function startCuttingProxy(target: URL, tool: string) {
  const cut = { armed: true, count: 0 };
  const server: Server = createServer((request, response) => {
    void (async () => {
      const body = await bodyOf(request);
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(request.headers)) {
        if (!HOP_BY_HOP.has(name) && typeof value === 'string') headers[name] = value;
      }
      const answer = await fetch(target, {
        method: request.method ?? 'POST',
        headers: { ...headers, host: target.host },
        ...(request.method === 'POST' ? { body } : {}),
      });
      const text = await answer.text();
      if (cut.armed && callOf(body, tool)) {
        cut.armed = false;
        cut.count += 1;
        request.socket.destroy();
        return;
      }
      const out: Record<string, string> = {};
      answer.headers.forEach((value, name) => {
        if (!HOP_BY_HOP.has(name) && name !== 'content-encoding') out[name] = value;
      });
      response.writeHead(answer.status, out);
      response.end(text);
    })().catch(() => request.socket.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    // The gateway checks Host: the proxy keeps a loopback name.
    url: new URL(`http://localhost:${port}/mcp`),
    cut,
    rearm: () => {
      cut.armed = true;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('a response stream that breaks after the upstream write', () => {
  let sandbox: Awaited<ReturnType<typeof startTestSandbox>>;
  let door: Awaited<ReturnType<typeof serveHttpDoor>>;
  let proxy: Awaited<ReturnType<typeof startCuttingProxy>>;

  const refundReceipts = async () =>
    (await sandbox.control.observations()).receipts.filter(
      (receipt) => receipt.operation === 'create_refund',
    );

  beforeAll(async () => {
    sandbox = await startTestSandbox();
    door = await serveHttpDoor(testGateway(refundConfig(sandbox.dataUrl)));
    proxy = await startCuttingProxy(door.url, REFUND_TOOL);
  });

  afterAll(async () => {
    await proxy?.close();
    await door?.close();
    await sandbox?.stop();
  });

  it('gives the re-issued 2026-07-28 call the original result, with one write', async () => {
    const client: Client = await connectModern(proxy.url, agentKeys.support);
    try {
      const args = { charge: 'ch_sg_002', amount: '2500' };
      const before = (await refundReceipts()).length;
      const broken = await client.callTool({ name: REFUND_TOOL, arguments: args }).then(
        () => 'answered',
        () => 'broken',
      );
      expect(broken).toBe('broken');
      expect(proxy.cut.count).toBe(1);
      // The write happened even though the client never heard about it.
      const written = (await refundReceipts()).slice(before);
      expect(written).toHaveLength(1);

      // The client re-issues the call as a new request, exactly as the spec requires.
      const reissued = await client.callTool({ name: REFUND_TOOL, arguments: args });
      expect(reissued.isError).toBeFalsy();
      expect(structured(reissued)).toMatchObject({
        code: 'completed',
        duplicate: true,
        receipt: { id: written[0]?.objectId, provider: 'payments' },
        result: { refund: written[0]?.objectId, amount: 2500, charge: 'ch_sg_002' },
      });
      expect((await refundReceipts()).length).toBe(before + 1);
    } finally {
      await client.close();
    }
  });

  it('does the same for a 2025-11-25 client that retries after a lost response', async () => {
    proxy.rearm();
    const client: V1Client = await connectLegacy(proxy.url, agentKeys.support);
    try {
      const args = { charge: 'ch_sg_003', amount: '1200' };
      const before = (await refundReceipts()).length;
      const broken = await client.callTool({ name: REFUND_TOOL, arguments: args }).then(
        () => 'answered',
        () => 'broken',
      );
      expect(broken).toBe('broken');
      const reissued = await client.callTool({ name: REFUND_TOOL, arguments: args });
      const written = (await refundReceipts()).slice(before);
      expect(written).toHaveLength(1);
      expect(structured(reissued)).toMatchObject({
        code: 'completed',
        duplicate: true,
        receipt: { id: written[0]?.objectId },
      });
    } finally {
      await client.close();
    }
  });
});
