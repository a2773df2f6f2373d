/**
 * Records the user's answers to the AI SDK's tool-approval requests as Sideguard evidence. The
 * answers are read from the conversation exactly as the SDK reads them (the last `tool` message's
 * `tool-approval-response` parts, matched to their request and tool call); each is bound to the
 * proposal its tool call's arguments name, so an edited call or a replayed answer is refused.
 */
import type { ModelMessage, ToolApprovalRequest, ToolCallPart } from 'ai';
import {
  type ChatApprovalOptions,
  type ChatDecisionResult,
  recordChatDecision,
} from '../guarded-tool/index.js';
import { toolOrigin } from './ai-sdk-tool.js';

/** Options of `recordToolApprovals`. */
export interface RecordToolApprovalsOptions extends ChatApprovalOptions {
  /** The tools passed to `generateText`/`streamText`; only `sideguardTool` tools are recorded. */
  readonly tools: Readonly<Record<string, unknown>>;
  /** The conversation, ending with the `tool` message that carries the user's answers. */
  readonly messages: readonly ModelMessage[];
}

/** What happened to one approval answer. */
export type ToolApprovalRecord = ChatDecisionResult & {
  readonly approvalId: string;
  readonly toolCallId: string;
  readonly toolName: string;
};

interface Conversation {
  readonly calls: Map<string, ToolCallPart>;
  readonly requests: Map<string, ToolApprovalRequest>;
  readonly answered: Set<string>;
}

function readConversation(messages: readonly ModelMessage[]): Conversation {
  const conversation: Conversation = { calls: new Map(), requests: new Map(), answered: new Set() };
  for (const message of messages) {
    if (typeof message.content === 'string') continue;
    for (const part of message.content) {
      if (part.type === 'tool-call') conversation.calls.set(part.toolCallId, part);
      if (part.type === 'tool-approval-request') conversation.requests.set(part.approvalId, part);
      if (part.type === 'tool-result') conversation.answered.add(part.toolCallId);
    }
  }
  return conversation;
}

/**
 * Records every answer in the conversation's last message, in order. Call it with the user's
 * authenticated identity before handing the same messages to the SDK. An answer Sideguard refuses
 * is returned with the reason; the SDK may still call the tool, which then answers
 * `approval_pending` (nothing is executed without recorded authority).
 */
export async function recordToolApprovals(
  options: RecordToolApprovalsOptions,
): Promise<readonly ToolApprovalRecord[]> {
  const last = options.messages.at(-1);
  if (last?.role !== 'tool') return [];
  const conversation = readConversation(options.messages);
  const records: ToolApprovalRecord[] = [];
  const seen = new Set<string>();
  for (const part of last.content) {
    if (part.type !== 'tool-approval-response') continue;
    const request = conversation.requests.get(part.approvalId);
    const call = request === undefined ? undefined : conversation.calls.get(request.toolCallId);
    if (call === undefined || conversation.answered.has(call.toolCallId)) continue;
    if (seen.has(call.toolCallId)) continue;
    seen.add(call.toolCallId);
    const origin = toolOrigin(options.tools[call.toolName]);
    if (origin === undefined) continue;
    const result = await recordChatDecision(origin.binding, origin.action, {
      ...options,
      decision: part.approved ? 'approve' : 'reject',
      input: call.input,
    });
    records.push({
      ...result,
      approvalId: part.approvalId,
      toolCallId: call.toolCallId,
      toolName: call.toolName,
    });
  }
  return records;
}
