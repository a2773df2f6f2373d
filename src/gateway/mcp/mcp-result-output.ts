/**
 * An upstream tool's answer as the guard keeps it (its private output, encrypted with the
 * proposal) so that a duplicate call — a retry, a re-issued call after a broken stream, the same
 * effect from another gateway process — gets the original answer back unchanged. The result is
 * kept as JSON text (base64 when the text would not survive Canonical JSON's NFC rule), because
 * tool results may hold numbers Canonical JSON refuses.
 */
import type { JsonValue } from '../../core/canonical-json.js';
import type { UpstreamToolResult } from '../config-types.js';

/** Results larger than this are not kept; a duplicate then gets the gateway's own summary. */
export const MAX_KEPT_TOOL_RESULT_BYTES = 192 * 1024;

const FORMAT = 'sideguard-mcp-result';

/** The output to keep for a tool result, or `undefined` when it is too large. */
export function toolResultOutput(result: UpstreamToolResult): JsonValue | undefined {
  const text = JSON.stringify({
    content: result.content,
    ...(result.structuredContent === undefined
      ? {}
      : { structuredContent: result.structuredContent }),
    ...(result.isError === true ? { isError: true } : {}),
  });
  if (Buffer.byteLength(text, 'utf8') > MAX_KEPT_TOOL_RESULT_BYTES) return undefined;
  return text.normalize('NFC') === text
    ? { format: FORMAT, v: 1, json: text }
    : { format: FORMAT, v: 1, base64: Buffer.from(text, 'utf8').toString('base64') };
}

/** Reads back what `toolResultOutput` kept; `undefined` for anything else. */
export function parseToolResultOutput(value: unknown): UpstreamToolResult | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const kept = value as { format?: unknown; v?: unknown; json?: unknown; base64?: unknown };
  if (kept.format !== FORMAT || kept.v !== 1) return undefined;
  const text =
    typeof kept.json === 'string'
      ? kept.json
      : typeof kept.base64 === 'string'
        ? Buffer.from(kept.base64, 'base64').toString('utf8')
        : undefined;
  if (text === undefined) return undefined;
  try {
    const parsed = JSON.parse(text) as Partial<UpstreamToolResult>;
    if (!Array.isArray(parsed.content)) return undefined;
    return {
      content: parsed.content,
      ...(parsed.structuredContent === undefined
        ? {}
        : { structuredContent: parsed.structuredContent }),
      ...(parsed.isError === true ? { isError: true } : {}),
    };
  } catch {
    return undefined;
  }
}
