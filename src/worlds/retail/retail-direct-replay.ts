/**
 * The baseline without Sideguard: the agent calls the retail API itself and, like an ordinary
 * client, sends a write again when it got no answer (or a 5xx) — a blind resend. With `twice`,
 * every write is sent once more. The sandbox's write counts then show what the benchmark's
 * end-state oracle cannot: writes that landed twice.
 */
import { retailWriteTools } from '../../sandbox/providers/retail/retail-provider.js';
import type { RetailReplayResult, RetailWriteOutcome } from './retail-task-replay.js';
import type { RetailAction } from './retail-tasks.js';

const WRITES = new Set<string>(retailWriteTools);
const LOCAL_TOOLS = new Set(['calculate', 'think', 'transfer_to_human_agents']);

/** Options of {@link replayDirect}. */
export interface DirectReplayOptions {
  readonly dataUrl: string;
  readonly apiKey: string;
  readonly twice: boolean;
  /** A client's own deadline per request, in ms. @default 600 (the gateway's upstream timeout) */
  readonly timeoutMs?: number;
  /** Sends per write before giving up. @default 5 */
  readonly maxSends?: number;
}

async function send(options: DirectReplayOptions, action: RetailAction): Promise<string> {
  const write = WRITES.has(action.name);
  const url = new URL(`/retail/v1/${action.name}`, options.dataUrl);
  if (!write) {
    for (const [name, value] of Object.entries(action.kwargs))
      url.searchParams.set(name, String(value));
  }
  try {
    const response = await fetch(url, {
      method: write ? 'POST' : 'GET',
      headers: {
        authorization: `Bearer ${options.apiKey}`,
        ...(write ? { 'content-type': 'application/json' } : {}),
      },
      ...(write ? { body: JSON.stringify(action.kwargs) } : {}),
      signal: AbortSignal.timeout(options.timeoutMs ?? 600),
    });
    await response.arrayBuffer();
    if (response.status === 200) return 'completed';
    return response.status >= 500 || response.status === 429 ? 'no_answer' : 'upstream_refused';
  } catch {
    return 'no_answer';
  }
}

/** Sends a write until it gets an answer, as a client without a guard does. */
async function sendUntilAnswered(options: DirectReplayOptions, action: RetailAction) {
  const max = options.maxSends ?? 5;
  let verdict = 'no_answer';
  let calls = 0;
  while (calls < max) {
    calls += 1;
    verdict = await send(options, action);
    if (verdict !== 'no_answer') break;
  }
  return { verdict, calls };
}

/** Replays `actions` straight against the retail API. */
export async function replayDirect(
  options: DirectReplayOptions,
  actions: readonly RetailAction[],
): Promise<RetailReplayResult> {
  const writes: RetailWriteOutcome[] = [];
  const problems: string[] = [];
  let reads = 0;
  for (const action of actions) {
    if (LOCAL_TOOLS.has(action.name)) continue;
    if (!WRITES.has(action.name)) {
      await send(options, action);
      reads += 1;
      continue;
    }
    const first = await sendUntilAnswered(options, action);
    if (first.verdict === 'no_answer')
      problems.push(`${action.name}: no answer after ${first.calls} sends`);
    const again = options.twice ? await sendUntilAnswered(options, action) : undefined;
    writes.push({
      tool: action.name,
      verdict: first.verdict,
      calls: first.calls,
      ...(again === undefined
        ? {}
        : { secondSend: { verdict: again.verdict, duplicate: false, calls: again.calls } }),
    });
  }
  return { writes, reads, problems };
}
