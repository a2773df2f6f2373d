/**
 * Replays one task's gold actions as an agent would: each tool call through the gateway's MCP
 * door with the official MCP SDK client. A write whose outcome is not known yet is called again
 * with the same arguments (the gateway makes that the same effect) until it settles; with
 * `twice`, every settled write is sent once more and must come back as the original answer.
 */
import type { Client } from '@modelcontextprotocol/client';
import { retailWriteTools } from '../../sandbox/providers/retail/retail-provider.js';
import type { RetailAction } from './retail-tasks.js';

/** What became of one write call. */
export interface RetailWriteOutcome {
  readonly tool: string;
  /** The gateway's final verdict (`completed`, `upstream_refused`, …) or the refusal code. */
  readonly verdict: string;
  /** Calls it took to settle (1 when the first answer was final). */
  readonly calls: number;
  /** The second send of `twice`: answered from the original effect without writing. */
  readonly secondSend?: {
    readonly verdict: string;
    readonly duplicate: boolean;
    readonly calls: number;
  };
}

/** What one task's replay did. */
export interface RetailReplayResult {
  readonly writes: readonly RetailWriteOutcome[];
  readonly reads: number;
  /** Calls whose answer was not a settled result (e.g. a write that never settled). */
  readonly problems: readonly string[];
}

/** Options of {@link replayTask}. */
export interface ReplayOptions {
  readonly twice: boolean;
  /** Most calls for one write before giving up. @default 40 */
  readonly maxCallsPerWrite?: number;
  /** Wait between calls of an unsettled write, in ms: past the actions' settling window, so one retry usually settles it. @default 1_300 */
  readonly retryDelayMs?: number;
}

const WRITES = new Set<string>(retailWriteTools);
const UNSETTLED = new Set(['outcome_unknown', 'in_progress']);

interface GuardedAnswer {
  readonly decision?: string;
  readonly verdict?: string;
  readonly code?: string;
  readonly duplicate?: boolean;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function callOnce(client: Client, action: RetailAction): Promise<GuardedAnswer> {
  const result = await client.callTool({ name: action.name, arguments: { ...action.kwargs } });
  return (result.structuredContent ?? {}) as GuardedAnswer;
}

/** Calls a write until the gateway's answer is final. */
async function settle(
  client: Client,
  action: RetailAction,
  options: ReplayOptions,
): Promise<{ answer: GuardedAnswer; calls: number }> {
  const max = options.maxCallsPerWrite ?? 40;
  let answer: GuardedAnswer = {};
  for (let calls = 1; calls <= max; calls++) {
    answer = await callOnce(client, action);
    if (answer.decision !== 'guarded' || !UNSETTLED.has(answer.verdict ?? '')) {
      return { answer, calls };
    }
    await sleep(options.retryDelayMs ?? 1_300);
  }
  return { answer, calls: max };
}

/** Replays `actions` through `client` (connected to the gateway's MCP door). */
export async function replayTask(
  client: Client,
  actions: readonly RetailAction[],
  options: ReplayOptions,
): Promise<RetailReplayResult> {
  const writes: RetailWriteOutcome[] = [];
  const problems: string[] = [];
  let reads = 0;
  for (const action of actions) {
    if (!WRITES.has(action.name)) {
      const result = await client.callTool({ name: action.name, arguments: { ...action.kwargs } });
      const meta = result._meta as Record<string, unknown> | undefined;
      if (meta?.['sideguard/decision'] !== 'forward') {
        problems.push(
          `${action.name}: not forwarded (${JSON.stringify(result.structuredContent ?? null)})`,
        );
      }
      reads += 1;
      continue;
    }
    const { answer, calls } = await settle(client, action, options);
    const verdict = answer.verdict ?? answer.code ?? 'no_answer';
    if (answer.decision !== 'guarded' || UNSETTLED.has(verdict)) {
      problems.push(`${action.name}: did not settle (${verdict} after ${calls} calls)`);
    }
    let secondSend: RetailWriteOutcome['secondSend'];
    if (options.twice) {
      const again = await settle(client, action, options);
      secondSend = {
        verdict: again.answer.verdict ?? again.answer.code ?? 'no_answer',
        duplicate: again.answer.duplicate === true,
        calls: again.calls,
      };
    }
    writes.push({ tool: action.name, verdict, calls, ...(secondSend ? { secondSend } : {}) });
  }
  return { writes, reads, problems };
}
