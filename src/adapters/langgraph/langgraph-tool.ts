/**
 * A declared action as a LangChain tool for LangGraph graphs (`ToolNode`, `createReactAgent`).
 * A call whose proposal needs people pauses the graph with `interrupt()` carrying the proposal;
 * the graph resumes with `Command({ resume })` holding the decision. LangGraph runs the node
 * again from its start on resume (and may replay it later): each run resolves to the same
 * proposal, so the effect happens once.
 */
import { type StructuredToolInterface, tool } from '@langchain/core/tools';
import { interrupt } from '@langchain/langgraph';
import type { ActionDefinition } from '../../core/action.js';
import {
  callNeedsApproval,
  type GuardedToolOutput,
  readProposal,
  runCall,
  type ToolBinding,
  toolOutputOf,
} from '../guarded-tool/index.js';
import {
  isSideguardApprovalDecision,
  type SideguardApprovalDecision,
  type SideguardApprovalRequest,
} from './langgraph-approval-request.js';

/** Options of `sideguardGraphTool`. */
export interface SideguardGraphToolOptions extends ToolBinding {
  /** The tool's name for the model. @default the action's name (e.g. `refund`) */
  readonly name?: string;
  /** What the model reads about the tool. @default the action's type name */
  readonly description?: string;
}

/** The action and binding behind a tool made by `sideguardGraphTool`. */
export interface GraphToolOrigin {
  readonly action: ActionDefinition;
  readonly binding: ToolBinding;
}

const origins = new WeakMap<object, GraphToolOrigin>();

/** The action and binding behind a tool, if `sideguardGraphTool` made it. */
export function graphToolOrigin(made: unknown): GraphToolOrigin | undefined {
  return typeof made === 'object' && made !== null ? origins.get(made) : undefined;
}

/** Asks the person (pauses the graph) and returns their decision once it resumes. */
async function askForDecision(
  origin: GraphToolOrigin,
  toolName: string,
  proposal: string,
  input: unknown,
): Promise<unknown> {
  const view = await readProposal(origin.binding, origin.action, proposal);
  const request: SideguardApprovalRequest = {
    kind: 'sideguard.approval',
    toolName,
    actionType: origin.action.typeName,
    proposal,
    arguments: input,
    preview: view.preview ?? null,
  };
  return interrupt<SideguardApprovalRequest, unknown>(request);
}

/** Records a rejection carried by the resume value; returns the proposal's state after it. */
async function applyRejection(origin: GraphToolOrigin, decision: SideguardApprovalDecision) {
  const { binding, action } = origin;
  if (decision.rejection !== undefined) {
    await binding.guard.recordAuthority(action, {
      tenant: binding.tenant,
      evidence: decision.rejection.evidence,
      authenticatedAuthority: decision.rejection.authority,
    });
  }
  return readProposal(binding, action, decision.proposal);
}

/** One run of the tool (the first, or a re-run after resume or replay). */
async function guardedCall(
  origin: GraphToolOrigin,
  toolName: string,
  input: unknown,
): Promise<GuardedToolOutput> {
  const { binding, action } = origin;
  const { needed, result } = await callNeedsApproval(binding, action, input);
  if (needed) {
    const decision = await askForDecision(origin, toolName, result.proposal, input);
    if (!isSideguardApprovalDecision(decision) || decision.proposal !== result.proposal) {
      return {
        ...toolOutputOf(result),
        reasonCode: 'decision_for_another_proposal',
        message: 'The decision given names another proposal. Nothing was done; ask again.',
      };
    }
    if (decision.decision === 'reject') return toolOutputOf(await applyRejection(origin, decision));
  }
  return toolOutputOf(await runCall(binding, action, input));
}

/**
 * `tools: [sideguardGraphTool(refund, { guard, tenant, principal })]` in a graph compiled with a
 * checkpointer. When the graph stops with a `sideguard.approval` interrupt, record the person's
 * decision with `decideApproval` and resume with `new Command({ resume })`. The tool answers
 * with a `GuardedToolOutput` as JSON text.
 */
export function sideguardGraphTool(
  action: ActionDefinition,
  options: SideguardGraphToolOptions,
): StructuredToolInterface {
  const { name, description, ...binding } = options;
  const toolName = name ?? action.type.name;
  const origin: GraphToolOrigin = { action, binding };
  const made = tool(
    async (input: unknown) => JSON.stringify(await guardedCall(origin, toolName, input)),
    {
      name: toolName,
      description: description ?? action.typeName,
      schema: action.schema as never,
    },
  ) as unknown as StructuredToolInterface; // a structured tool: the schema is a zod object
  origins.set(made, origin);
  return made;
}
