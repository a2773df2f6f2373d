/**
 * The data plane: provider paths only. Each request passes reserved-header, route, size,
 * identity and validation checks, then meets its fault at the commit point, with Stripe-style
 * idempotency where the provider honours it. Every request and decision is observed. The steps
 * live in their own modules: auth, idempotency, fault delivery, commit.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { executeAndCommit } from './commit-write.js';
import { checkIdentity, reservedHeaderIn } from './data-plane-auth.js';
import { checkIdempotency, markInFlight } from './data-plane-idempotency.js';
import {
  type CommitPoint,
  deliverAnswer,
  faultBeforeExecution,
  sendTraced,
  waitBeforeWrite,
} from './fault-delivery.js';
import { decodePairs } from './form-encoding.js';
import { RequestDecision, ResponseDelivery } from './observations.js';
import { headerValue, matchPath } from './provider-kit.js';
import { readBody } from './request-body.js';
import { RequestExchange } from './request-exchange.js';
import type { SandboxRuntime } from './sandbox-runtime.js';
import type {
  OperationDefinition,
  ProviderDefinition,
  ProviderErrorShapes,
  ProviderRequest,
  ProviderResponse,
} from './sandbox-types.js';

export { reservedHeaderPrefix } from './data-plane-auth.js';

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
  const rawPath = request.url ?? '/';
  const provider = runtime.providerForPath(rawPath.split('?')[0] ?? rawPath);
  const exchange = new RequestExchange(runtime, request, response, provider);
  try {
    await serveExchange(runtime, origin, exchange);
  } finally {
    exchange.finish();
  }
}

/** A request that passed every check before the commit point. */
interface AdmittedRequest {
  readonly provider: ProviderDefinition;
  readonly operation: OperationDefinition;
  readonly input: unknown;
  readonly request: ProviderRequest;
  /** The API key as sent (idempotency keys are scoped to it). */
  readonly credential: string | undefined;
}

async function serveExchange(
  runtime: SandboxRuntime,
  origin: string,
  exchange: RequestExchange,
): Promise<void> {
  const errors = exchange.provider?.errors ?? unroutedErrors;
  const admitted = await admit(runtime, origin, exchange, errors);
  if (admitted !== undefined) await atCommitPoint(runtime, exchange, errors, admitted);
}

/**
 * Reserved headers, route, body size, identity, query encoding and the operation's own
 * validation, in that order; answers the first failure and returns `undefined`.
 */
async function admit(
  runtime: SandboxRuntime,
  origin: string,
  exchange: RequestExchange,
  errors: ProviderErrorShapes,
): Promise<AdmittedRequest | undefined> {
  const { observation, method, pathname, request, provider } = exchange;
  const reserved = reservedHeaderIn(request.headers);
  if (reserved !== undefined) {
    exchange.send(errors.reservedHeader(reserved), RequestDecision.reservedHeader);
    return undefined;
  }
  const route = provider === undefined ? undefined : findRoute(provider, method, pathname);
  if (provider === undefined || route === undefined) {
    exchange.send(errors.notFoundRoute(method, pathname), RequestDecision.routeNotFound);
    return undefined;
  }
  const { operation, params } = route;
  observation.operation = operation.name;

  const body = await readBody(request, runtime.config.bodyLimitBytes);
  if (body.kind === 'too_large') {
    exchange.send(
      errors.payloadTooLarge(runtime.config.bodyLimitBytes),
      RequestDecision.payloadTooLarge,
      { Connection: 'close' },
    );
    return undefined;
  }
  if (body.kind === 'aborted') {
    observation.decision = RequestDecision.aborted;
    exchange.record(ResponseDelivery.clientGone, null);
    return undefined;
  }

  const identity = checkIdentity(runtime, provider, operation.name, request.headers);
  observation.role = identity.role;
  if (identity.kind === 'rejected') {
    exchange.send(identity.response, identity.decision);
    return undefined;
  }

  const query = decodePairs(exchange.rawQuery);
  if (query === undefined) {
    exchange.send(
      errors.badRequest('Invalid percent-encoding in the query string'),
      RequestDecision.invalid,
    );
    return undefined;
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
    exchange.send(parsed.response, RequestDecision.invalid);
    return undefined;
  }
  observation.effectKey = parsed.effectKey;
  // The key sent is evidence even where the provider ignores it (that is what a test looks at).
  if (provider.idempotency !== undefined && operation.kind === 'write') {
    observation.idempotencyKey = headerValue(request.headers, provider.idempotency.header) ?? null;
  }
  return {
    provider,
    operation,
    input: parsed.input,
    request: providerRequest,
    credential: identity.credential,
  };
}

/** The commit point: faults, idempotency, execution, persistence, delivery. */
async function atCommitPoint(
  runtime: SandboxRuntime,
  exchange: RequestExchange,
  errors: ProviderErrorShapes,
  admitted: AdmittedRequest,
): Promise<void> {
  const { provider, operation } = admitted;
  const { observation } = exchange;
  const decision = runtime.decideFault(provider.name, operation.name);
  observation.fault = decision.fault?.kind ?? null;
  const commit: CommitPoint = {
    runtime,
    exchange,
    errors,
    fault: decision.fault,
    point: { requestIndex: decision.requestIndex, ruleIndex: decision.ruleIndex },
  };
  if (faultBeforeExecution(commit)) return;

  const gate = checkIdempotency(
    runtime,
    provider,
    operation,
    exchange.request.headers,
    admitted.credential,
    admitted.request,
  );
  if (gate.kind === 'refuse') {
    sendTraced(commit, gate.response, gate.decision, gate.headers);
    return;
  }
  if (gate.kind === 'replay') {
    const { response, headers, bodyText } = gate;
    await deliverAnswer(commit, response, RequestDecision.replayed, headers, bodyText);
    return;
  }

  const release = markInFlight(runtime, provider, gate.scope);
  let answer: ProviderResponse;
  try {
    const proceed = await waitBeforeWrite(commit, {
      provider: provider.name,
      operation: operation.name,
      idempotencyKey: observation.idempotencyKey,
      effectKey: observation.effectKey,
    });
    if (!proceed) return;
    answer = await executeAndCommit(
      runtime,
      exchange,
      provider,
      operation,
      admitted.input,
      admitted.request,
      gate.scope,
    );
  } finally {
    release();
  }
  await deliverAnswer(commit, answer, RequestDecision.served, gate.scope?.headers ?? {});
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
