/**
 * Stripe-style idempotency on the data plane: a key is scoped to the API key that sent it; the
 * first response is saved once execution begins (errors included) and replayed for the same
 * parameters; other parameters, or the same key while the first request runs, are refused.
 */
import { createHash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { decodePairs } from './form-encoding.js';
import { hashApiKey } from './identity.js';
import { RequestDecision } from './observations.js';
import { headerValue } from './provider-kit.js';
import { idempotencyCollection, type SandboxRuntime } from './sandbox-runtime.js';
import type {
  JsonRecord,
  OperationDefinition,
  ProviderDefinition,
  ProviderRequest,
  ProviderResponse,
  StateChange,
} from './sandbox-types.js';

/** A key that scopes one execution: its saved response is written with the execution. */
export interface IdempotencyScope {
  readonly key: string;
  /** `<API-key hash prefix>:<key>`: the saved response's id in the provider's state. */
  readonly id: string;
  /** What "same parameters" means for this request (see {@link requestFingerprint}). */
  readonly fingerprint: string;
  /** Echoed on every answer to this request. */
  readonly headers: Readonly<Record<string, string>>;
}

/** What the idempotency check decided before execution. */
export type IdempotencyGate =
  | { readonly kind: 'execute'; readonly scope: IdempotencyScope | undefined }
  | {
      readonly kind: 'refuse';
      readonly response: ProviderResponse;
      readonly decision: RequestDecision;
      readonly headers: Readonly<Record<string, string>>;
    }
  | {
      readonly kind: 'replay';
      readonly response: ProviderResponse;
      readonly bodyText: string;
      readonly headers: Readonly<Record<string, string>>;
    };

/** Whether the operation deduplicates by key in this sandbox (a write of a provider that honours keys). */
export function deduplicates(
  runtime: SandboxRuntime,
  provider: ProviderDefinition,
  operation: OperationDefinition,
): boolean {
  return operation.kind === 'write' && runtime.honoursIdempotency(provider);
}

/**
 * Decides, before execution, whether the request executes (under a key scope, or none), is
 * refused (invalid key, parameters mismatch, in flight) or replays a saved response.
 */
export function checkIdempotency(
  runtime: SandboxRuntime,
  provider: ProviderDefinition,
  operation: OperationDefinition,
  headers: IncomingHttpHeaders,
  credential: string | undefined,
  request: ProviderRequest,
): IdempotencyGate {
  const support = provider.idempotency;
  if (support === undefined || !deduplicates(runtime, provider, operation)) {
    return { kind: 'execute', scope: undefined };
  }
  const key = headerValue(headers, support.header);
  if (key === undefined) return { kind: 'execute', scope: undefined };
  if (key.length === 0 || key.length > support.maxKeyLength) {
    return {
      kind: 'refuse',
      response: support.invalidKey(key),
      decision: RequestDecision.invalid,
      headers: {},
    };
  }
  const keyHeaders = { 'Idempotency-Key': key };
  // Keys are scoped to the API key that used them, as Stripe scopes them to an account.
  const id = `${hashApiKey(credential ?? '').slice(0, 16)}:${key}`;
  if (runtime.inFlight.has(inFlightId(provider, id))) {
    return {
      kind: 'refuse',
      response: support.inFlight(key),
      decision: RequestDecision.idempotencyInFlight,
      headers: keyHeaders,
    };
  }
  const fingerprint = requestFingerprint(request);
  const saved = runtime.store.get(provider.name, idempotencyCollection, id);
  if (saved === undefined) {
    return { kind: 'execute', scope: { key, id, fingerprint, headers: keyHeaders } };
  }
  if (saved.fingerprint !== fingerprint) {
    return {
      kind: 'refuse',
      response: support.parametersMismatch(key),
      decision: RequestDecision.idempotencyMismatch,
      headers: keyHeaders,
    };
  }
  return {
    kind: 'replay',
    response: { status: Number(saved.status) },
    bodyText: String(saved.body),
    headers: { ...keyHeaders, ...support.replayHeaders(String(saved.request_id)) },
  };
}

/** Marks the scope as executing (a duplicate meanwhile gets 409) until the returned release runs. */
export function markInFlight(
  runtime: SandboxRuntime,
  provider: ProviderDefinition,
  scope: IdempotencyScope | undefined,
): () => void {
  if (scope === undefined) return () => {};
  const id = inFlightId(provider, scope.id);
  runtime.inFlight.add(id);
  return () => runtime.inFlight.delete(id);
}

/** The saved response, stored in the same commit as the write it answers. */
export function savedResponseChange(
  provider: ProviderDefinition,
  scope: IdempotencyScope,
  finalAnswer: ProviderResponse,
  requestId: string,
  receivedAt: string,
): StateChange {
  const saved: JsonRecord = {
    key: scope.key,
    fingerprint: scope.fingerprint,
    status: finalAnswer.status,
    body: finalAnswer.body === undefined ? '' : JSON.stringify(finalAnswer.body),
    request_id: requestId,
    created_at: receivedAt,
  };
  return { provider: provider.name, collection: idempotencyCollection, id: scope.id, value: saved };
}

/** What "same parameters" means: method, path and the decoded, sorted form pairs (or raw body). */
export function requestFingerprint(request: ProviderRequest): string {
  const hash = createHash('sha256').update(`${request.method} ${request.pathname}\n`);
  const pairs =
    request.contentType === 'application/x-www-form-urlencoded'
      ? decodePairs(request.body.toString('utf8'))
      : undefined;
  if (pairs === undefined) hash.update(request.body);
  else
    hash.update(
      JSON.stringify(
        [...pairs].sort(([a, x], [b, y]) =>
          a === b ? (x < y ? -1 : x > y ? 1 : 0) : a < b ? -1 : 1,
        ),
      ),
    );
  return hash.digest('hex');
}

function inFlightId(provider: ProviderDefinition, id: string): string {
  return `${provider.name}:${id}`;
}
