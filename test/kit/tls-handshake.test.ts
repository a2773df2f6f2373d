/**
 * "Not sent" stays true: a call answered "not sent" while its TLS handshake was stalled must not
 * write the request when the handshake completes later. A gate between client and a real HTTPS
 * server (certificate made by openssl for this run) holds the handshake until the test opens it.
 */
import { execFileSync } from 'node:child_process';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer as createHttpsServer, type Server } from 'node:https';
import { connect, createServer as createTcpServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createExecutorTransport, isTransportError } from 'sideguard/executor-kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

function selfSignedCertificate(): { key: string; cert: string } {
  const dir = mkdtempSync(join(tmpdir(), 'sideguard-kit-tls-'));
  try {
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-days',
        '2',
        '-subj',
        '/CN=localhost',
        '-addext',
        'subjectAltName=IP:127.0.0.1',
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
      ],
      { stdio: 'ignore' },
    );
    return {
      key: readFileSync(join(dir, 'key.pem'), 'utf8'),
      cert: readFileSync(join(dir, 'cert.pem'), 'utf8'),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A TCP gate in front of `port`: client bytes are held until `open()`. */
async function startGate(port: number) {
  const held: Buffer[] = [];
  let upstream: Socket | undefined;
  let opened = false;
  const server = createTcpServer((client) => {
    client.on('error', () => {});
    upstream = connect(port, '127.0.0.1');
    upstream.on('error', () => {});
    upstream.pipe(client);
    // Whatever the client wrote has been forwarded before its close: end the upstream after it.
    client.on('close', () => upstream?.end());
    client.on('data', (chunk: Buffer) => {
      if (opened) upstream?.write(chunk);
      else held.push(chunk);
      server.emit('client-data');
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    port: (server.address() as { port: number }).port,
    firstBytes: () => once(server, 'client-data'),
    open() {
      opened = true;
      for (const chunk of held.splice(0)) upstream?.write(chunk);
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('TLS', () => {
  let https: Server;
  let httpsPort = 0;
  let cert = '';
  const requests: string[] = [];
  const serverSockets = new Set<Socket>();

  beforeAll(async () => {
    const credentials = selfSignedCertificate();
    cert = credentials.cert;
    https = createHttpsServer(credentials, (request, response) => {
      requests.push(`${request.method} ${request.url}`);
      response.end('{"ok":true}');
    });
    https.on('connection', (socket: Socket) => {
      serverSockets.add(socket);
      socket.on('close', () => serverSockets.delete(socket));
    });
    https.listen(0, '127.0.0.1');
    await once(https, 'listening');
    httpsPort = (https.address() as { port: number }).port;
  });
  afterAll(async () => {
    for (const socket of serverSockets) socket.destroy();
    await new Promise<void>((resolve) => https.close(() => resolve()));
  });

  it('sends over https with a trusted certificate', async () => {
    const kit = createExecutorTransport({ tls: { ca: cert } });
    try {
      const response = await kit.request({ url: `https://127.0.0.1:${httpsPort}/v1/ping` });
      expect(response.status).toBe(200);
      expect(requests).toContain('GET /v1/ping');
    } finally {
      await kit.close();
    }
  });

  it('an untrusted certificate is tls_failure, not sent', async () => {
    const before = requests.length;
    const kit = createExecutorTransport();
    try {
      const error = await kit
        .request({ url: `https://127.0.0.1:${httpsPort}/v1/refunds`, method: 'POST', body: 'a=1' })
        .catch((caught: unknown) => caught);
      expect(error).toMatchObject({ code: 'transport_not_sent', failure: 'tls_failure' });
      expect(requests.length).toBe(before);
    } finally {
      await kit.close();
    }
  });

  it('a call answered "not sent" never writes its request when the stalled handshake completes', async () => {
    const before = requests.length;
    const gate = await startGate(httpsPort);
    const kit = createExecutorTransport({ tls: { ca: cert } });
    const connected = new Promise<void>((resolve) => {
      const onConnected = () => {
        unsubscribe('undici:client:connected', onConnected);
        resolve();
      };
      subscribe('undici:client:connected', onConnected);
    });
    try {
      const serverSocket = once(https, 'connection');
      const controller = new AbortController();
      const call = kit.request({
        url: `https://127.0.0.1:${gate.port}/v1/refunds`,
        method: 'POST',
        body: 'charge=ch_1',
        signal: controller.signal,
        onSent: () => requests.push('kit reported the request as sent'),
      });
      await gate.firstBytes();
      controller.abort();
      const error = await call.catch((caught: unknown) => caught);
      expect(isTransportError(error)).toBe(true);
      expect(error).toMatchObject({ sent: false, failure: 'aborted_before_send' });

      // Let the handshake finish: undici now holds a TLS socket, the one moment it could write.
      const [socket] = (await serverSocket) as [Socket];
      gate.open();
      await connected;
      if (!socket.destroyed) await once(socket, 'close');
      expect(requests.length).toBe(before);
    } finally {
      await kit.close();
      await gate.close();
    }
  });
});
