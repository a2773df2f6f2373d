/**
 * `sideguard serve`'s listeners: the main port (health, upstreams mounted on a path prefix, and
 * whatever extensions mount — the MCP door's `/mcp`), one port per upstream that needs its own,
 * and extensions' own listeners (the approvals console's control port). Each listener is a Hono
 * app on `@hono/node-server`, bound to the configured host (loopback by default).
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createAdaptorServer, type HttpBindings } from '@hono/node-server';
import { type Context, Hono } from 'hono';
import type { GatewayRuntime } from './gateway-runtime.js';
import { type HttpCall, handleHttpCall } from './http-door.js';
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

/** The raw request target (`/path?query`, still encoded) of a Node request. */
function rawTarget(c: Context<{ Bindings: HttpBindings }>): string {
  const raw = c.env?.incoming?.url ?? new URL(c.req.url).pathname;
  if (raw.startsWith('http://') || raw.startsWith('https://')) {
    const url = new URL(raw);
    return `${url.pathname}${url.search}`;
  }
  return raw;
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

function upstreamApp(runtime: GatewayRuntime, upstream: string): GatewayApp {
  const app: GatewayApp = new Hono();
  app.all('*', (c) => handleHttpCall(runtime, httpCall(c, upstream, rawTarget(c))));
  return app;
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

async function listen(listener: GatewayListener): Promise<{ server: Server; url: string }> {
  const server = createAdaptorServer({ fetch: listener.app.fetch as never }) as Server;
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
  const listeners: GatewayListener[] = [
    {
      name: 'main',
      host,
      port: options.port ?? runtime.table.server.port,
      app: await mainApp(runtime, extensions),
    },
  ];
  for (const [name, upstream] of runtime.table.upstreams) {
    const config = upstream.config;
    if (config.kind !== 'http' || !('port' in config.mount)) continue;
    const port = options.upstreamPorts?.[name] ?? config.mount.port;
    listeners.push({ name: `upstream:${name}`, host, port, app: upstreamApp(runtime, name) });
  }
  for (const extension of extensions)
    listeners.push(...((await extension.listeners?.(runtime)) ?? []));
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
