/**
 * A declared action as a Vercel AI SDK tool (AI SDK 6 and 7). Its input schema is the action's
 * contract; `needsApproval` asks the guard whether this call's proposal awaits people; `execute`
 * runs the proposal and answers with a `GuardedToolOutput`. Only types come from `ai`, so this
 * module loads nothing of the SDK.
 */
import type { FlexibleSchema, ModelMessage, Tool } from 'ai';
import type { ActionDefinition, ActionInput } from '../../core/action.js';
import {
  callNeedsApproval,
  type GuardedToolOutput,
  runCall,
  type ToolBinding,
  toolOutputOf,
} from '../guarded-tool/index.js';

/** Options of `sideguardTool`: who the tool acts for, and what the model reads about it. */
export interface SideguardToolOptions extends ToolBinding {
  /** What the model reads about the tool. @default the action's type name */
  readonly description?: string;
}

/** A tool made by `sideguardTool`, with what `recordToolApprovals` needs to find its proposals. */
interface ToolOrigin {
  readonly action: ActionDefinition;
  readonly binding: ToolBinding;
}

/** True when the conversation already holds an approval request for this tool call. */
function wasPutToTheUser(messages: readonly ModelMessage[], toolCallId: string): boolean {
  return messages.some(
    (message) =>
      message.role === 'assistant' &&
      typeof message.content !== 'string' &&
      message.content.some(
        (part) => part.type === 'tool-approval-request' && part.toolCallId === toolCallId,
      ),
  );
}

const origins = new WeakMap<object, ToolOrigin>();

/** The action and binding behind a tool made by `sideguardTool`, if it is one. */
export function toolOrigin(tool: unknown): ToolOrigin | undefined {
  return typeof tool === 'object' && tool !== null ? origins.get(tool) : undefined;
}

/**
 * `tools: { refund: sideguardTool(refund, { guard, tenant, principal }) }`. When the action's
 * policy requires approval, the SDK's approval step asks the user; record the user's answer with
 * `recordToolApprovals` before the next `generateText`/`streamText` call. An approval that
 * Sideguard did not record (wrong arguments, wrong person) leaves the call pending: the tool then
 * answers `approval_pending` instead of executing.
 */
export function sideguardTool<A extends ActionDefinition>(
  action: A,
  options: SideguardToolOptions,
): Tool<ActionInput<A>, GuardedToolOutput> {
  const { description, ...binding } = options;
  const made: Tool<ActionInput<A>, GuardedToolOutput> = {
    description: description ?? action.typeName,
    // The action's zod schema; its output type is the action's input (a generic TS cannot see).
    inputSchema: action.schema as unknown as FlexibleSchema<ActionInput<A>>,
    needsApproval: async (input, { toolCallId, messages }) =>
      // The SDK asks again before running a call the user approved: keep that approval (a "no"
      // would turn it into a denial); `execute` runs only what Sideguard recorded as authorized.
      wasPutToTheUser(messages, toolCallId) ||
      (await callNeedsApproval(binding, action, input)).needed,
    execute: async (input) => toolOutputOf(await runCall(binding, action, input)),
  };
  origins.set(made, { action, binding });
  return made;
}
