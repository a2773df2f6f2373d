/**
 * What the framework adapter entries load, read from the built import graph: `sideguard/ai-sdk`
 * uses only the AI SDK's types (nothing of `ai` at run time); the entries that need their
 * framework at run time load it, and nothing else that is heavy. The root entry loads none of
 * them (test/import-boundary.test.ts).
 */
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { importGraph } from '../support/import-graph.js';

const dist = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', 'dist');
const bareImports = (entry: string): string[] =>
  [...importGraph(join(dist, 'adapters', entry, 'index.js')).bare].sort();

describe('the framework adapter entries', () => {
  it('sideguard/ai-sdk loads no part of the AI SDK, only zod and node:crypto', () => {
    expect(bareImports('ai-sdk')).toEqual(['node:buffer', 'node:crypto', 'zod']);
  });

  it('sideguard/openai-agents loads @openai/agents (its tool factory) and nothing else heavy', () => {
    expect(bareImports('openai-agents')).toEqual([
      '@openai/agents',
      'node:buffer',
      'node:crypto',
      'zod',
    ]);
  });

  it('sideguard/langgraph loads @langchain/core (tool) and @langchain/langgraph (interrupt) only', () => {
    expect(bareImports('langgraph')).toEqual([
      '@langchain/core/tools',
      '@langchain/langgraph',
      'node:buffer',
      'node:crypto',
      'zod',
    ]);
  });
});
