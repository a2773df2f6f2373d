/**
 * The control plane: a private JSON API (own port or Unix socket, bearer token) to reset,
 * export, snapshot, set faults, release held requests and read observations.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { SideguardError } from '../core/errors.js';
import { type FaultPlan, parseFaultPlan } from './fault-plan.js';
import { headerValue, matchPath } from './provider-kit.js';
import type { SandboxRuntime } from './sandbox-runtime.js';

/** Largest control-plane request body (a fault plan), in bytes. @default 1 MiB */
export const controlBodyLimitBytes = 1024 * 1024;

/** What the control plane needs besides the runtime. */
export interface ControlPlaneConfig {
  readonly token: string;
  readonly dataUrl: () => string;
  /** The plan given at start; reset restores it. */
  readonly initialFaultPlan: FaultPlan | null;
}

interface ControlAnswer {
  readonly status: number;
  readonly body: unknown;
}

type ControlRoute = {
  readonly method: string;
  readonly path: string;
  readonly run: (
    params: Record<string, string>,
    body: unknown,
  ) => Promise<ControlAnswer> | ControlAnswer;
};

const ok = (body: unknown, status = 200): ControlAnswer => ({ status, body });
const fail = (status: number, code: string, message: string, data?: unknown): ControlAnswer => ({
  status,
  body: { error: { code, message, ...(data === undefined ? {} : { data }) } },
});

/** Builds the control-plane handler. */
export function createControlPlaneHandler(runtime: SandboxRuntime, config: ControlPlaneConfig) {
  const tokenDigest = createHash('sha256').update(config.token).digest();
  const routes: readonly ControlRoute[] = [
    {
      method: 'GET',
      path: '/health',
      run: () =>
        ok({
          status: 'ok',
          seed: runtime.seed,
          dataUrl: config.dataUrl(),
          providers: [...runtime.providers.keys()],
          idempotency: Object.fromEntries(
            [...runtime.providers.values()]
              .filter((provider) => provider.idempotency !== undefined)
              .map((provider) => [
                provider.name,
                runtime.honoursIdempotency(provider) ? 'honour' : 'ignore',
              ]),
          ),
          faultPlanActive: runtime.currentFaultPlan() !== null,
          heldCount: runtime.heldRequests().length,
        }),
    },
    {
      method: 'POST',
      path: '/reset',
      run: async () => {
        await runtime.reset(config.initialFaultPlan);
        return ok({ status: 'reset', seed: runtime.seed, digest: runtime.digest() });
      },
    },
    { method: 'GET', path: '/export', run: () => ok(runtime.export()) },
    { method: 'GET', path: '/observations', run: () => ok(runtime.observations()) },
    {
      method: 'GET',
      path: '/state/digest',
      run: () => ok({ digest: runtime.digest(), writeCount: runtime.store.receipts().length }),
    },
    {
      method: 'GET',
      path: '/snapshots',
      run: async () => ok({ snapshots: await runtime.store.listSnapshots() }),
    },
    {
      method: 'POST',
      path: '/snapshots/:name',
      run: async ({ name = '' }) => {
        await runtime.store.saveSnapshot(name);
        return ok({ name, digest: runtime.digest() }, 201);
      },
    },
    {
      method: 'POST',
      path: '/snapshots/:name/restore',
      run: async ({ name = '' }) => {
        await runtime.store.restoreSnapshot(name);
        return ok({ name, digest: runtime.digest() });
      },
    },
    { method: 'GET', path: '/faults', run: () => ok({ plan: runtime.currentFaultPlan() }) },
    {
      method: 'PUT',
      path: '/faults',
      run: (_params, body) => {
        const plan = parseFaultPlan(body);
        runtime.setFaultPlan(plan);
        return ok({ plan });
      },
    },
    {
      method: 'DELETE',
      path: '/faults',
      run: () => {
        runtime.setFaultPlan(null);
        return ok({ plan: null });
      },
    },
    { method: 'GET', path: '/held', run: () => ok({ held: runtime.heldRequests() }) },
    {
      method: 'POST',
      path: '/held/release-all',
      run: () => ok({ released: runtime.releaseAll() }),
    },
    {
      method: 'POST',
      path: '/held/:holdId/release',
      run: ({ holdId = '' }) =>
        runtime.release(holdId)
          ? ok({ released: holdId })
          : fail(404, 'hold_not_found', `No held request ${JSON.stringify(holdId)} is waiting`),
    },
  ];

  return (request: IncomingMessage, response: ServerResponse): void => {
    serve(request, routes, tokenDigest)
      .then((answer) => send(response, answer))
      .catch((error: unknown) => {
        const answer =
          error instanceof SideguardError
            ? fail(400, error.code, error.message, error.data)
            : fail(500, 'internal_error', error instanceof Error ? error.message : String(error));
        send(response, answer);
      });
  };
}

async function serve(
  request: IncomingMessage,
  routes: readonly ControlRoute[],
  tokenDigest: Buffer,
): Promise<ControlAnswer> {
  const authorization = headerValue(request.headers, 'authorization') ?? '';
  const presented = /^Bearer\s+(\S+)$/i.exec(authorization)?.[1];
  const presentedDigest = createHash('sha256')
    .update(presented ?? '')
    .digest();
  if (presented === undefined || !timingSafeEqual(presentedDigest, tokenDigest)) {
    request.resume();
    return fail(
      401,
      'unauthorized',
      'A valid control token is required (Authorization: Bearer <token>)',
    );
  }
  const pathname = (request.url ?? '/').split('?')[0] ?? '/';
  let matched: { route: ControlRoute; params: Record<string, string> } | undefined;
  for (const route of routes) {
    if (route.method !== request.method) continue;
    const params = matchPath(route.path, pathname);
    if (params !== undefined) {
      matched = { route, params };
      break;
    }
  }
  if (matched === undefined) {
    request.resume();
    return fail(404, 'not_found', `No control route ${request.method ?? ''} ${pathname}`);
  }
  const text = await readText(request);
  if (text === undefined)
    return fail(
      413,
      'payload_too_large',
      `Control request bodies are limited to ${controlBodyLimitBytes} bytes`,
    );
  let body: unknown;
  if (text.length > 0) {
    try {
      body = JSON.parse(text);
    } catch {
      return fail(400, 'invalid_json', 'The request body is not JSON');
    }
  }
  return matched.route.run(matched.params, body);
}

function readText(request: IncomingMessage): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= controlBodyLimitBytes) chunks.push(chunk);
    });
    request.on('end', () =>
      resolve(size > controlBodyLimitBytes ? undefined : Buffer.concat(chunks).toString('utf8')),
    );
    request.on('error', reject);
  });
}

function send(response: ServerResponse, answer: ControlAnswer): void {
  if (response.headersSent || response.destroyed) return;
  const text = JSON.stringify(answer.body);
  const headers: Record<string, string | number> = {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(text),
    'Cache-Control': 'no-store',
  };
  if (answer.status === 401)
    headers['WWW-Authenticate'] = 'Bearer realm="sideguard-sandbox-control"';
  response.writeHead(answer.status, headers);
  response.end(text);
}
