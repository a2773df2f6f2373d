/**
 * The retail gateway config's HTTP door: the retail API at `/retail` on the gateway, reads
 * forwarded, writes bound to the same declared actions as the MCP tools — a repeated write is
 * one effect at the sandbox, and the repeat gets the original answer.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDevelopmentKeyRing } from '../../src/core/key-ring.js';
import {
  compileGatewayConfig,
  openGatewayRuntime,
  type RunningGateway,
  startGatewayServer,
} from '../../src/gateway/index.js';
import type { RunningSandbox } from '../../src/sandbox/start-sandbox.js';
import { startSandbox } from '../../src/sandbox/start-sandbox.js';
import { retailGatewayConfig } from '../../src/worlds/retail/retail-gateway-config.js';

const AGENT_KEY = 'sk_retail_http_agent_0123456789';
let sandbox: RunningSandbox;
let gateway: RunningGateway;
let closeRuntime: () => Promise<void>;
let stateDir: string;

beforeAll(async () => {
  stateDir = await mkdtemp(join(tmpdir(), 'sideguard-retail-http-'));
  sandbox = await startSandbox({ providers: ['retail'], stateDir, durability: 'os' });
  const config = retailGatewayConfig({
    dataUrl: sandbox.dataUrl,
    apiKey: 'retail_test_sideguard_agent',
    // No MCP server here: only the HTTP door is exercised.
    mcpUrl: 'http://127.0.0.1:9/mcp',
    agentKey: AGENT_KEY,
  });
  const compiled = compileGatewayConfig(config);
  if (compiled.kind !== 'compiled') throw new Error(JSON.stringify(compiled.problems));
  const runtime = await openGatewayRuntime(
    {
      file: join(stateDir, 'retail.config.ts'),
      directory: stateDir,
      config,
      table: compiled.table,
    },
    { keyRing: createDevelopmentKeyRing('retail-http'), store: { kind: 'memory' } },
  );
  closeRuntime = () => runtime.close();
  gateway = await startGatewayServer(runtime, { port: 0, host: '127.0.0.1' });
});

afterAll(async () => {
  await gateway?.close();
  await closeRuntime?.();
  await sandbox?.close();
  await rm(stateDir, { recursive: true, force: true });
});

const agent = { authorization: `Bearer ${AGENT_KEY}` };

describe('the retail world over the gateway HTTP door', () => {
  it('forwards a read and runs a repeated write once, answering the repeat with the original', async () => {
    const read = await fetch(`${gateway.url}/retail/v1/get_user_details?user_id=noah_brown_6181`, {
      headers: agent,
    });
    expect(read.status).toBe(200);
    expect(((await read.json()) as { result: { email: string } }).result.email).toBe(
      'noah.brown7922@example.com',
    );
    const body = JSON.stringify({
      user_id: 'noah_brown_6181',
      address1: '9 Elm St',
      address2: 'Apt 2',
      city: 'Denver',
      state: 'CO',
      country: 'USA',
      zip: '80203',
    });
    const answers: unknown[] = [];
    for (let send = 0; send < 2; send++) {
      const response = await fetch(`${gateway.url}/retail/v1/modify_user_address`, {
        method: 'POST',
        headers: { ...agent, 'content-type': 'application/json' },
        body,
      });
      expect(response.status).toBe(200);
      answers.push(await response.json());
    }
    expect(answers[1]).toEqual(answers[0]);
    expect(
      (answers[0] as { result: { address: { address1: string } } }).result.address.address1,
    ).toBe('9 Elm St');
    const observations = await sandbox.control.observations();
    expect(observations.writes.byOperation).toEqual({ 'retail.modify_user_address': 1 });
  });

  it('answers a write the provider refuses with its error, and writes nothing', async () => {
    const response = await fetch(`${gateway.url}/retail/v1/cancel_pending_order`, {
      method: 'POST',
      headers: { ...agent, 'content-type': 'application/json' },
      body: JSON.stringify({ order_id: '#W0000000', reason: 'no longer needed' }),
    });
    expect(response.status).toBe(422);
    expect(JSON.stringify(await response.json())).toContain('Error: order not found');
    const observations = await sandbox.control.observations();
    expect(observations.writes.byOperation['retail.cancel_pending_order']).toBeUndefined();
  });
});
