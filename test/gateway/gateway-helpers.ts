/**
 * Shared helpers for the gateway's integration tests: a sandbox as the upstream, the fixture
 * config served on ephemeral ports, and plain `fetch` calls with an agent key.
 */
import { join } from 'node:path';
import { createDevelopmentKeyRing, type GatewayConfig } from 'sideguard';
import {
  compileGatewayConfig,
  type GatewayRuntime,
  openGatewayRuntime,
  type RunningGateway,
  type ServedGateway,
  serveGateway,
  startGatewayServer,
} from 'sideguard/gateway';
import { type Answer, call, type startTestSandbox } from '../sandbox/sandbox-helpers.js';
import { projectRoot } from '../support/cli.js';

export const fixtureConfig = join(projectRoot, 'test', 'gateway', 'fixtures', 'gateway.config.ts');

export const agentKeys = {
  support: 'sg_agent_support_0123456789',
  reader: 'sg_agent_reader_0123456789',
} as const;

export type TestSandbox = Awaited<ReturnType<typeof startTestSandbox>>;

/** Serves the fixture config against `sandbox` (environment read at load). */
export async function serveFixture(
  sandbox: TestSandbox,
  environment: Record<string, string> = {},
  options: {
    store?: Parameters<typeof serveGateway>[0]['store'];
    keyRing?: Parameters<typeof serveGateway>[0]['keyRing'];
  } = {},
): Promise<ServedGateway> {
  const saved = { ...process.env };
  Object.assign(process.env, { SG_TEST_SANDBOX_URL: sandbox.dataUrl, ...environment });
  try {
    return await serveGateway({
      configFile: fixtureConfig,
      port: 0,
      upstreamPorts: { payments: 0 },
      keyRing: options.keyRing ?? createDevelopmentKeyRing('gateway-tests'),
      store: options.store ?? { kind: 'memory' },
    });
  } finally {
    for (const name of Object.keys(process.env)) if (!(name in saved)) delete process.env[name];
    Object.assign(process.env, saved);
  }
}

/**
 * Compiles an in-memory config (throwing on any problem), opens its runtime on a memory store and
 * starts its listeners on ephemeral ports. `close` stops both.
 */
export async function startConfigGateway(
  config: GatewayConfig,
  keyRingName: string,
): Promise<{ runtime: GatewayRuntime; gateway: RunningGateway; close(): Promise<void> }> {
  const compiled = compileGatewayConfig(config);
  if (compiled.kind !== 'compiled') throw new Error(JSON.stringify(compiled.problems));
  const runtime = await openGatewayRuntime(
    { file: '/virtual/sideguard.config.ts', directory: '/virtual', config, table: compiled.table },
    { keyRing: createDevelopmentKeyRing(keyRingName), store: { kind: 'memory' } },
  );
  const gateway = await startGatewayServer(runtime, { port: 0 });
  return {
    runtime,
    gateway,
    close: async () => {
      await gateway.close();
      await runtime.close();
    },
  };
}

/** Calls the gateway as an agent (the support agent unless `key` says otherwise; `null`: no key). */
export function agentCall(
  baseUrl: string,
  method: string,
  path: string,
  options: Omit<NonNullable<Parameters<typeof call>[3]>, 'key'> & { key?: string | null } = {},
): Promise<Answer> {
  const { key, ...rest } = options;
  const agentKey = key === undefined ? agentKeys.support : key;
  return call(baseUrl, method, path, { ...rest, ...(agentKey === null ? {} : { key: agentKey }) });
}

/** Provider writes the sandbox observed, per `provider.operation`. */
export async function sandboxWrites(sandbox: TestSandbox): Promise<Record<string, number>> {
  return (await sandbox.control.observations()).writes.byOperation;
}

/** The data of the `gateway_decided` events on a tenant's chain, after flushing the log. */
export async function gatewayDecisions(
  gateway: Pick<ServedGateway, 'runtime'>,
  tenant = 'acme',
): Promise<Record<string, unknown>[]> {
  await gateway.runtime.decisions.flush();
  return (await gateway.runtime.store.readLedger({ tenant }))
    .filter((event) => event.type === 'gateway_decided')
    .map((event) => ({ ...event.data }));
}
