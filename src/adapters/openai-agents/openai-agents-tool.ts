/**
 * A declared action as an OpenAI Agents SDK function tool. Its parameters are the action's
 * contract; `needsApproval` is the action's policy as the guard applies it to this call (its
 * proposal awaits people), so the run stops with an interruption; `execute` runs the proposal and
 * answers with a `GuardedToolOutput`.
 */
import { type FunctionTool, tool } from '@openai/agents';
import type { z } from 'zod';
import type { ActionDefinition } from '../../core/action.js';
import {
  callNeedsApproval,
  type GuardedToolOutput,
  runCall,
  type ToolBinding,
  toolOutputOf,
} from '../guarded-tool/index.js';

/** Options of `sideguardAgentTool`. */
export interface SideguardAgentToolOptions extends ToolBinding {
  /** The tool's name for the model. @default the action's name (e.g. `refund`) */
  readonly name?: string;
  /** What the model reads about the tool. @default the action's type name */
  readonly description?: string;
}

/** The action and binding behind a tool made by `sideguardAgentTool`. */
export interface AgentToolOrigin {
  readonly action: ActionDefinition;
  readonly binding: ToolBinding;
}

/** The SDK's function tool with an object schema for parameters (the action's contract). */
export type AgentTool = FunctionTool<unknown, z.ZodObject<z.ZodRawShape>, GuardedToolOutput>;

const origins = new WeakMap<object, AgentToolOrigin>();

/** The action and binding behind a tool, if `sideguardAgentTool` made it. */
export function agentToolOrigin(made: unknown): AgentToolOrigin | undefined {
  return typeof made === 'object' && made !== null ? origins.get(made) : undefined;
}

/**
 * `tools: [sideguardAgentTool(refund, { guard, tenant, principal })]`. A call that needs
 * approval interrupts the run; approve or reject it with `approveInterruption` /
 * `rejectInterruption`, which record bound evidence, then resume with `run(agent, result.state)`.
 */
export function sideguardAgentTool(
  action: ActionDefinition,
  options: SideguardAgentToolOptions,
): AgentTool {
  const { name, description, ...binding } = options;
  const made = tool({
    name: name ?? action.type.name,
    description: description ?? action.typeName,
    parameters: action.schema as never,
    needsApproval: async (_context, input) =>
      (await callNeedsApproval(binding, action, input)).needed,
    execute: async (input): Promise<GuardedToolOutput> =>
      toolOutputOf(await runCall(binding, action, input)),
  }) as unknown as AgentTool;
  origins.set(made, { action, binding });
  return made;
}
