/**
 * A scripted model for the OpenAI Agents SDK (its `Model` interface): each model turn takes the
 * next step, either function calls or a closing text. No network.
 */
import { type Model, type ModelResponse, Usage } from '@openai/agents';

export type AgentStep = { readonly calls: readonly object[] } | { readonly text: string };

let callNumber = 0;

/** Plays `steps` in order; function call ids are unique across models. */
export function scriptedAgentModel(steps: readonly AgentStep[], toolName = 'refund'): Model {
  let index = 0;
  return {
    async getResponse(): Promise<ModelResponse> {
      const step = steps[index++];
      if (step === undefined) throw new Error(`the script has only ${steps.length} steps`);
      if ('text' in step) {
        return {
          usage: new Usage(),
          output: [
            {
              type: 'message',
              role: 'assistant',
              status: 'completed',
              content: [{ type: 'output_text', text: step.text }],
            },
          ],
        };
      }
      return {
        usage: new Usage(),
        output: step.calls.map((input) => ({
          type: 'function_call' as const,
          callId: `call-${++callNumber}`,
          name: toolName,
          arguments: JSON.stringify(input),
          status: 'completed' as const,
        })),
      };
    },
    getStreamedResponse() {
      throw new Error('the scripted model does not stream');
    },
  };
}
