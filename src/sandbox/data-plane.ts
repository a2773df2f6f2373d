/**
 * The data plane: provider paths only. Each request passes reserved-header, route, size,
 * identity and validation checks, then meets its fault at the commit point, with Stripe-style
 * idempotency where the provider honours it. Every request and decision is observed.
 */
import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { FaultKind, FaultSpec } from './fault-plan.js';
import { decodePairs } from './form-encoding.js';
import { hashApiKey } from './identity.js';
import { RequestDecision, ResponseDelivery, WriteOutcome } from './observations.js';
import { headerValue, matchPath } from './provider-kit.js';
import { idempotencyCollection, type SandboxRuntime } from './sandbox-runtime.js';
import type {
  ExecuteContext,
  JsonRecord,
  OperationDefinition,
  ProviderDefinition,
  ProviderErrorShapes,
  ProviderRequest,
  ProviderResponse,
} from './sandbox-types.js';
import { hashToken } from './seeded-random.js';

/** Prefix of headers only the sandbox may use; a data-plane request carrying one gets 400. */
export const reservedHeaderPrefix = 'x-sideguard-';

/** Default data-plane body limit in bytes (64 KiB). */
export const defaultBodyLimitBytes = 64 * 1024;

const genericError = (status: number, code: string, message: string): ProviderResponse => ({
  status,
  body: { error: { code, message } },
});

/** Shapes for paths that belong to no provider. */
const unroutedErrors: ProviderErrorShapes = {
  notFoundRoute: (method, pathname) =>
    genericError(404, 'not_found', `No provider serves ${method} ${pathname}`),
  auth: () => genericError(401, 'unauthenticated', 'Authentication required'),
  reservedHeader: (header) =>
    genericError(
      400,
      'reserved_header',
      `The header ${header} is reserved by the Sideguard sandbox`,
    ),
  payloadTooLarge: (limitBytes) =>
    genericError(413, 'payload_too_large', `Request body larger than ${limitBytes} bytes`),
  rateLimited: (retryAfterSeconds) => ({
    ...genericError(429, 'rate_limited', 'Too many requests'),
    headers: { 'Retry-After': String(retryAfterSeconds) },
  }),
  internal: (status) => genericError(status, 'internal_error', 'Internal error'),
  badRequest: (message) => genericError(400, 'bad_request', message),
};

interface Observation {
  provider: string | null;
  operation: string | null;
  role: string | null;
  decision: RequestDecision;
  fault: FaultKind | null;
  writeOutcome: WriteOutcome;
  idempotencyKey: string | null;
  effectKey: string | null;
  receiptId: string | null;
}

type BodyResult =
  | { readonly kind: 'body'; readonly body: Buffer }
  | { readonly kind: 'too_large' }
  | { readonly kind: 'aborted' };

/** Builds the data-plane request handler for a runtime. */
export function createDataPlaneHandler(runtime: SandboxRuntime, origin: () => string) {
  return (request: IncomingMessage, response: ServerResponse): void => {
    handle(runtime, origin(), request, response).catch((error: unknown) => {
      // A bug, not an operating condition: answer 500 if we still can, and keep serving.
      process.stderr.write(
        `sideguard sandbox: data plane error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
      );
      if (!response.headersSent && !response.destroyed) {
        response.writeHead(500, { 'Content-Type': 'application/json' });
        response.end(
          JSON.stringify({ error: { code: 'internal_error', message: 'Internal error' } }),
        );
      }
    });
  };
}

async function handle(
  runtime: SandboxRuntime,
  origin: string,
  request: IncomingMessage,
  response: ServerResponse,
): Promise<void> {
  const startedMs = performance.now();
  const receivedAt = new Date(runtime.config.nowMs()).toISOString();
  const { sequence, token } = runtime.nextRequest();
  const method = request.method ?? 'GET';
  const rawUrl = request.url ?? '/';
  const queryStart = rawUrl.indexOf('?');
  const pathname = queryStart === -1 ? rawUrl : rawUrl.slice(0, queryStart);
  const rawQuery = queryStart === -1 ? '' : rawUrl.slice(queryStart + 1);
  const provider = runtime.providerForPath(pathname);
  const errors = provider?.errors ?? unroutedErrors;
  const requestId = provider?.requestId(token) ?? `req_${token}`;
  const observation: Observation = {
    provider: provider?.name ?? null,
    operation: null,
    role: null,
    decision: RequestDecision.served,
    fault: null,
    writeOutcome: WriteOutcome.notDispatched,
    idempotencyKey: null,
    effectKey: null,
    receiptId: null,
  };
  const epoch = runtime.epoch;
  /** A reset happened while this request was in flight: it belongs to the old world. */
  const outlivedReset = (): boolean => runtime.epoch !== epoch;
  let recorded = false;
  const record = (delivery: ResponseDelivery, status: number | null): void => {
    if (recorded || outlivedReset()) return;
    recorded = true;
    runtime.log.recordRequest({
      sequence,
      requestId,
      receivedAt,
      provider: observation.provider,
      operation: observation.operation,
      method,
      path: pathname.slice(0, 200),
      role: observation.role,
      decision: observation.decision,
      status,
      delivery,
      fault: observation.fault,
      writeOutcome: observation.writeOutcome,
      idempotencyKey: observation.idempotencyKey,
      effectKey: observation.effectKey,
      receiptId: observation.receiptId,
      durationMs: Math.round((performance.now() - startedMs) * 1000) / 1000,
    });
  };
  const send = (
    answer: ProviderResponse,
    decision: RequestDecision,
    extraHeaders: Record<string, string> = {},
    bodyText?: string,
  ): number | null => {
    observation.decision = decision;
    if (response.destroyed || response.headersSent) {
      record(ResponseDelivery.clientGone, null);
      return null;
    }
    const finalAnswer = provider?.finalize?.(answer, requestId) ?? answer;
    writeResponse(
      response,
      finalAnswer,
      provider?.requestIdHeader ?? 'Request-Id',
      requestId,
      extraHeaders,
      bodyText,
    );
    record(ResponseDelivery.sent, finalAnswer.status);
    return finalAnswer.status;
  };
  const drop = (decision: RequestDecision, delivery: ResponseDelivery): void => {
    observation.decision = decision;
    // Zero response bytes: the client cannot tell whether the write happened.
    request.socket.destroy();
    record(delivery, null);
  };

  for (const name of Object.keys(request.headers)) {
    if (name.startsWith(reservedHeaderPrefix)) {
      send(errors.reservedHeader(name), RequestDecision.reservedHeader);
      return;
    }
  }
  const route = provider === undefined ? undefined : findRoute(provider, method, pathname);
  if (provider === undefined || route === undefined) {
    send(errors.notFoundRoute(method, pathname), RequestDecision.routeNotFound);
    return;
  }
  const { operation, params } = route;
  observation.operation = operation.name;

  const body = await readBody(request, runtime.config.bodyLimitBytes);
  if (body.kind === 'too_large') {
    send(errors.payloadTooLarge(runtime.config.bodyLimitBytes), RequestDecision.payloadTooLarge, {
      Connection: 'close',
    });
    return;
  }
  if (body.kind === 'aborted') {
    observation.decision = RequestDecision.aborted;
    record(ResponseDelivery.clientGone, null);
    return;
  }

  const credential = provider.credential(request.headers);
  const identity = runtime.config.keys.decide(provider.name, credential, operation.name);
  if (identity.kind !== 'allowed') {
    const failure = identity.kind;
    if (identity.kind === 'forbidden') observation.role = identity.role;
    const decision =
      failure === 'missing'
        ? RequestDecision.unauthenticated
        : failure === 'unknown'
          ? RequestDecision.unknownKey
          : RequestDecision.forbidden;
    send(
      errors.auth(failure, {
        operation: operation.name,
        ...(credential === undefined ? {} : { credentialHint: credential }),
      }),
      decision,
    );
    return;
  }
  observation.role = identity.role;

  const query = decodePairs(rawQuery);
  if (query === undefined) {
    send(
      errors.badRequest('Invalid percent-encoding in the query string'),
      RequestDecision.invalid,
    );
    return;
  }
  const providerRequest: ProviderRequest = {
    method,
    pathname,
    params,
    query,
    contentType:
      (headerValue(request.headers, 'content-type') ?? '').split(';')[0]?.trim().toLowerCase() ??
      '',
    body: body.body,
    origin,
  };
  const parsed = operation.parse(providerRequest);
  if (parsed.kind === 'invalid') {
    send(parsed.response, RequestDecision.invalid);
    return;
  }
  observation.effectKey = parsed.effectKey;

  // The commit point: faults, idempotency, execution, persistence, delivery.
  const decision = runtime.decideFault(provider.name, operation.name);
  const fault: FaultSpec | null = decision.fault;
  observation.fault = fault?.kind ?? null;
  const trace = (delivery: ResponseDelivery, status: number | null): void => {
    if (outlivedReset()) return;
    runtime.log.recordTrace({
      sequence,
      requestId,
      provider: provider.name,
      operation: operation.name,
      requestIndex: decision.requestIndex,
      fault: fault?.kind ?? null,
      ruleIndex: decision.ruleIndex,
      writeOutcome: observation.writeOutcome,
      delivery,
      status,
    });
  };

  if (fault?.kind === 'rate_limit') {
    trace(
      ResponseDelivery.sent,
      send(errors.rateLimited(fault.retryAfterSeconds ?? 1), RequestDecision.faulted),
    );
    return;
  }
  if (fault?.kind === 'drop_before_dispatch') {
    drop(RequestDecision.faulted, ResponseDelivery.dropped);
    trace(ResponseDelivery.dropped, null);
    return;
  }
  if (fault?.kind === 'error_before_write') {
    trace(
      ResponseDelivery.sent,
      send(errors.internal(fault.status ?? 500), RequestDecision.faulted),
    );
    return;
  }

  // Idempotency (Stripe semantics): replay, reject a mismatch or an in-flight duplicate.
  const idempotency =
    operation.kind === 'write' && runtime.honoursIdempotency(provider)
      ? provider.idempotency
      : undefined;
  const idempotencyHeaders: Record<string, string> = {};
  let idempotencyId: string | undefined;
  let fingerprint = '';
  if (idempotency !== undefined) {
    const key = headerValue(request.headers, idempotency.header);
    if (key !== undefined) {
      observation.idempotencyKey = key;
      if (key.length === 0 || key.length > idempotency.maxKeyLength) {
        trace(ResponseDelivery.sent, send(idempotency.invalidKey(key), RequestDecision.invalid));
        return;
      }
      idempotencyHeaders['Idempotency-Key'] = key;
      // Keys are scoped to the API key that used them, as Stripe scopes them to an account.
      idempotencyId = `${hashApiKey(credential ?? '').slice(0, 16)}:${key}`;
      fingerprint = requestFingerprint(providerRequest);
      if (runtime.inFlight.has(`${provider.name}:${idempotencyId}`)) {
        trace(
          ResponseDelivery.sent,
          send(idempotency.inFlight(key), RequestDecision.idempotencyInFlight, idempotencyHeaders),
        );
        return;
      }
      const saved = runtime.store.get(provider.name, idempotencyCollection, idempotencyId);
      if (saved !== undefined) {
        if (saved.fingerprint !== fingerprint) {
          trace(
            ResponseDelivery.sent,
            send(
              idempotency.parametersMismatch(key),
              RequestDecision.idempotencyMismatch,
              idempotencyHeaders,
            ),
          );
          return;
        }
        const replay: ProviderResponse = { status: Number(saved.status) };
        const headers = {
          ...idempotencyHeaders,
          ...idempotency.replayHeaders(String(saved.request_id)),
        };
        await deliver(replay, RequestDecision.replayed, headers, String(saved.body));
        return;
      }
    }
  }

  const inFlightId = idempotencyId === undefined ? undefined : `${provider.name}:${idempotencyId}`;
  if (inFlightId !== undefined) runtime.inFlight.add(inFlightId);
  let answer: ProviderResponse;
  try {
    if (fault?.kind === 'latency') await runtime.sleep(fault.latencyMs);
    if (outlivedReset()) {
      request.socket.destroy();
      return;
    }
    if (fault?.kind === 'hold') {
      const held = runtime.hold({
        requestId,
        provider: provider.name,
        operation: operation.name,
        requestIndex: decision.requestIndex,
        idempotencyKey: observation.idempotencyKey,
        effectKey: observation.effectKey,
      });
      if ((await held.outcome) === 'aborted') {
        drop(RequestDecision.aborted, ResponseDelivery.dropped);
        trace(ResponseDelivery.dropped, null);
        return;
      }
    }
    const result = operation.execute(parsed.input, executeContext(runtime), providerRequest);
    answer = result.response;
    const changes = [...(result.write?.changes ?? [])];
    if (idempotencyId !== undefined) {
      // Execution began, so the response is saved, errors included (Stripe's rule).
      const finalAnswer = provider.finalize?.(answer, requestId) ?? answer;
      const saved: JsonRecord = {
        key: observation.idempotencyKey,
        fingerprint,
        status: finalAnswer.status,
        body: finalAnswer.body === undefined ? '' : JSON.stringify(finalAnswer.body),
        request_id: requestId,
        created_at: receivedAt,
      };
      changes.push({
        provider: provider.name,
        collection: idempotencyCollection,
        id: idempotencyId,
        value: saved,
      });
    }
    if (changes.length > 0) {
      const receipt =
        result.write === undefined
          ? undefined
          : {
              receiptId: runtime.store.nextReceiptId(),
              provider: provider.name,
              operation: operation.name,
              objectId: result.write.receipt.objectId,
              effectKey: observation.effectKey,
              ...(result.write.receipt.amountMinor === undefined
                ? {}
                : { amountMinor: result.write.receipt.amountMinor }),
              ...(result.write.receipt.currency === undefined
                ? {}
                : { currency: result.write.receipt.currency }),
              ...(result.write.receipt.details === undefined
                ? {}
                : { details: result.write.receipt.details }),
              idempotencyKey: observation.idempotencyKey,
              requestId,
              committedAt: new Date(runtime.config.nowMs()).toISOString(),
            };
      try {
        await runtime.store.commit(changes, receipt);
        if (receipt !== undefined) {
          observation.writeOutcome = WriteOutcome.committed;
          observation.receiptId = receipt.receiptId;
        }
      } catch (error) {
        observation.writeOutcome = WriteOutcome.unknown;
        process.stderr.write(
          `sideguard sandbox: failed to persist a write: ${error instanceof Error ? error.message : String(error)}\n`,
        );
        answer = errors.internal(500);
      }
    }
  } finally {
    if (inFlightId !== undefined) runtime.inFlight.delete(inFlightId);
  }
  await deliver(answer, RequestDecision.served, idempotencyHeaders);

  async function deliver(
    answer: ProviderResponse,
    served: RequestDecision,
    headers: Record<string, string>,
    bodyText?: string,
  ): Promise<void> {
    if (fault?.kind === 'error_after_write') {
      trace(
        ResponseDelivery.sent,
        send(errors.internal(fault.status ?? 500), RequestDecision.faulted, headers),
      );
      return;
    }
    if (fault?.kind === 'drop_after_write') {
      drop(RequestDecision.faulted, ResponseDelivery.dropped);
      trace(ResponseDelivery.dropped, null);
      return;
    }
    if (fault?.kind === 'hang_after_write') {
      observation.decision = RequestDecision.faulted;
      trace(ResponseDelivery.hung, null);
      await runtime.sleep(fault.hangMs ?? 60_000);
      drop(RequestDecision.faulted, ResponseDelivery.hung);
      return;
    }
    const status = send(answer, served, headers, bodyText);
    trace(
      response.destroyed && status === null ? ResponseDelivery.clientGone : ResponseDelivery.sent,
      status,
    );
  }
}

function findRoute(
  provider: ProviderDefinition,
  method: string,
  pathname: string,
):
  | { readonly operation: OperationDefinition; readonly params: Record<string, string> }
  | undefined {
  for (const operation of provider.operations) {
    if (operation.method !== method) continue;
    const params = matchPath(operation.path, pathname);
    if (params !== undefined) return { operation, params };
  }
  return undefined;
}

function executeContext(runtime: SandboxRuntime): ExecuteContext {
  return {
    get: (provider, collection, id) => runtime.store.get(provider, collection, id),
    list: (provider, collection) => runtime.store.list(provider, collection),
    newId: (prefix) =>
      `${prefix}_${hashToken(24, runtime.seed, prefix, runtime.store.nextIdSequence())}`,
    nowMs: runtime.config.nowMs,
  };
}

/** What "same parameters" means: method, path and the decoded, sorted form pairs (or raw body). */
function requestFingerprint(request: ProviderRequest): string {
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

function readBody(request: IncomingMessage, limitBytes: number): Promise<BodyResult> {
  const declared = Number(headerValue(request.headers, 'content-length') ?? '0');
  if (Number.isFinite(declared) && declared > limitBytes) {
    request.resume();
    return Promise.resolve({ kind: 'too_large' });
  }
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    request.on('data', (chunk: Buffer) => {
      if (settled) return;
      size += chunk.length;
      if (size > limitBytes) {
        settled = true;
        resolve({ kind: 'too_large' });
        return;
      }
      chunks.push(chunk);
    });
    request.on('end', () => {
      if (settled) return;
      settled = true;
      resolve({ kind: 'body', body: Buffer.concat(chunks) });
    });
    request.on('error', () => {
      if (settled) return;
      settled = true;
      resolve({ kind: 'aborted' });
    });
    request.on('close', () => {
      if (settled) return;
      settled = true;
      resolve(
        request.complete ? { kind: 'body', body: Buffer.concat(chunks) } : { kind: 'aborted' },
      );
    });
  });
}

function writeResponse(
  response: ServerResponse,
  answer: ProviderResponse,
  requestIdHeader: string,
  requestId: string,
  extraHeaders: Record<string, string>,
  bodyText?: string,
): void {
  const text = bodyText ?? (answer.body === undefined ? '' : JSON.stringify(answer.body));
  const headers: Record<string, string | number> = {
    [requestIdHeader]: requestId,
    ...answer.headers,
    ...extraHeaders,
  };
  if (text.length > 0) headers['Content-Type'] = 'application/json; charset=utf-8';
  headers['Content-Length'] = Buffer.byteLength(text);
  response.writeHead(answer.status, headers);
  response.end(text);
}
