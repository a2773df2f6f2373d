/**
 * Servers that are not a healthy PostgreSQL, on real loopback sockets: one that accepts and
 * never answers, one that answers with other bytes, and a proxy in front of a real PostgreSQL
 * that can freeze (a partition: nothing forwarded, no FIN either) or deliver a backend's
 * termination exactly while the pool hands the new connection over.
 */
import { once } from 'node:events';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer, type Server, type Socket, connect as tcpConnect } from 'node:net';
import type pg from 'pg';

/** A listening test server and how to stop it. */
export interface TestServer {
  readonly port: number;
  close(): Promise<void>;
}

async function listen(server: Server | HttpServer, sockets: Set<Socket>): Promise<TestServer> {
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return {
    port: address.port,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Accepts connections and never sends a byte (a frozen server or a black-holed port). */
export function startSilentServer(): Promise<TestServer> {
  return listen(createServer(), new Set());
}

/** Answers every connection with `bytes` and keeps it open (another protocol on the port). */
export function startBytesServer(bytes: string): Promise<TestServer> {
  const server = createServer((socket) => socket.write(bytes));
  return listen(server, new Set());
}

/** A Node HTTP server: answers the startup packet with a 400 and closes the connection. */
export function startHttpServer(): Promise<TestServer> {
  return listen(
    createHttpServer((_request, response) => response.end('not postgres')),
    new Set(),
  );
}

/** A proxy in front of a real PostgreSQL. */
export interface PostgresProxy extends TestServer {
  /** `url` with its host and port replaced by the proxy's. */
  readonly url: string;
  /** Stops forwarding in both directions, for every connection, old and new, until `thaw`. */
  freeze(): void;
  /** Forwards again; connections whose client left during the freeze are closed upstream. */
  thaw(): void;
  /**
   * The next new connection's backend is terminated (`pg_terminate_backend`, from `admin`) as
   * soon as it is ready, and the client receives its ReadyForQuery and the server's 57P01 in one
   * write: the driver reads the error while the pool is handing the connection over.
   * Resolves once that was delivered.
   */
  terminateNextAtHandOver(): Promise<void>;
}

interface Link {
  readonly client: Socket;
  readonly upstream: Socket;
  clientGone: boolean;
}

/** Parses server messages (type byte + int32 length) until the first ReadyForQuery. */
function startupEnd(buffer: Buffer): { readyAt: number; pid: number | undefined } | undefined {
  let offset = 0;
  let pid: number | undefined;
  while (offset + 5 <= buffer.length) {
    const type = String.fromCharCode(buffer[offset] as number);
    const length = buffer.readInt32BE(offset + 1);
    if (offset + 1 + length > buffer.length) return undefined;
    if (type === 'K') pid = buffer.readInt32BE(offset + 5);
    if (type === 'Z') return { readyAt: offset + 1 + length, pid };
    offset += 1 + length;
  }
  return undefined;
}

/** Starts a proxy to the PostgreSQL at `url`; `admin` terminates backends when asked. */
export async function startPostgresProxy(url: string, admin: pg.Client): Promise<PostgresProxy> {
  const target = new URL(url);
  const links = new Set<Link>();
  let frozen = false;
  let armed: (() => void) | undefined;

  const forward = (from: Socket, to: Socket, link: Link) => {
    from.on('data', (chunk) => {
      if (!to.destroyed) to.write(chunk);
    });
    from.on('close', () => {
      if (from === link.client) link.clientGone = true;
      if (!frozen) to.destroy();
    });
  };

  /** Holds the server's startup answer, terminates the backend, sends both in one write. */
  const terminateAtHandOver = (link: Link, delivered: () => void) => {
    let held = Buffer.alloc(0);
    const onStartup = (chunk: Buffer) => {
      held = Buffer.concat([held, chunk]);
      const end = startupEnd(held);
      if (end === undefined) return;
      link.upstream.off('data', onStartup);
      const after: Buffer[] = [];
      link.upstream.on('data', (more: Buffer) => after.push(more));
      link.upstream.once('close', () => {
        link.client.end(Buffer.concat([held, ...after]));
        delivered();
      });
      void admin.query('SELECT pg_terminate_backend($1)', [end.pid]);
    };
    link.upstream.on('data', onStartup);
    link.client.on('data', (chunk) => link.upstream.write(chunk));
  };

  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    client.on('error', () => undefined);
    const upstream = tcpConnect(Number(target.port || 5432), target.hostname);
    upstream.on('error', () => undefined);
    const link: Link = { client, upstream, clientGone: false };
    links.add(link);
    client.on('close', () => links.delete(link));
    if (frozen) {
      client.pause();
      upstream.pause();
    }
    const delivered = armed;
    armed = undefined;
    if (delivered !== undefined) {
      terminateAtHandOver(link, delivered);
      return;
    }
    forward(client, upstream, link);
    forward(upstream, client, link);
  });
  const base = await listen(server, sockets);
  const proxied = new URL(url);
  proxied.hostname = '127.0.0.1';
  proxied.port = String(base.port);
  return {
    ...base,
    url: proxied.toString(),
    freeze() {
      frozen = true;
      for (const { client, upstream } of links) {
        client.pause();
        upstream.pause();
      }
    },
    thaw() {
      frozen = false;
      for (const link of links) {
        if (link.clientGone || link.client.destroyed) link.upstream.destroy();
        link.client.resume();
        link.upstream.resume();
      }
    },
    terminateNextAtHandOver() {
      return new Promise<void>((resolve) => {
        armed = resolve;
      });
    },
    async close() {
      for (const { client, upstream } of links) {
        client.destroy();
        upstream.destroy();
      }
      await base.close();
    },
  };
}
