/**
 * Shared parts of the MCP door's integration tests: a refund action that writes to the real
 * sandbox over HTTP, agents and roles, the door served on a real ephemeral port, and the two
 * official clients (SDK v2 pinned to 2026-07-28, SDK v1 speaking 2025-11-25). Not public API.
 */
import { writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { serve } from '@hono/node-server';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as V1HttpTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  approvals,
  createDevelopmentKeyRing,
  createGuard,
  createMemoryStore,
  defineAction,
  type GatewayConfig,
  type GuardStore,
} from 'sideguard';
import {
  createMcpGateway,
  createMcpHttpDoor,
  type McpDoorHooks,
  type McpGateway,
} from 'sideguard/mcp';
import { type RunningSandbox, startSandbox } from 'sideguard/sandbox';
import { z } from 'zod';

/** Agent keys of the test config. */
export const agentKeys = {
  support: 'sk_agent_support_0123456789',
  reader: 'sk_agent_reader_0123456789',
} as const;

/** The sandbox's payments writer key (the gateway holds it; agents never do). */
export const PAYMENTS_KEY = 'sk_test_sideguard_agent';

/** A temp directory and its removal. */
export async function tempDir(prefix = 'sideguard-mcp-') {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

/** The config of the real memory server behind the gateway (see fixtures/memory.config.mjs). */
export const MEMORY_CONFIG = fileURLToPath(
  new URL('./fixtures/memory.config.mjs', import.meta.url),
);
/** The agent key in that config. */
export const MEMORY_AGENT_KEY = 'sk_agent_memory_0123456789';

/**
 * The environment the memory config reads, in `dir`: its memory file (seeded with one empty
 * `entity`), an SQLite store and a fixed test key ring (never a real deployment's).
 */
export function memoryEnvironment(dir: string, entity: string): Record<string, string> {
  const memoryFile = join(dir, 'memory.jsonl');
  writeFileSync(
    memoryFile,
    `${JSON.stringify({ type: 'entity', name: entity, entityType: 'record', observations: [] })}\n`,
  );
  return {
    TEST_MEMORY_FILE: memoryFile,
    TEST_STORE: join(dir, 'gateway.db'),
    SIDEGUARD_KEYS: `current=k1:1;effect=k1:1;k1:1=${Buffer.alloc(32, 7).toString('base64url')}`,
  };
}

/** A sandbox in a temp dir; `stop` closes it and removes the dir. */
export async function startTestSandbox(): Promise<RunningSandbox & { stop(): Promise<void> }> {
  const { dir, cleanup } = await tempDir('sideguard-mcp-sandbox-');
  const sandbox = await startSandbox({
    stateDir: dir,
    seed: 42,
    port: 0,
    controlPort: 0,
    controlToken: 'test-control-token-0123456789',
  });
  return {
    ...sandbox,
    stop: async () => {
      await sandbox.close();
      await cleanup();
    },
  };
}

interface SandboxRefund {
  readonly id: string;
  readonly amount: number;
  readonly charge: string;
  readonly metadata?: Record<string, string>;
}

/**
 * `support.refund@1` against the sandbox's payments API: allowed up to 50.00, approval by
 * `finance` above, blocked above 1,000.00. `requestId` is retry metadata (not protected).
 */
export function sandboxRefundAction(dataUrl: string) {
  const headers = { authorization: `Bearer ${PAYMENTS_KEY}` };
  return defineAction({
    type: { namespace: 'support', name: 'refund', version: 1 },
    input: z.object({
      charge: z.string().regex(/^ch_[A-Za-z0-9_]+$/),
      amount: z.string().regex(/^\d{1,7}$/, 'amount is in minor units, e.g. "1500"'),
      requestId: z.string().max(64).optional(),
    }),
    protectedFields: ['charge', 'amount'],
    policy: (input) =>
      Number(input.amount) > 100_000
        ? { decision: 'block', reason: 'over_hard_limit' }
        : Number(input.amount) > 5_000
          ? { decision: 'require_approval', reason: 'over_auto_limit' }
          : { decision: 'allow', reason: 'within_auto_limit' },
    approval: approvals.single('finance'),
    preview: (input) => ({ charge: input.charge, amountMinor: input.amount }),
    execute: async (input, context) => {
      let response: Response;
      try {
        response = await fetch(`${dataUrl}/v1/refunds`, {
          method: 'POST',
          headers: {
            ...headers,
            'content-type': 'application/x-www-form-urlencoded',
            'idempotency-key': context.providerIdempotencyKey,
          },
          body: new URLSearchParams({
            charge: input.charge,
            amount: input.amount,
            'metadata[sideguard_effect]': context.semanticEffectKey,
          }).toString(),
          signal: AbortSignal.timeout(10_000),
        });
      } catch {
        return { kind: 'failed_unknown', reason: 'payments_unreachable' };
      }
      if (response.status >= 400 && response.status < 500) {
        return { kind: 'failed_known', reason: `http_${response.status}` };
      }
      if (response.status !== 200) {
        return { kind: 'failed_unknown', reason: `http_${response.status}` };
      }
      const refund = (await response.json()) as SandboxRefund;
      return {
        kind: 'accepted',
        receipt: { id: refund.id, provider: 'payments' },
        output: { refund: refund.id, amount: refund.amount, charge: refund.charge },
      };
    },
    verify: async (input, context) => {
      const response = await fetch(
        `${dataUrl}/v1/refunds?charge=${encodeURIComponent(input.charge)}&limit=100`,
        { headers },
      );
      if (response.status !== 200) return { kind: 'unknown', reason: `http_${response.status}` };
      const list = (await response.json()) as { data: SandboxRefund[] };
      const found = list.data.find(
        (refund) => refund.metadata?.sideguard_effect === context.semanticEffectKey,
      );
      return found === undefined
        ? { kind: 'absent', final: true }
        : { kind: 'present', receipt: { id: found.id, provider: 'payments' } };
    },
  });
}

/** A config with the sandbox refund as a declared action and two agents. */
export function refundConfig(
  dataUrl: string,
  overrides: Partial<GatewayConfig> = {},
): GatewayConfig {
  const refund = sandboxRefundAction(dataUrl);
  return {
    tenant: 'acme',
    actions: [refund],
    upstreams: {},
    bindings: [],
    agents: [
      { id: 'support-bot', principal: 'support', key: agentKeys.support, roles: ['support'] },
      { id: 'reader-bot', principal: 'readers', key: agentKeys.reader, roles: ['reader'] },
    ],
    roles: { support: { bindings: [`action:${refund.typeName}`] }, reader: { bindings: [] } },
    approvals: { consoleUrl: 'http://127.0.0.1:4401' },
    ...overrides,
  };
}

/** A gateway over `config` with a memory store (or `store`) and the development key ring. */
export function testGateway(
  config: GatewayConfig,
  options: { store?: GuardStore; hooks?: McpDoorHooks; directory?: string } = {},
): McpGateway {
  const keyRing = createDevelopmentKeyRing('mcp-door-tests');
  return createMcpGateway({
    config,
    guard: createGuard({ store: options.store ?? createMemoryStore(), keyRing }),
    keyRing,
    upstreamStderr: 'ignore',
    ...(options.directory === undefined ? {} : { directory: options.directory }),
    ...(options.hooks === undefined ? {} : { hooks: options.hooks }),
  });
}

/** The door on a real port: `url` is `http://127.0.0.1:PORT/mcp`. */
export async function serveHttpDoor(gateway: McpGateway) {
  const door = createMcpHttpDoor(gateway);
  const server = serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch: (request) =>
      new URL(request.url).pathname === '/mcp'
        ? door.fetch(request)
        : Promise.resolve(new Response('not found', { status: 404 })),
  });
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    url: new URL(`http://127.0.0.1:${port}/mcp`),
    port,
    async close() {
      await door.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The SDK v2 client pinned to 2026-07-28, authenticated with `key`. */
export async function connectModern(url: URL, key: string): Promise<Client> {
  const client = new Client(
    { name: 'test-agent-v2', version: '1.0.0' },
    { versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
  await client.connect(
    new StreamableHTTPClientTransport(url, {
      requestInit: { headers: { authorization: `Bearer ${key}` } },
    }),
  );
  return client;
}

/** The SDK v1 client (2025-11-25), authenticated with `key`. */
export async function connectLegacy(url: URL, key: string): Promise<V1Client> {
  const client = new V1Client({ name: 'test-agent-v1', version: '1.0.0' });
  await client.connect(
    new V1HttpTransport(url, { requestInit: { headers: { authorization: `Bearer ${key}` } } }),
  );
  return client;
}

/** The structured content of a tool result, typed loosely for field-by-field assertions. */
// biome-ignore lint/suspicious/noExplicitAny: tests assert the fields one by one.
export const structured = (result: unknown): any =>
  (result as { structuredContent?: unknown }).structuredContent;
