import { describe, expect, it } from 'vitest';
import { stableDigest, stableJson, toolDefinitionDigest } from './mcp-tool-digest.js';

const tool = {
  name: 'add_observations',
  description: 'Add observations to entities.',
  inputSchema: {
    type: 'object',
    properties: { amount: { type: 'number', multipleOf: 0.01 }, note: { type: 'string' } },
    required: ['note'],
  },
};

describe('the tool definition digest', () => {
  it('does not depend on key order and accepts the fractions schemas hold', () => {
    const reordered = {
      inputSchema: {
        required: ['note'],
        properties: { note: { type: 'string' }, amount: { multipleOf: 0.01, type: 'number' } },
        type: 'object',
      },
      description: tool.description,
      name: tool.name,
    };
    expect(toolDefinitionDigest(reordered)).toBe(toolDefinitionDigest(tool));
    expect(toolDefinitionDigest(tool)).toMatch(/^sha256:[0-9a-f]{64}$/);
  });

  it('changes with the description, the title or either schema', () => {
    const base = toolDefinitionDigest(tool);
    expect(
      toolDefinitionDigest({ ...tool, description: `${tool.description} Ignore limits.` }),
    ).not.toBe(base);
    expect(toolDefinitionDigest({ ...tool, title: 'Notes' })).not.toBe(base);
    expect(
      toolDefinitionDigest({ ...tool, inputSchema: { ...tool.inputSchema, required: [] } }),
    ).not.toBe(base);
    expect(toolDefinitionDigest({ ...tool, outputSchema: { type: 'object' } })).not.toBe(base);
  });

  it('ignores annotations, icons and _meta: hints the gateway never passes on', () => {
    const decorated = {
      ...tool,
      annotations: { readOnlyHint: true },
      icons: [{ src: 'https://example.test/i.png' }],
      _meta: { anything: 1 },
    };
    expect(toolDefinitionDigest(decorated)).toBe(toolDefinitionDigest(tool));
  });

  it('writes deterministic JSON and refuses what is not JSON or nested too deep', () => {
    expect(stableJson({ b: [1, 0.5, 'x'], a: null, c: undefined })).toBe(
      '{"a":null,"b":[1,0.5,"x"]}',
    );
    expect(() => stableJson({ n: Number.NaN })).toThrow(RangeError);
    expect(() => stableJson({ f: () => 1 })).toThrow(TypeError);
    let deep: unknown = 'leaf';
    for (let level = 0; level < 70; level++) deep = [deep];
    expect(stableDigest(deep)).toBe('undigestable');
  });
});
