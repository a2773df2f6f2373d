/**
 * A LangGraph agent graph for tests and demos: a scripted model node (the step is chosen by how
 * many AI messages the state already holds, so a replayed node answers the same), LangGraph's
 * own `ToolNode`, and a `MemorySaver` checkpointer.
 */
import { AIMessage, type BaseMessage } from '@langchain/core/messages';
import type { StructuredToolInterface } from '@langchain/core/tools';
import { END, MemorySaver, MessagesAnnotation, START, StateGraph } from '@langchain/langgraph';
import { ToolNode } from '@langchain/langgraph/prebuilt';

export type GraphStep = { readonly calls: readonly object[] } | { readonly text: string };

/** The model node: plays the step for the current turn. */
function scriptedModelNode(steps: readonly GraphStep[], toolName: string, thread: string) {
  return (state: { messages: BaseMessage[] }) => {
    const turn = state.messages.filter((m) => AIMessage.isInstance(m)).length;
    const step = steps[turn];
    if (step === undefined) throw new Error(`the script has only ${steps.length} steps`);
    if ('text' in step) return { messages: [new AIMessage(step.text)] };
    const tool_calls = step.calls.map((args, index) => ({
      id: `${thread}-call-${turn}-${index}`,
      name: toolName,
      args: args as Record<string, unknown>,
      type: 'tool_call' as const,
    }));
    return { messages: [new AIMessage({ content: '', tool_calls })] };
  };
}

/** Compiles the agent graph around `tools`. */
export function agentGraph(
  tools: StructuredToolInterface[],
  steps: readonly GraphStep[],
  thread = 'thread',
) {
  const toolName = tools[0]?.name ?? 'refund';
  return new StateGraph(MessagesAnnotation)
    .addNode('agent', scriptedModelNode(steps, toolName, thread))
    .addNode('tools', new ToolNode(tools))
    .addEdge(START, 'agent')
    .addConditionalEdges('agent', (state) => {
      const last = state.messages.at(-1);
      return last !== undefined && AIMessage.isInstance(last) && (last.tool_calls?.length ?? 0) > 0
        ? 'tools'
        : END;
    })
    .addEdge('tools', 'agent')
    .compile({ checkpointer: new MemorySaver() });
}
