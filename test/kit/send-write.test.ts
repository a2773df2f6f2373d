/**
 * `sendWrite`: one request, classified for the guard by the provider's rules — the building
 * block for an executor that talks HTTP without a client library.
 */
import {
  createExecutorTransport,
  genericHttpRules,
  RateLimitReading,
  sendWrite,
} from 'sideguard/executor-kit';
import { afterEach, describe, expect, it } from 'vitest';
import { closedPort, jsonResponse, startRawHttpServer } from './socket-servers.js';

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

async function answering(raw: string) {
  const server = await startRawHttpServer({ kind: 'respond', raw });
  cleanup.push(() => server.close());
  return server;
}

function transport() {
  const created = createExecutorTransport({ timeoutMs: 2_000 });
  cleanup.push(() => created.close());
  return created;
}

const errorCode = (response: { json(): unknown }) =>
  (response.json() as { error?: { code?: string } }).error?.code;

describe('sendWrite', () => {
  it('a 2xx is succeeded, with the response', async () => {
    const server = await answering(jsonResponse(201, { id: 'tkt_1' }));
    const outcome = await sendWrite(transport(), { url: `${server.url}/tickets`, method: 'POST' });
    expect(outcome.kind).toBe('succeeded');
    expect(outcome.response?.json()).toEqual({ id: 'tkt_1' });
  });

  it('a documented refusal is failed_known with the provider code', async () => {
    const server = await answering(jsonResponse(422, { error: { code: 'invalid_state' } }));
    const outcome = await sendWrite(
      transport(),
      { url: `${server.url}/tickets`, method: 'POST' },
      { errorCode },
    );
    expect(outcome).toMatchObject({ kind: 'failed_known', reason: 'http_422_invalid_state' });
  });

  it('a 503 is failed_unknown; a 429 follows the rules given', async () => {
    const unavailable = await answering(jsonResponse(503, {}));
    expect(
      await sendWrite(transport(), { url: `${unavailable.url}/t`, method: 'POST' }),
    ).toMatchObject({ kind: 'failed_unknown', reason: 'http_503' });
    const limited = await answering(jsonResponse(429, {}));
    const url = `${limited.url}/t`;
    expect(await sendWrite(transport(), { url, method: 'POST' })).toMatchObject({
      kind: 'failed_unknown',
    });
    const rules = { ...genericHttpRules, rateLimited: RateLimitReading.not_applied };
    expect(await sendWrite(transport(), { url, method: 'POST' }, { rules })).toMatchObject({
      kind: 'failed_known',
      reason: 'http_429',
    });
  });

  it('transport failures are classified, not thrown', async () => {
    const port = await closedPort();
    expect(
      await sendWrite(transport(), { url: `http://127.0.0.1:${port}/t`, method: 'POST' }),
    ).toEqual({ kind: 'failed_known', reason: 'transport_connection_refused' });
    const hanging = await startRawHttpServer({ kind: 'hang' });
    cleanup.push(() => hanging.close());
    expect(
      await sendWrite(transport(), { url: `${hanging.url}/t`, method: 'POST', timeoutMs: 100 }),
    ).toEqual({ kind: 'failed_unknown', reason: 'transport_timeout' });
  });
});
