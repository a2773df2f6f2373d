import { describe, expect, it } from 'vitest';
import {
  MAX_KEPT_TOOL_RESULT_BYTES,
  parseToolResultOutput,
  toolResultOutput,
} from './mcp-result-output.js';

describe('a tool result kept as the guard’s private output', () => {
  it('comes back unchanged, numbers Canonical JSON refuses included', () => {
    const result = {
      content: [{ type: 'text', text: 'added 1 observation' }],
      structuredContent: { ratio: 0.25, results: [{ entityName: 'e', added: ['x'] }] },
    };
    const kept = toolResultOutput(result);
    expect(kept).toMatchObject({ format: 'sideguard-mcp-result', v: 1 });
    expect(parseToolResultOutput(kept)).toEqual(result);
  });

  it('keeps text that NFC normalisation would change as base64, byte for byte', () => {
    const decomposed = 'cafe\u0301';
    const kept = toolResultOutput({ content: [{ type: 'text', text: decomposed }], isError: true });
    expect(kept).toHaveProperty('base64');
    expect(parseToolResultOutput(kept)).toEqual({
      content: [{ type: 'text', text: decomposed }],
      isError: true,
    });
  });

  it('keeps nothing over the size limit and reads back nothing it did not write', () => {
    const large = { content: [{ type: 'text', text: 'x'.repeat(MAX_KEPT_TOOL_RESULT_BYTES) }] };
    expect(toolResultOutput(large)).toBeUndefined();
    expect(parseToolResultOutput({ format: 'sideguard-http-response', v: 1 })).toBeUndefined();
    expect(
      parseToolResultOutput({ format: 'sideguard-mcp-result', v: 1, json: '{' }),
    ).toBeUndefined();
    expect(
      parseToolResultOutput({ format: 'sideguard-mcp-result', v: 1, json: '{}' }),
    ).toBeUndefined();
    expect(parseToolResultOutput('text')).toBeUndefined();
  });
});
