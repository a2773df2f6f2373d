/**
 * `runRetailWorld`: the τ-bench retail world end to end in one process. A sandbox serving the
 * retail provider, the retail MCP server in front of it, and the gateway's MCP door; each task
 * starts from the seed (and its own fault plan), replays its gold actions through the door with
 * the official MCP SDK client, and is judged by value against the expected changes — while the
 * sandbox's own observations count every write that landed and every effect that landed twice.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serve } from '@hono/node-server';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { createDevelopmentKeyRing } from '../../core/key-ring.js';
import { createGuard } from '../../create-guard.js';
import { createMcpGateway } from '../../gateway/mcp/mcp-gateway.js';
import { createMcpHttpDoor, type McpHttpDoor } from '../../gateway/mcp/mcp-http-door.js';
import { loadRetailDataset } from '../../sandbox/providers/retail/retail-data.js';
import {
  type RetailArguments,
  retailEffectKey,
} from '../../sandbox/providers/retail/retail-operations.js';
import { retailWriteTools } from '../../sandbox/providers/retail/retail-provider.js';
import type { SandboxExport } from '../../sandbox/sandbox-runtime.js';
import { startSandbox } from '../../sandbox/start-sandbox.js';
import { createMemoryStore } from '../../stores/memory/memory-store.js';
import { replayDirect } from './retail-direct-replay.js';
import { changedRecords, compareChanges, type RetailChanges } from './retail-end-state.js';
import { retailFaultPlan } from './retail-fault-plan.js';
import { retailGatewayConfig } from './retail-gateway-config.js';
import { startRetailMcpServer } from './retail-mcp-server.js';
import { type RetailWriteOutcome, replayTask } from './retail-task-replay.js';
import {
  loadExpectedChanges,
  loadRetailTasks,
  type RetailSplit,
  type RetailTask,
} from './retail-tasks.js';

/** Options of {@link runRetailWorld}. */
export interface RetailWorldOptions {
  /** @default 'test' */
  readonly split?: RetailSplit;
  /** Task indices to run. @default every task of the split */
  readonly taskIndices?: readonly number[];
  /** Seed of the fault plans; no faults when absent. */
  readonly faultSeed?: number;
  /** Send every write twice. @default false */
  readonly twice?: boolean;
  /**
   * The baseline without Sideguard: call the retail API directly, resending a write that got no
   * answer. @default false
   */
  readonly direct?: boolean;
  /** Hears about each finished task (for progress). */
  readonly onTask?: (result: RetailTaskResult, done: number, total: number) => void;
}

/** A fault the sandbox applied to one request of a task. */
export interface RetailFaultHit {
  readonly operation: string;
  readonly fault: string;
  /** Whether the write happened, as the sandbox knows it. */
  readonly writeOutcome: string;
}

/** One task's verdict. */
export interface RetailTaskResult {
  readonly index: number;
  /** `null` when the split has no expected changes (train, dev). */
  readonly matches: boolean | null;
  readonly differences: readonly string[];
  readonly writes: readonly RetailWriteOutcome[];
  readonly reads: number;
  /** Writes the sandbox committed (its receipts). */
  readonly committedWrites: number;
  /** Effects the sandbox saw committed more than once: must be 0. */
  readonly duplicateEffects: number;
  /**
   * Calls for an effect the sandbox committed that the gateway answered itself (the original
   * answer) instead of sending them on: retries after a lost answer and second sends.
   */
  readonly duplicatesPrevented: number;
  readonly faults: readonly RetailFaultHit[];
  readonly problems: readonly string[];
  readonly durationMs: number;
}

const writeTools = new Set<string>(retailWriteTools);
const AGENT_KEY = 'sk_retail_world_agent_0123456789';
const RETAIL_API_KEY = 'retail_test_sideguard_agent';

/** The changed users and orders of an exported sandbox state, ids stripped. */
function changesOf(exported: SandboxExport): RetailChanges {
  const initial = loadRetailDataset();
  const collection = (name: 'users' | 'orders') => {
    const records: Record<string, unknown> = {};
    for (const [id, record] of exported.state.retail?.[name] ?? []) {
      const { id: _id, ...rest } = record;
      records[id] = rest;
    }
    return changedRecords(initial[name], records);
  };
  return { users: collection('users'), orders: collection('orders') };
}

/** Runs the world; resolves with every task's result, in order. */
export async function runRetailWorld(
  options: RetailWorldOptions = {},
): Promise<RetailTaskResult[]> {
  const split = options.split ?? 'test';
  const all = loadRetailTasks(split);
  const wanted = options.taskIndices === undefined ? undefined : new Set(options.taskIndices);
  const tasks = all.filter((task) => wanted === undefined || wanted.has(task.index));
  const expected = loadExpectedChanges(split);
  const stateDir = await mkdtemp(join(tmpdir(), 'sideguard-retail-world-'));
  const sandbox = await startSandbox({
    providers: ['retail'],
    stateDir,
    seed: 1,
    durability: 'os',
  });
  const tools = await startRetailMcpServer({ dataUrl: sandbox.dataUrl, apiKey: RETAIL_API_KEY });
  const config = retailGatewayConfig({
    dataUrl: sandbox.dataUrl,
    apiKey: RETAIL_API_KEY,
    mcpUrl: tools.url,
    agentKey: AGENT_KEY,
  });
  let door: McpHttpDoor | undefined;
  const server = serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch: (request) =>
      door === undefined
        ? Promise.resolve(new Response('no task', { status: 503 }))
        : door.fetch(request),
  });
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  const doorUrl = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`);
  const results: RetailTaskResult[] = [];
  // One task's replay as an agent through the MCP door, with a fresh guard store.
  const replayThroughGateway = async (task: RetailTask) => {
    const keyRing = createDevelopmentKeyRing(`retail-world-${task.index}`);
    const gateway = createMcpGateway({
      config,
      guard: createGuard({ store: createMemoryStore(), keyRing }),
      keyRing,
      upstreamStderr: 'ignore',
    });
    door = createMcpHttpDoor(gateway);
    const client = new Client({ name: 'retail-world-agent', version: '1.0.0' });
    try {
      await client.connect(
        new StreamableHTTPClientTransport(doorUrl, {
          requestInit: { headers: { authorization: `Bearer ${AGENT_KEY}` } },
        }),
      );
      return await replayTask(client, task.actions, { twice: options.twice === true });
    } finally {
      await client.close().catch(() => {});
      await door.close();
      door = undefined;
      await gateway.close();
    }
  };
  try {
    for (const task of tasks) {
      const started = Date.now();
      await sandbox.control.reset();
      if (options.faultSeed !== undefined) {
        await sandbox.control.setFaults(retailFaultPlan(options.faultSeed, task.index));
      }
      const replay = options.direct
        ? await replayDirect(
            { dataUrl: sandbox.dataUrl, apiKey: RETAIL_API_KEY, twice: options.twice === true },
            task.actions,
          )
        : await replayThroughGateway(task);
      const result = await judgeTask(
        task,
        replay,
        await sandbox.control.export(),
        expected,
        started,
      );
      results.push(result);
      options.onTask?.(result, results.length, tasks.length);
    }
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await tools.close();
    await sandbox.close();
    await rm(stateDir, { recursive: true, force: true });
  }
  return results;
}

/** A task's verdict from the sandbox's export (state and observations) alone. */
function judgeTask(
  task: RetailTask,
  replay: Awaited<ReturnType<typeof replayTask>>,
  exported: SandboxExport,
  expected: Readonly<Record<string, Partial<RetailChanges>>> | undefined,
  started: number,
): RetailTaskResult {
  const comparison =
    expected === undefined
      ? undefined
      : compareChanges(expected[String(task.index)] ?? {}, changesOf(exported));
  const { observations } = exported;
  const retailReceipts = observations.receipts.filter((receipt) => receipt.provider === 'retail');
  const duplicateEffects = Object.values(observations.writes.byEffect).filter(
    (effect) => effect.count > 1,
  ).length;
  const committed = new Set(retailReceipts.map((receipt) => receipt.effectKey));
  const writeActions = task.actions.filter((action) => writeTools.has(action.name));
  let duplicatesPrevented = 0;
  for (const [position, write] of replay.writes.entries()) {
    const action = writeActions[position];
    if (action === undefined) continue;
    const key = retailEffectKey(action.name, action.kwargs as RetailArguments);
    if (!committed.has(key)) continue;
    // Calls for an effect that landed, which the gateway answered without sending them on.
    // Requests still hanging at the export count as sent too.
    const sent = [...observations.requests, ...observations.inFlight].filter(
      (request) => request.effectKey === key,
    ).length;
    const calls = write.calls + (write.secondSend?.calls ?? 0);
    duplicatesPrevented += Math.max(0, calls - sent);
  }
  return {
    index: task.index,
    matches: comparison === undefined ? null : comparison.matches,
    differences: comparison?.differences ?? [],
    writes: replay.writes,
    reads: replay.reads,
    committedWrites: retailReceipts.length,
    duplicateEffects,
    duplicatesPrevented,
    faults: observations.trace
      .filter((entry) => entry.fault !== null)
      .map((entry) => ({
        operation: entry.operation,
        fault: entry.fault ?? '',
        writeOutcome: entry.writeOutcome,
      })),
    problems: replay.problems,
    durationMs: Date.now() - started,
  };
}
