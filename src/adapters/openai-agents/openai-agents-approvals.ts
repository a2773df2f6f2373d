/**
 * Approving or rejecting an OpenAI Agents run's interruption as Sideguard evidence. Each
 * interruption is resolved to the proposal its call's arguments name (`describeInterruption`);
 * approving records the person's evidence bound to that proposal and only then approves the run
 * state, so resuming executes that one proposal. A refused approval leaves the state untouched.
 */
import type { RunState, RunToolApprovalItem } from '@openai/agents';
import type { JsonValue } from '../../core/canonical-json.js';
import {
  type ChatApprovalOptions,
  type ChatDecisionResult,
  readProposal,
  recordChatDecision,
} from '../guarded-tool/index.js';
import { type AgentToolOrigin, agentToolOrigin } from './openai-agents-tool.js';

/** What an interruption of a Sideguard tool is about. */
export interface SideguardInterruption {
  readonly item: RunToolApprovalItem;
  /** The proposal awaiting approval. */
  readonly proposal: string;
  readonly arguments: unknown;
  /** The action's preview for people, when it declares one. */
  readonly preview?: JsonValue;
}

function originOf(item: RunToolApprovalItem): AgentToolOrigin | undefined {
  const tools = (item.agent as { tools?: readonly unknown[] }).tools ?? [];
  const made = tools.find((candidate) => (candidate as { name?: unknown }).name === item.name);
  return agentToolOrigin(made);
}

function argumentsOf(item: RunToolApprovalItem): unknown {
  try {
    return JSON.parse(item.arguments ?? 'null');
  } catch {
    return undefined;
  }
}

/**
 * The proposal an interruption is about (found from its arguments without creating one), or
 * undefined when the interrupted tool is not a Sideguard tool or nothing is pending for it.
 */
export async function describeInterruption(
  item: RunToolApprovalItem,
): Promise<SideguardInterruption | undefined> {
  const origin = originOf(item);
  if (origin === undefined) return undefined;
  const input = argumentsOf(item);
  const predicted = await origin.binding.guard.prepare(origin.action, {
    tenant: origin.binding.tenant,
    principal: origin.binding.principal,
    input,
    mode: 'dry_run',
  });
  const proposal = predicted.prediction?.replayOf;
  if (proposal === undefined) return undefined;
  const view = await readProposal(origin.binding, origin.action, proposal);
  return {
    item,
    proposal,
    arguments: input,
    ...(view.preview === undefined ? {} : { preview: view.preview }),
  };
}

const notOurs = {
  kind: 'refused',
  proposal: null,
  reasonCode: 'not_a_sideguard_tool',
  message: 'the interrupted tool was not made by sideguardAgentTool',
} as const;

async function decide(
  item: RunToolApprovalItem,
  decision: 'approve' | 'reject',
  options: ChatApprovalOptions & { readonly proposal?: string },
): Promise<ChatDecisionResult> {
  const origin = originOf(item);
  if (origin === undefined) return notOurs;
  return recordChatDecision(origin.binding, origin.action, {
    ...options,
    decision,
    input: argumentsOf(item),
  });
}

/**
 * Records the person's approval bound to the interruption's proposal, then approves it on the run
 * state. `proposal` (from `describeInterruption`, as shown to the person) must match.
 */
export async function approveInterruption(
  state: Pick<RunState<unknown, never>, 'approve' | 'reject'>,
  item: RunToolApprovalItem,
  options: ChatApprovalOptions & { readonly proposal?: string },
): Promise<ChatDecisionResult> {
  const result = await decide(item, 'approve', options);
  if (result.kind === 'recorded') state.approve(item);
  return result;
}

/** Records the person's rejection (the proposal is denied), then rejects it on the run state. */
export async function rejectInterruption(
  state: Pick<RunState<unknown, never>, 'approve' | 'reject'>,
  item: RunToolApprovalItem,
  options: ChatApprovalOptions & { readonly proposal?: string },
): Promise<ChatDecisionResult> {
  const result = await decide(item, 'reject', options);
  state.reject(item, {
    message:
      result.kind === 'recorded'
        ? 'An approver rejected this. Nothing was done; do not retry it.'
        : 'Not approved. Nothing was done; do not retry it.',
  });
  return result;
}
