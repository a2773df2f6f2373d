/**
 * An upstream response as the gateway keeps it — the guard's private output for a guarded write,
 * a replay case, a shadowed body — and gives back byte for byte: a UTF-8 body stays readable
 * text, anything else is base64. Only returnable headers are kept.
 */
import type { JsonValue } from '../core/canonical-json.js';
import type { UpstreamResponse } from './config-types.js';
import { returnableResponseHeader } from './header-policy.js';

/** A response ready to send again. */
export interface RecordedResponse {
  readonly status: number;
  readonly headers: readonly (readonly [string, string])[];
  readonly body: Uint8Array;
}

/**
 * Bodies larger than this are not kept (the guard's private output is bounded); a duplicate of
 * such a write gets the gateway's own result document instead of the original body.
 */
export const MAX_RECORDED_BODY_BYTES = 192 * 1024;

const FORMAT = 'sideguard-http-response';
const decoder = new TextDecoder('utf-8', { fatal: true });

/** Text that survives Canonical JSON unchanged (NFC-stable), else undefined. */
function stableText(bytes: Uint8Array): string | undefined {
  try {
    const text = decoder.decode(bytes);
    return text.normalize('NFC') === text ? text : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The JSON form of a response (a guarded write's output, a replay case), or `undefined` when the
 * body is too large to keep.
 */
export function responseOutput(
  response: RecordedResponse | UpstreamResponse,
): JsonValue | undefined {
  if (response.body.byteLength > MAX_RECORDED_BODY_BYTES) return undefined;
  const text = stableText(response.body);
  const headers = response.headers
    .filter(([name, value]) => returnableResponseHeader(name) && value.normalize('NFC') === value)
    .map(([name, value]) => [name, value]);
  return {
    format: FORMAT,
    v: 1,
    status: response.status,
    headers,
    body: text === undefined ? { base64: Buffer.from(response.body).toString('base64') } : { text },
  };
}

/** Reads a value written by `responseOutput`; `undefined` when it is not one. */
export function parseRecordedResponse(value: unknown): RecordedResponse | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const record = value as {
    format?: unknown;
    v?: unknown;
    status?: unknown;
    headers?: unknown;
    body?: unknown;
  };
  if (record.format !== FORMAT || record.v !== 1) return undefined;
  if (typeof record.status !== 'number' || record.status < 100 || record.status > 599)
    return undefined;
  if (!Array.isArray(record.headers)) return undefined;
  const headers: [string, string][] = [];
  for (const pair of record.headers) {
    if (!Array.isArray(pair) || typeof pair[0] !== 'string' || typeof pair[1] !== 'string') {
      return undefined;
    }
    headers.push([pair[0], pair[1]]);
  }
  const body = record.body as { text?: unknown; base64?: unknown } | null;
  if (typeof body?.text === 'string') {
    return { status: record.status, headers, body: Buffer.from(body.text, 'utf8') };
  }
  if (typeof body?.base64 === 'string') {
    return { status: record.status, headers, body: Buffer.from(body.base64, 'base64') };
  }
  return undefined;
}

/**
 * The output form of a JSON answer the gateway builds itself — e.g. a binding's `verify` that
 * found the object after the original response was lost returns `jsonOutput(found)`, so the
 * agent gets the object instead of a bare receipt.
 */
export function jsonOutput(value: unknown, status = 200): JsonValue | undefined {
  return responseOutput({
    status,
    headers: [['content-type', 'application/json']],
    body: Buffer.from(JSON.stringify(value), 'utf8'),
  });
}
