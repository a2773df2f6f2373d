/**
 * `sideguard serve`'s listeners: the main port (health, upstreams mounted on a path prefix, and
 * whatever extensions mount — the MCP door's `/mcp`), one port per upstream that needs its own,
 * and extensions' own listeners (the approvals console's control port), each bound to the
 * configured host (loopback by default). Requests to an upstream's address are served by the HTTP
 * door on Node's own server (decision 110); everything else by Hono apps on `@hono/node-server`.
 */
import {
  createServer,
  type IncomingMessage,
  type RequestListener,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { getRequestListener, type HttpBindings } from '@hono/node-server';
import { type Context, Hono } from 'hono';
import type { GatewayRuntime } from './gateway-runtime.js';
import { type HttpCall, handleHttpCall } from './http-door.js';
import { serveNodeCall } from './http-node-door.js';
import { problemResponse } from './http-problems.js';
import { readIncomingWithin } from './http-request-reader.js';

/** A Hono app whose handlers can reach the raw Node request (`c.env.incoming`). */
export type GatewayApp = Hono<{ Bindings: HttpBindings }>;

/** One listener `serve` starts. */
export interface GatewayListener {
  /** For logs: `main`, `upstream:payments`, `console`. */
  readonly name: string;
  readonly host: string;
  /** 0 picks a free port. */
  readonly port: number;
  readonly app: { fetch(request: Request, env: HttpBindings): Response | Promise<Response> };
}

/**
 * What another part of the gateway adds to `serve` without editing it: routes on the main app
 * (mounted before the upstream prefixes), listeners of its own, and shutdown work.
 */
export interface GatewayExtension {
  readonly name: string;
  mount?(app: GatewayApp, runtime: GatewayRuntime): void | Promise<void>;
  listeners?(
    runtime: GatewayRuntime,
  ): readonly GatewayListener[] | Promise<readonly GatewayListener[]>;
  close?(): Promise<void>;
}

/** Options of {@link startGatewayServer}. */
export interface StartGatewayServerOptions {
  readonly extensions?: readonly GatewayExtension[];
  /** @default the config's `server.host` */
  readonly host?: string;
  /** The main port. @default the config's `server.port` */
  readonly port?: number;
  /** Ports of upstreams mounted on their own port, by upstream name. @default the config's */
  readonly upstreamPorts?: Readonly<Record<string, number>>;
}

/** A started gateway. */
export interface RunningGateway {
  /** `http://host:port` of the main listener. */
  readonly url: string;
  /** Where each HTTP upstream is reached: its own origin, or the main origin plus its prefix. */
  readonly upstreamUrls: Readonly<Record<string, string>>;
  /** Every listener with its bound URL. */
  readonly listeners: readonly { readonly name: string; readonly url: string }[];
  /** Stops accepting, closes listeners and extensions (not the runtime). Idempotent. */
  close(): Promise<void>;
}

/**
 * A Node request's target as `/path?query`, still encoded (an absolute-form target cut down; one
 * that does not parse is passed on unchanged, for the door to refuse as an invalid path).
 */
function originForm(raw: string): string {
  if (raw.startsWith('http://') || raw.startsWith('https://')) {
    try {
      const url = new URL(raw);
      return `${url.pathname}${url.search}`;
    } catch {
      return raw;
    }
  }
  return raw;
}

/** The raw request target (`/path?query`, still encoded) of a request Hono serves. */
function rawTarget(c: Context<{ Bindings: HttpBindings }>): string {
  return originForm(c.env?.incoming?.url ?? new URL(c.req.url).pathname);
}

/** An upstream's own port: every request goes to the Node door. */
function upstreamListener(runtime: GatewayRuntime, upstream: string): RequestListener {
  return (incoming, outgoing) =>
    void serveNodeCall(runtime, upstream, originForm(incoming.url ?? '/'), incoming, outgoing);
}

/**
 * The main port: a request under an upstream's prefix goes to the Node door (prefixes never
 * overlap each other or the gateway's own paths, which config compilation checks); the rest to
 * the Hono app, which also keeps the prefix routes for targets only its decoding matches.
 */
function mainListener(runtime: GatewayRuntime, app: GatewayApp): RequestListener {
  const hono = getRequestListener(app.fetch as never);
  const prefixes: { readonly prefix: string; readonly upstream: string }[] = [];
  for (const [name, upstream] of runtime.table.upstreams) {
    const config = upstream.config;
    if (config.kind === 'http' && 'prefix' in config.mount)
      prefixes.push({ prefix: config.mount.prefix, upstream: name });
  }
  return (incoming: IncomingMessage, outgoing: ServerResponse) => {
    const target = originForm(incoming.url ?? '/');
    for (const { prefix, upstream } of prefixes) {
      if (!target.startsWith(prefix)) continue;
      const next = target.charCodeAt(prefix.length);
      // Segment-safe: `/crm` serves `/crm`, `/crm/…` and `/crm?…`, never `/crmx`.
      if (Number.isNaN(next) || next === 47 || next === 63) {
        void serveNodeCall(
          runtime,
          upstream,
          target.slice(prefix.length) || '/',
          incoming,
          outgoing,
        );
        return;
      }
    }
    void hono(incoming, outgoing);
  };
}

/** The door's view of one request: the raw target and a bounded reader over the Node stream. */
function httpCall(
  c: Context<{ Bindings: HttpBindings }>,
  upstream: string,
  target: string,
): HttpCall {
  const incoming = c.env?.incoming;
  return {
    upstream,
    request: c.req.raw,
    target,
    ...(incoming === undefined
      ? {}
      : { readBody: (limit: number) => readIncomingWithin(incoming, limit) }),
  };
}

async function mainApp(
  runtime: GatewayRuntime,
  extensions: readonly GatewayExtension[],
): Promise<GatewayApp> {
  const app: GatewayApp = new Hono();
  app.get('/sideguard/health', (c) => c.json({ status: 'ok' }));
  for (const extension of extensions) await extension.mount?.(app, runtime);
  for (const [name, upstream] of runtime.table.upstreams) {
    const config = upstream.config;
    if (config.kind !== 'http' || !('prefix' in config.mount)) continue;
    const prefix = config.mount.prefix;
    const handler = (c: Context<{ Bindings: HttpBindings }>) =>
      handleHttpCall(runtime, httpCall(c, name, rawTarget(c).slice(prefix.length) || '/'));
    app.all(prefix, handler);
    app.all(`${prefix}/*`, handler);
  }
  app.all('*', () =>
    problemResponse(404, 'route_not_declared', 'No upstream is mounted at this path.', {
      decision: 'miss',
      hint: 'Use the base URL the operator gave you for the upstream (its prefix or its port).',
    }),
  );
  return app;
}

/** A listener as `serve` starts it: a Node request listener on a host and port. */
interface NodeListener {
  readonly name: string;
  readonly host: string;
  readonly port: number;
  readonly handle: RequestListener;
}

async function listen(listener: NodeListener): Promise<{ server: Server; url: string }> {
  const server = createServer(listener.handle);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(listener.port, listener.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return { server, url: `http://${host}:${address.port}` };
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeIdleConnections();
  });
}

/** Starts every listener of a runtime. On a failure, what was started is stopped again. */
export async function startGatewayServer(
  runtime: GatewayRuntime,
  options: StartGatewayServerOptions = {},
): Promise<RunningGateway> {
  const extensions = options.extensions ?? [];
  const host = options.host ?? runtime.table.server.host;
  const listeners: NodeListener[] = [
    {
      name: 'main',
      host,
      port: options.port ?? runtime.table.server.port,
      handle: mainListener(runtime, await mainApp(runtime, extensions)),
    },
  ];
  for (const [name, upstream] of runtime.table.upstreams) {
    const config = upstream.config;
    if (config.kind !== 'http' || !('port' in config.mount)) continue;
    const port = options.upstreamPorts?.[name] ?? config.mount.port;
    listeners.push({
      name: `upstream:${name}`,
      host,
      port,
      handle: upstreamListener(runtime, name),
    });
  }
  for (const extension of extensions) {
    for (const listener of (await extension.listeners?.(runtime)) ?? []) {
      const { app, ...address } = listener;
      listeners.push({ ...address, handle: getRequestListener(app.fetch as never) });
    }
  }
  const started: { name: string; server: Server; url: string }[] = [];
  const stop = async () => {
    await Promise.all(started.map((entry) => closeServer(entry.server)));
    for (const extension of extensions) await extension.close?.();
  };
  try {
    for (const listener of listeners)
      started.push({ name: listener.name, ...(await listen(listener)) });
  } catch (error) {
    await stop();
    throw error;
  }
  const main = started[0]?.url ?? '';
  const upstreamUrls: Record<string, string> = {};
  for (const [name, upstream] of runtime.table.upstreams) {
    const config = upstream.config;
    if (config.kind !== 'http') continue;
    upstreamUrls[name] =
      'prefix' in config.mount
        ? `${main}${config.mount.prefix}`
        : (started.find((entry) => entry.name === `upstream:${name}`)?.url ?? '');
  }
  let closing: Promise<void> | undefined;
  return {
    url: main,
    upstreamUrls,
    listeners: started.map(({ name, url }) => ({ name, url })),
    close: () => {
      closing ??= stop();
      return closing;
    },
  };
}
