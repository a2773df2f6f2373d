/**
 * The executor kit's transport against real sockets: every way a request can fail is classified
 * by whether a byte of it was written, proven from the server's side (what it received), and no
 * request is ever sent twice.
 */
import { once } from 'node:events';
import { createServer } from 'node:http';
import {
  classifyTransportError,
  createExecutorTransport,
  type ExecutorTransport,
  isTransportError,
  TransportError,
} from 'sideguard/executor-kit';
import { afterEach, describe, expect, it } from 'vitest';
import {
  closedPort,
  jsonResponse,
  type ObservedServer,
  startRawHttpServer,
  startResetOnFirstBytesServer,
  startSilentServer,
} from './socket-servers.js';

const open: { close(): Promise<void> }[] = [];
function track<T extends { close(): Promise<void> }>(value: T): T {
  open.push(value);
  return value;
}
afterEach(async () => {
  for (const item of open.splice(0).reverse()) await item.close();
});

const transport = (config: Parameters<typeof createExecutorTransport>[0] = {}): ExecutorTransport =>
  track(createExecutorTransport(config));
const server = async (start: Promise<ObservedServer>): Promise<ObservedServer> =>
  track(await start);

const refundBody = 'charge=ch_1&amount=500';
const post = (url: string, extra: { signal?: AbortSignal; timeoutMs?: number } = {}) => ({
  url: `${url}/v1/refunds`,
  method: 'POST' as const,
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
  body: refundBody,
  ...extra,
});

/** Runs the call and returns what it was rejected with. */
async function failure(call: Promise<unknown>): Promise<TransportError> {
  const error = await call.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(isTransportError(error)).toBe(true);
  expect(error).toBeInstanceOf(TransportError);
  return error as TransportError;
}

const sawRequestBytes = (observed: ObservedServer): boolean =>
  Buffer.concat(observed.received).includes('POST /v1/refunds');

describe('failures before anything was sent are failed_known', () => {
  it('a closed port is connection_refused', async () => {
    const port = await closedPort();
    const error = await failure(transport().request(post(`http://127.0.0.1:${port}`)));
    expect(error).toMatchObject({
      code: 'transport_not_sent',
      sent: false,
      failure: 'connection_refused',
      data: { sent: false, failure: 'connection_refused', errorCode: 'ECONNREFUSED' },
    });
    expect(classifyTransportError(error)).toEqual({
      kind: 'failed_known',
      reason: 'transport_connection_refused',
    });
  });

  it('an unresolvable host name is dns_failure', async () => {
    const error = await failure(transport().request(post('http://nothing.invalid')));
    expect(error).toMatchObject({ code: 'transport_not_sent', failure: 'dns_failure' });
    expect(classifyTransportError(error).kind).toBe('failed_known');
  });

  it('a TLS handshake against a plain HTTP server is tls_failure, and the server gets no request', async () => {
    let requests = 0;
    const plain = createServer(() => {
      requests += 1;
    });
    plain.listen(0, '127.0.0.1');
    await once(plain, 'listening');
    track({ close: () => new Promise<void>((resolve) => plain.close(() => resolve())) });
    const { port } = plain.address() as { port: number };
    const error = await failure(transport().request(post(`https://127.0.0.1:${port}`)));
    expect(error).toMatchObject({ code: 'transport_not_sent', failure: 'tls_failure' });
    expect(requests).toBe(0);
  });

  it('a reset during the TLS handshake is not sent, although its code is ECONNRESET', async () => {
    const resetting = await server(startResetOnFirstBytesServer());
    const error = await failure(transport().request(post(`https://127.0.0.1:${resetting.port}`)));
    expect(error).toMatchObject({ code: 'transport_not_sent', sent: false });
    expect((error.data as { errorCode?: string }).errorCode).toBe('ECONNRESET');
    expect(sawRequestBytes(resetting)).toBe(false);
  });

  it('an abort while the TLS handshake hangs is aborted_before_send, and no request byte is ever written', async () => {
    const silent = await server(startSilentServer());
    const controller = new AbortController();
    const kit = transport();
    const call = kit.request(
      post(`https://127.0.0.1:${silent.port}`, { signal: controller.signal }),
    );
    await once(silent.events, 'data'); // the ClientHello: connecting, nothing of the request yet
    controller.abort();
    const error = await failure(call);
    expect(error).toMatchObject({ code: 'transport_not_sent', failure: 'aborted_before_send' });
    expect(classifyTransportError(error)).toEqual({
      kind: 'failed_known',
      reason: 'transport_aborted_before_send',
    });
    await kit.close();
    expect(Buffer.concat(silent.received)[0]).toBe(0x16); // a TLS handshake record
    expect(sawRequestBytes(silent)).toBe(false);
  });

  it('a timeout while connecting is timeout_before_send', async () => {
    const silent = await server(startSilentServer());
    const error = await failure(
      transport().request(post(`https://127.0.0.1:${silent.port}`, { timeoutMs: 50 })),
    );
    expect(error).toMatchObject({ code: 'transport_not_sent', failure: 'timeout_before_send' });
    expect(sawRequestBytes(silent)).toBe(false);
  });

  it('a connect timeout is connect_timeout', async () => {
    const silent = await server(startSilentServer());
    const error = await failure(
      transport({ connectTimeoutMs: 50, timeoutMs: 60_000 }).request(
        post(`https://127.0.0.1:${silent.port}`),
      ),
    );
    expect(error).toMatchObject({ code: 'transport_not_sent', failure: 'connect_timeout' });
  });

  it('a signal aborted before the call opens no connection at all', async () => {
    const raw = await server(startRawHttpServer({ kind: 'hang' }));
    const error = await failure(
      transport().request(post(raw.url, { signal: AbortSignal.abort() })),
    );
    expect(error).toMatchObject({ code: 'transport_not_sent', failure: 'aborted_before_send' });
    expect(raw.connections).toBe(0);
  });
});

describe('failures after the request was written are failed_unknown', () => {
  it('a server that resets after reading the request: connection_reset', async () => {
    const raw = await server(startRawHttpServer({ kind: 'reset' }));
    const error = await failure(transport().request(post(raw.url)));
    expect(error).toMatchObject({
      code: 'transport_outcome_unknown',
      sent: true,
      failure: 'connection_reset',
    });
    expect(classifyTransportError(error)).toEqual({
      kind: 'failed_unknown',
      reason: 'transport_connection_reset',
    });
    expect(raw.requests).toHaveLength(1);
    expect(raw.requests[0]).toContain(refundBody);
  });

  it('a server that accepts and hangs: timeout', async () => {
    const raw = await server(startRawHttpServer({ kind: 'hang' }));
    const error = await failure(transport().request(post(raw.url, { timeoutMs: 100 })));
    expect(error).toMatchObject({ code: 'transport_outcome_unknown', failure: 'timeout' });
    expect(raw.requests).toHaveLength(1);
  });

  it('a server that closes after reading the request, with no response byte: connection_closed', async () => {
    const raw = await server(startRawHttpServer({ kind: 'close' }));
    const error = await failure(transport().request(post(raw.url)));
    expect(error).toMatchObject({
      code: 'transport_outcome_unknown',
      failure: 'connection_closed',
    });
    expect(classifyTransportError(error).kind).toBe('failed_unknown');
  });

  it('an abort after the request was written is aborted_after_send', async () => {
    const raw = await server(startRawHttpServer({ kind: 'hang' }));
    const controller = new AbortController();
    const call = transport().request(post(raw.url, { signal: controller.signal }));
    await once(raw.events, 'request');
    controller.abort();
    const error = await failure(call);
    expect(error).toMatchObject({
      code: 'transport_outcome_unknown',
      failure: 'aborted_after_send',
    });
  });

  it('a response larger than maxResponseBytes is response_too_large', async () => {
    const raw = await server(
      startRawHttpServer({ kind: 'respond', raw: jsonResponse(200, { pad: 'x'.repeat(4096) }) }),
    );
    const error = await failure(transport({ maxResponseBytes: 1024 }).request(post(raw.url)));
    expect(error).toMatchObject({
      code: 'transport_outcome_unknown',
      failure: 'response_too_large',
    });
  });

  it('a garbled response is response_invalid', async () => {
    const raw = await server(
      startRawHttpServer({ kind: 'respond', raw: 'NOT HTTP AT ALL\r\n\r\n' }),
    );
    const error = await failure(transport().request(post(raw.url)));
    expect(error).toMatchObject({ code: 'transport_outcome_unknown', failure: 'response_invalid' });
  });
});

describe('no request is ever sent twice', () => {
  it('a dropped connection is one connection and one request at the server', async () => {
    const raw = await server(startRawHttpServer({ kind: 'close' }));
    await failure(transport().request(post(raw.url)));
    expect(raw.connections).toBe(1);
    expect(raw.requests).toHaveLength(1);
  });

  it('a redirect is returned, not followed, and a 421 is returned, not re-sent', async () => {
    const raw = await server(
      startRawHttpServer((index) =>
        index === 0
          ? {
              kind: 'respond',
              raw: 'HTTP/1.1 307 Temporary Redirect\r\nlocation: /v1/elsewhere\r\ncontent-length: 0\r\n\r\n',
            }
          : { kind: 'respond', raw: jsonResponse(421, { error: 'misdirected' }) },
      ),
    );
    const kit = transport();
    const redirected = await kit.fetch(`${raw.url}/v1/refunds`, {
      method: 'POST',
      body: refundBody,
    });
    expect(redirected.status).toBe(307);
    expect(redirected.headers.get('location')).toBe('/v1/elsewhere');
    const misdirected = await kit.fetch(`${raw.url}/v1/refunds`, {
      method: 'POST',
      body: refundBody,
    });
    expect(misdirected.status).toBe(421);
    expect(raw.requests).toHaveLength(2);
  });

  it('each call opens its own connection and asks the server to close it', async () => {
    const raw = await server(startRawHttpServer({ kind: 'respond', raw: jsonResponse(200, {}) }));
    const kit = transport();
    for (let index = 0; index < 3; index++) {
      expect((await kit.request(post(raw.url))).status).toBe(200);
    }
    expect(raw.connections).toBe(3);
    expect(raw.requests.every((text) => /\r\nconnection: close\r\n/i.test(text))).toBe(true);
  });

  it('with keepAlive, requests ask to keep the connection, and each is still sent once', async () => {
    const raw = await server(
      startRawHttpServer({
        kind: 'respond',
        raw: 'HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: keep-alive\r\n\r\n{}',
        keepOpen: true,
      }),
    );
    const kit = transport({ keepAlive: true });
    for (let index = 0; index < 3; index++) {
      expect((await kit.request(post(raw.url))).status).toBe(200);
    }
    expect(raw.requests).toHaveLength(3);
    expect(raw.requests.every((text) => /\r\nconnection: keep-alive\r\n/i.test(text))).toBe(true);
  });
});

describe('responses', () => {
  it('returns status, lower-case headers and the whole body', async () => {
    const raw = await server(
      startRawHttpServer({
        kind: 'respond',
        raw: jsonResponse(402, { error: { code: 'card_declined' } }, { 'Request-Id': 'req_1' }),
      }),
    );
    const response = await transport().request(post(raw.url));
    expect(response.status).toBe(402);
    expect(response.headers['request-id']).toBe('req_1');
    expect(response.json()).toEqual({ error: { code: 'card_declined' } });
  });

  it('fetch sends form bodies with their content type and returns a readable Response', async () => {
    const raw = await server(
      startRawHttpServer({ kind: 'respond', raw: jsonResponse(200, { ok: 1 }) }),
    );
    const response = await transport().fetch(`${raw.url}/v1/refunds`, {
      method: 'POST',
      body: new URLSearchParams({ charge: 'ch_1', amount: '500' }),
    });
    expect(await response.json()).toEqual({ ok: 1 });
    expect(raw.requests[0]).toMatch(/content-type: application\/x-www-form-urlencoded/i);
    expect(raw.requests[0]).toContain('charge=ch_1&amount=500');
  });

  it('fetch rejects with the TransportError, so a caller can tell refused from lost', async () => {
    const port = await closedPort();
    const error = await failure(transport().fetch(`http://127.0.0.1:${port}/v1/refunds`));
    expect(error.failure).toBe('connection_refused');
  });

  it('refuses a URL that is not http or https before anything else', () => {
    expect(() => transport().request({ url: 'ftp://127.0.0.1/x' })).toThrow(
      expect.objectContaining({ code: 'transport_request_invalid' }),
    );
    expect(() => createExecutorTransport({ timeoutMs: 0 })).toThrow(
      /timeoutMs must be a positive integer/,
    );
  });
});
