/**
 * The AI SDK's own mock language model, scripted: each `generateText` call takes the next step,
 * which is either tool calls or a closing text.
 */
import type { LanguageModelV3Content } from '@ai-sdk/provider';
import { MockLanguageModelV3 } from 'ai/test';

/** One model step: the refund tool called with these arguments, or a text. */
export type ScriptedStep = { readonly calls: readonly object[] } | { readonly text: string };

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 1, text: 1, reasoning: 0 },
};

/** Tool call ids are unique across models, as a real provider's are. */
let callNumber = 0;

/** A model that plays `steps` in order, naming its tool calls `call-1`, `call-2`, … */
export function scriptedModel(steps: readonly ScriptedStep[], toolName = 'refund') {
  let index = 0;
  return new MockLanguageModelV3({
    doGenerate: async () => {
      const step = steps[index++];
      if (step === undefined) throw new Error(`the script has only ${steps.length} steps`);
      if ('text' in step) {
        return {
          content: [{ type: 'text', text: step.text }],
          finishReason: { unified: 'stop', raw: 'stop' },
          usage,
          warnings: [],
        };
      }
      const content: LanguageModelV3Content[] = step.calls.map((input) => ({
        type: 'tool-call',
        toolCallId: `call-${++callNumber}`,
        toolName,
        input: JSON.stringify(input),
      }));
      return {
        content,
        finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
        usage,
        warnings: [],
      };
    },
  });
}
