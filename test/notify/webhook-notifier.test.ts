/**
 * The webhook notifier against a real local HTTP server: retried with backoff until it lands,
 * signed so the receiver can check it, bounded (drops are counted and reported), and never in
 * the guard's way — a receiver that holds the request does not hold the guard.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { GuardEvent } from '../../src/core/guard.js';
import { openGatewayNotifications } from '../../src/notify/gateway-notifications.js';
import { type Notice, noticeOfGuardEvent, noticeTypeOf } from '../../src/notify/notice.js';
import { createWebhookNotifier, retryDelayMs } from '../../src/notify/webhook-notifier.js';
import {
  verifyWebhookSignature,
  WEBHOOK_SIGNATURE_HEADER,
  webhookSignatureHeader,
} from '../../src/notify/webhook-signature.js';
import { createHarness, refundArgs } from '../support/guard-harness.js';

const SECRET = 'whsec_0123456789abcdef0123456789abcdef';

interface Delivery {
  readonly body: string;
  readonly signature: string | undefined;
  readonly noticeId: string | undefined;
}

/** A receiver that answers each request with the next status, or holds it while `hold` is set. */
async function startReceiver(statuses: number[]) {
  const deliveries: Delivery[] = [];
  const held: ServerResponse[] = [];
  const arrivals: (() => void)[] = [];
  let hold = false;
  const server: Server = createServer((request: IncomingMessage, response) => {
    let body = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => {
      body += chunk;
    });
    request.on('end', () => {
      deliveries.push({
        body,
        signature: request.headers[WEBHOOK_SIGNATURE_HEADER] as string | undefined,
        noticeId: request.headers['sideguard-notice-id'] as string | undefined,
      });
      for (const arrived of arrivals.splice(0)) arrived();
      if (hold) {
        held.push(response);
        return;
      }
      response.writeHead(statuses.shift() ?? 200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks/sideguard`,
    deliveries,
    holdRequests() {
      hold = true;
    },
    nextArrival: () => new Promise<void>((resolve) => arrivals.push(resolve)),
    release() {
      hold = false;
      for (const response of held.splice(0)) response.writeHead(200).end();
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const response of held.splice(0)) response.destroy();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

const notice = (id: string): Notice => ({
  id,
  type: 'approval_needed',
  occurredAt: '2026-01-01T00:00:00.000Z',
  tenant: 'acme',
  proposal: `p-${id}`,
  actionType: 'support.refund@1',
  status: 'awaiting_authority',
  reasonCode: 'amount_over_auto_limit',
});

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

describe('the webhook notifier', () => {
  it('retries failed deliveries with backoff until one lands, each signed and verifiable', async () => {
    const receiver = await startReceiver([500, 503, 200]);
    closers.push(receiver.close);
    const retries: number[] = [];
    const notifier = createWebhookNotifier({
      url: receiver.url,
      secret: SECRET,
      baseDelayMs: 1,
      random: () => 0,
      onRetry: (_notice, attempt) => retries.push(attempt),
    });
    closers.push(() => notifier.close());
    notifier.notify(notice('n1'));
    await notifier.idle();

    expect(notifier.stats()).toEqual({ queued: 1, delivered: 1, dropped: 0, failedAttempts: 2 });
    expect(retries).toEqual([1, 2]);
    expect(receiver.deliveries).toHaveLength(3);
    for (const delivery of receiver.deliveries) {
      expect(JSON.parse(delivery.body)).toEqual(notice('n1'));
      expect(delivery.noticeId).toBe('n1');
      expect(
        verifyWebhookSignature({ secret: SECRET, header: delivery.signature, body: delivery.body }),
      ).toMatchObject({ kind: 'valid' });
    }
    const last = receiver.deliveries[2] as Delivery;
    expect(
      verifyWebhookSignature({ secret: SECRET, header: last.signature, body: `${last.body} ` }),
    ).toEqual({ kind: 'invalid', reason: 'mismatch' });
    expect(
      verifyWebhookSignature({
        secret: 'another-secret-0123456789abcdef0123',
        header: last.signature,
        body: last.body,
      }),
    ).toEqual({ kind: 'invalid', reason: 'mismatch' });
  });

  it('drops a notice after its last attempt, counted and reported with the last error', async () => {
    const receiver = await startReceiver([500, 500, 500]);
    closers.push(receiver.close);
    const drops: string[] = [];
    const notifier = createWebhookNotifier({
      url: receiver.url,
      secret: SECRET,
      maxAttempts: 2,
      baseDelayMs: 1,
      random: () => 0,
      onDrop: (dropped, reason, lastError) => drops.push(`${dropped.id} ${reason} ${lastError}`),
    });
    closers.push(() => notifier.close());
    notifier.notify(notice('n2'));
    await notifier.idle();
    expect(notifier.stats()).toMatchObject({ delivered: 0, dropped: 1, failedAttempts: 2 });
    expect(drops).toEqual(['n2 attempts_exhausted HTTP 500']);
  });

  it('drops what does not fit the bounded queue, and what is left when it closes', async () => {
    const receiver = await startReceiver([]);
    closers.push(receiver.close);
    receiver.holdRequests();
    const drops: string[] = [];
    const notifier = createWebhookNotifier({
      url: receiver.url,
      secret: SECRET,
      queueLimit: 1,
      onDrop: (dropped, reason) => drops.push(`${dropped.id} ${reason}`),
    });
    const arrived = receiver.nextArrival();
    notifier.notify(notice('in-flight'));
    await arrived;
    notifier.notify(notice('queued'));
    notifier.notify(notice('overflow'));
    expect(drops).toEqual(['overflow queue_full']);
    await notifier.close(0);
    expect(drops.slice(1).sort()).toEqual(['in-flight closed', 'queued closed']);
    expect(notifier.stats()).toMatchObject({ delivered: 0, dropped: 3 });
    notifier.notify(notice('after-close'));
    expect(notifier.stats().dropped).toBe(4);
  });

  it('refuses a short secret and a non-HTTP URL before sending anything', () => {
    expect(() => createWebhookNotifier({ url: 'http://127.0.0.1:9', secret: 'short' })).toThrow(
      /at least 32 characters/,
    );
    expect(() => createWebhookNotifier({ url: 'file:///etc/passwd', secret: SECRET })).toThrow(
      /must be http\(s\)/,
    );
  });

  it('bounds the retry delay exponentially with full jitter', () => {
    const top = (attempt: number) => retryDelayMs(attempt, 500, 30_000, (bound) => bound - 1);
    expect([1, 2, 3, 7, 20].map(top)).toEqual([500, 1000, 2000, 30_000, 30_000]);
    expect(retryDelayMs(5, 500, 30_000, () => 0)).toBe(0);
  });
});

describe('the signature', () => {
  it('refuses a missing, malformed or stale header', () => {
    const body = '{"a":1}';
    const header = webhookSignatureHeader(SECRET, 1_000, body);
    expect(verifyWebhookSignature({ secret: SECRET, header, body, nowSeconds: 1_100 })).toEqual({
      kind: 'valid',
      timestampSeconds: 1_000,
    });
    expect(verifyWebhookSignature({ secret: SECRET, header, body, nowSeconds: 1_400 })).toEqual({
      kind: 'invalid',
      reason: 'too_old',
    });
    expect(verifyWebhookSignature({ secret: SECRET, header: undefined, body })).toEqual({
      kind: 'invalid',
      reason: 'missing',
    });
    expect(verifyWebhookSignature({ secret: SECRET, header: 't=x,v1=zz', body })).toEqual({
      kind: 'invalid',
      reason: 'malformed',
    });
  });
});

describe('gateway notifications', () => {
  it('a receiver holding the request does not hold the guard; the notice lands once released', async () => {
    const receiver = await startReceiver([]);
    closers.push(receiver.close);
    receiver.holdRequests();
    const notifications = openGatewayNotifications({
      config: { webhook: { url: receiver.url, secretEnv: 'TEST_WEBHOOK_SECRET' } },
      consoleUrl: 'http://127.0.0.1:4401/',
      environment: { TEST_WEBHOOK_SECRET: SECRET },
      log: () => {},
    });
    if (notifications === undefined) throw new Error('expected notifications');
    closers.push(() => notifications.close());
    const { guard, refund } = createHarness({ events: notifications.events });
    const arrived = receiver.nextArrival();

    const prepared = await guard.prepare(refund, {
      tenant: 'tenant-a',
      input: refundArgs({ amount: '250.00' }),
      principal: 'support',
    });
    expect(prepared.status).toBe('awaiting_authority');
    await arrived;
    expect(notifications.webhook.stats().delivered).toBe(0);

    receiver.release();
    await notifications.webhook.idle();
    expect(notifications.webhook.stats()).toMatchObject({ delivered: 1, dropped: 0 });
    const body = JSON.parse(receiver.deliveries[0]?.body ?? '{}');
    expect(body).toMatchObject({
      type: 'approval_needed',
      tenant: 'tenant-a',
      proposal: prepared.proposal,
      actionType: refund.typeName,
      status: 'awaiting_authority',
      reasonCode: 'amount_over_auto_limit',
      url: `http://127.0.0.1:4401/proposals/${prepared.proposal}`,
    });
    expect(JSON.stringify(body)).not.toContain('cus_ada');
  });

  it('refuses to start without the secret, naming the variable and how to set it', () => {
    expect(() =>
      openGatewayNotifications({
        config: { webhook: { url: 'http://127.0.0.1:9', secretEnv: 'MISSING_SECRET' } },
        environment: {},
      }),
    ).toThrow(/MISSING_SECRET, which is not set/);
    expect(openGatewayNotifications({ config: undefined })).toBeUndefined();
  });
});

describe('which guard events make a notice', () => {
  const event = (type: string, status: string | null) =>
    ({
      tenant: 'acme',
      proposal: 'p1',
      actionType: 'support.refund@1',
      type,
      status,
      sequence: 7,
      reasonCode: null,
    }) as GuardEvent;

  it('announces a new proposal waiting for approval and a proposal the guard cannot settle', () => {
    expect(noticeTypeOf(event('idempotency_decided', 'awaiting_authority'))).toBe(
      'approval_needed',
    );
    expect(noticeTypeOf(event('verification_unresolved', 'verification_unresolved'))).toBe(
      'stuck_proposal',
    );
    expect(noticeTypeOf(event('compensation_required', 'compensation_required'))).toBe(
      'stuck_proposal',
    );
    expect(noticeTypeOf(event('partial_commit', 'partially_succeeded'))).toBe('stuck_proposal');
    expect(noticeTypeOf(event('authority_recorded', 'awaiting_authority'))).toBeUndefined();
    expect(noticeTypeOf(event('committed', 'verified'))).toBeUndefined();
    expect(
      noticeOfGuardEvent(event('compensation_required', 'compensation_required'), { atMs: 0 }),
    ).toEqual({
      id: 'acme:7',
      type: 'stuck_proposal',
      occurredAt: '1970-01-01T00:00:00.000Z',
      tenant: 'acme',
      proposal: 'p1',
      actionType: 'support.refund@1',
      status: 'compensation_required',
      reasonCode: null,
    });
  });
});
