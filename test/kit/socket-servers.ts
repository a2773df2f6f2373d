/**
 * Real sockets that misbehave on purpose, for the executor kit's tests: a raw TCP server that
 * reads whole HTTP requests and then answers, resets, hangs or closes; a server that accepts
 * and never speaks (a TLS handshake that hangs); a server that resets during the handshake; and
 * a port nobody listens on. Every server listens on 127.0.0.1, port 0, and records what it saw.
 */
import { EventEmitter, once } from 'node:events';
import { createServer, type Server, type Socket } from 'node:net';

/** What a raw server does after it has read a complete request. */
export type AfterRequest =
  /** Writes these bytes, then ends the connection (unless `keepOpen`). */
  | { readonly kind: 'respond'; readonly raw: string; readonly keepOpen?: boolean }
  /** Sends a TCP reset. */
  | { readonly kind: 'reset' }
  /** Closes the connection (FIN) without a byte of response. */
  | { readonly kind: 'close' }
  /** Never answers; the connection stays open until the client gives up. */
  | { readonly kind: 'hang' };

/** A running server and what it observed. */
export interface ObservedServer {
  readonly url: string;
  readonly port: number;
  /** Connections accepted. */
  readonly connections: number;
  /** Complete requests read (head + body), in arrival order. */
  readonly requests: readonly string[];
  /** Every byte received on every connection, in arrival order. */
  readonly received: readonly Buffer[];
  /** Emits `request` (text) when a complete request was read, `data` for any bytes. */
  readonly events: EventEmitter;
  /** Connections currently open. */
  openSockets(): number;
  close(): Promise<void>;
}

/** Parses just enough HTTP to know when one request (with its Content-Length body) is complete. */
function completeRequestLength(buffer: Buffer): number | undefined {
  const headEnd = buffer.indexOf('\r\n\r\n');
  if (headEnd === -1) return undefined;
  const head = buffer.subarray(0, headEnd).toString('latin1');
  const match = /\r\ncontent-length:\s*(\d+)/i.exec(head);
  const total = headEnd + 4 + (match?.[1] === undefined ? 0 : Number(match[1]));
  return buffer.length >= total ? total : undefined;
}

async function listen(
  onSocket: (socket: Socket, observed: MutableObservation) => void,
): Promise<ObservedServer> {
  const observed: MutableObservation = {
    connections: 0,
    requests: [],
    received: [],
    events: new EventEmitter(),
    sockets: new Set(),
  };
  const server: Server = createServer((socket) => {
    observed.connections += 1;
    observed.sockets.add(socket);
    socket.on('close', () => observed.sockets.delete(socket));
    socket.on('error', () => {});
    socket.on('data', (chunk: Buffer) => {
      observed.received.push(chunk);
      observed.events.emit('data', chunk);
    });
    onSocket(socket, observed);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no TCP address');
  return {
    url: `http://127.0.0.1:${address.port}`,
    port: address.port,
    get connections() {
      return observed.connections;
    },
    requests: observed.requests,
    received: observed.received,
    events: observed.events,
    openSockets: () => observed.sockets.size,
    close: async () => {
      for (const socket of observed.sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

interface MutableObservation {
  connections: number;
  readonly requests: string[];
  readonly received: Buffer[];
  readonly events: EventEmitter;
  readonly sockets: Set<Socket>;
}

/** A server that reads each request completely, then does `after` (chosen per request index). */
export function startRawHttpServer(
  after: AfterRequest | ((index: number) => AfterRequest),
): Promise<ObservedServer> {
  return listen((socket, observed) => {
    let buffer = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk]);
      const length = completeRequestLength(buffer);
      if (length === undefined) return;
      const text = buffer.subarray(0, length).toString('utf8');
      buffer = buffer.subarray(length);
      const index = observed.requests.length;
      observed.requests.push(text);
      const action = typeof after === 'function' ? after(index) : after;
      if (action.kind === 'respond' && action.keepOpen === true) socket.write(action.raw);
      else if (action.kind === 'respond') socket.end(action.raw);
      else if (action.kind === 'reset') socket.resetAndDestroy();
      else if (action.kind === 'close') socket.end();
      observed.events.emit('request', text);
    });
  });
}

/** A server that accepts connections and never sends a byte (a TLS handshake hangs on it). */
export function startSilentServer(): Promise<ObservedServer> {
  return listen(() => {});
}

/** A server that answers the first bytes it receives (a TLS ClientHello) with a TCP reset. */
export function startResetOnFirstBytesServer(): Promise<ObservedServer> {
  return listen((socket) => {
    socket.once('data', () => socket.resetAndDestroy());
  });
}

/** A loopback port with nothing listening on it (bound, then released). */
export async function closedPort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no TCP address');
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return address.port;
}

/** A raw HTTP/1.1 response with a JSON body. */
export function jsonResponse(
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): string {
  const text = JSON.stringify(body);
  const lines = [
    `HTTP/1.1 ${status} X`,
    'content-type: application/json',
    `content-length: ${Buffer.byteLength(text)}`,
    'connection: close',
    ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
  ];
  return `${lines.join('\r\n')}\r\n\r\n${text}`;
}
