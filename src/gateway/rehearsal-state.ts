/**
 * Shadow and replay state on top of the gateway state store: resource keys (path plus
 * normalised query), shadowed writes sealed with the key ring (an agent's write body is private),
 * recorded replay cases, and the JSON files they export to and load from.
 */
import { randomBytes } from 'node:crypto';
import type { JsonValue } from '../core/canonical-json.js';
import { openEnvelope, type SealedEnvelope, sealEnvelope } from '../core/envelope.js';
import type { KeyRing } from '../core/key-ring.js';
import type { ConfigProblem } from './config-schema.js';
import {
  parseRecordedResponse,
  type RecordedResponse,
  responseOutput,
} from './recorded-response.js';
import { normaliseQuery } from './route-pattern.js';
import type { GatewayStateStore } from './state/gateway-state.js';

/** `/a/b?x=1&y=2`: decoded segments re-encoded, query normalised. The key of a resource. */
export function resourceKey(
  segments: readonly string[],
  pairs: readonly (readonly [string, string])[],
): string {
  return `/${segments.map(encodeURIComponent).join('/')}?${normaliseQuery(pairs)}`;
}

/** A shadowed write as it is answered back to a read. */
export interface ShadowedWrite {
  readonly tenant: string;
  readonly upstream: string;
  readonly resource: string;
  readonly method: string;
  readonly recordedAtMs: number;
  readonly contentType: string;
  readonly body: Uint8Array;
}

const shadowAad = (tenant: string, upstream: string, resource: string) =>
  `sideguard/gateway/shadow/v1\u0000${tenant}\u0000${upstream}\u0000${resource}`;
const caseAad = (session: string, upstream: string, key: string) =>
  `sideguard/gateway/replay-case/v1\u0000${session}\u0000${upstream}\u0000${key}`;

const seal = (keyRing: KeyRing, value: JsonValue, aad: string): string =>
  JSON.stringify(sealEnvelope(keyRing, value, aad, (size) => randomBytes(size)));
const open = (keyRing: KeyRing, sealed: string, aad: string): JsonValue =>
  openEnvelope(keyRing, JSON.parse(sealed) as SealedEnvelope, aad);

/** Records a shadowed write (sealed). */
export async function recordShadowWrite(
  state: GatewayStateStore,
  keyRing: KeyRing,
  write: ShadowedWrite,
): Promise<void> {
  const content = responseOutput({
    status: 200,
    headers: [['content-type', write.contentType]],
    body: write.body,
  });
  await state.appendShadowWrite({
    tenant: write.tenant,
    upstream: write.upstream,
    resource: write.resource,
    method: write.method,
    recordedAtMs: write.recordedAtMs,
    sealed: seal(
      keyRing,
      content ?? { format: 'too_large' },
      shadowAad(write.tenant, write.upstream, write.resource),
    ),
  });
}

/** The latest shadowed write of a resource, opened, or undefined. */
export async function latestShadowedWrite(
  state: GatewayStateStore,
  keyRing: KeyRing,
  tenant: string,
  upstream: string,
  resource: string,
): Promise<ShadowedWrite | undefined> {
  const record = await state.latestShadowWrite(tenant, upstream, resource);
  if (record === undefined) return undefined;
  const content = parseRecordedResponse(
    open(keyRing, record.sealed, shadowAad(tenant, upstream, resource)),
  );
  return {
    tenant,
    upstream,
    resource,
    method: record.method,
    recordedAtMs: record.recordedAtMs,
    contentType:
      content?.headers.find(([name]) => name === 'content-type')?.[1] ?? 'application/octet-stream',
    body: content?.body ?? new Uint8Array(),
  };
}

/** The shadow state as a JSON document (`sideguard shadow export`). */
export async function exportShadowState(
  state: GatewayStateStore,
  keyRing: KeyRing,
  tenant?: string,
): Promise<JsonValue> {
  const writes: JsonValue[] = [];
  for (const record of await state.listShadowWrites(tenant)) {
    const content = parseRecordedResponse(
      open(keyRing, record.sealed, shadowAad(record.tenant, record.upstream, record.resource)),
    );
    writes.push({
      tenant: record.tenant,
      upstream: record.upstream,
      method: record.method,
      resource: record.resource,
      recordedAt: new Date(record.recordedAtMs).toISOString(),
      content: content === undefined ? null : (responseOutput(content) ?? null),
    });
  }
  return { format: 'sideguard-shadow-export', version: 1, writes };
}

/** One recorded response: what answers `METHOD resource` of an upstream in replay mode. */
export interface ReplayCase {
  readonly upstream: string;
  readonly method: string;
  /** `path?normalisedQuery` (see `resourceKey`). */
  readonly resource: string;
  readonly response: RecordedResponse;
}

/** Replay cases indexed for lookup; a later case for the same request wins. */
export class ReplayBook {
  private readonly cases = new Map<string, RecordedResponse>();

  constructor(cases: readonly ReplayCase[] = []) {
    for (const entry of cases) this.add(entry);
  }

  add(entry: ReplayCase): void {
    this.cases.set(`${entry.upstream}\u0000${entry.method} ${entry.resource}`, entry.response);
  }

  find(upstream: string, method: string, resource: string): RecordedResponse | undefined {
    return this.cases.get(`${upstream}\u0000${method} ${resource}`);
  }

  get size(): number {
    return this.cases.size;
  }
}

/** Records a forwarded response into a recording session (sealed). */
export async function recordReplayCase(
  state: GatewayStateStore,
  keyRing: KeyRing,
  session: string,
  entry: ReplayCase,
  atMs: number,
): Promise<void> {
  const output = responseOutput(entry.response);
  if (output === undefined) return;
  const key = `${entry.method} ${entry.resource}`;
  await state.appendReplayCase({
    session,
    upstream: entry.upstream,
    caseKey: key,
    recordedAtMs: atMs,
    sealed: seal(keyRing, output, caseAad(session, entry.upstream, key)),
  });
}

const CASES_FORMAT = 'sideguard-replay-cases';

/** The cases of a recording session as the JSON text of a cases file. */
export async function exportReplayCases(
  state: GatewayStateStore,
  keyRing: KeyRing,
  session: string,
): Promise<{ readonly text: string; readonly count: number }> {
  const cases: JsonValue[] = [];
  for (const record of await state.listReplayCases(session)) {
    const space = record.caseKey.indexOf(' ');
    cases.push({
      upstream: record.upstream,
      method: record.caseKey.slice(0, space),
      resource: record.caseKey.slice(space + 1),
      response: open(keyRing, record.sealed, caseAad(session, record.upstream, record.caseKey)),
    });
  }
  const text = `${JSON.stringify({ format: CASES_FORMAT, version: 1, session, cases }, null, 2)}\n`;
  return { text, count: cases.length };
}

/** Reads a cases file's JSON; problems name `cases[i].field`. */
export function parseReplayCases(
  text: string,
):
  | { readonly kind: 'parsed'; readonly cases: readonly ReplayCase[] }
  | { readonly kind: 'invalid'; readonly problems: readonly ConfigProblem[] } {
  let document: { format?: unknown; version?: unknown; cases?: unknown };
  try {
    document = JSON.parse(text) as typeof document;
  } catch (error) {
    return {
      kind: 'invalid',
      problems: [{ path: '(file)', message: `not JSON: ${(error as Error).message}` }],
    };
  }
  if (
    document?.format !== CASES_FORMAT ||
    document.version !== 1 ||
    !Array.isArray(document.cases)
  ) {
    return {
      kind: 'invalid',
      problems: [
        {
          path: '(root)',
          message: `not a cases file: expected { "format": "${CASES_FORMAT}", "version": 1, "cases": [...] } as written by \`sideguard record\``,
        },
      ],
    };
  }
  const cases: ReplayCase[] = [];
  const problems: ConfigProblem[] = [];
  document.cases.forEach((value: unknown, index: number) => {
    const entry = (value ?? {}) as Record<string, unknown>;
    const response = parseRecordedResponse(entry.response);
    if (
      typeof entry.upstream !== 'string' ||
      typeof entry.method !== 'string' ||
      typeof entry.resource !== 'string' ||
      !entry.resource.startsWith('/') ||
      !entry.resource.includes('?')
    ) {
      problems.push({
        path: `cases[${index}]`,
        message: 'a case needs upstream, method and resource ("/path?query")',
      });
    } else if (response === undefined) {
      problems.push({ path: `cases[${index}].response`, message: 'not a recorded response' });
    } else {
      cases.push({
        upstream: entry.upstream,
        method: entry.method.toUpperCase(),
        resource: entry.resource,
        response,
      });
    }
  });
  return problems.length > 0 ? { kind: 'invalid', problems } : { kind: 'parsed', cases };
}
