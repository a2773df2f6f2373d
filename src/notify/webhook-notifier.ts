/**
 * Delivers notices to one webhook: signed JSON POSTs from a bounded in-memory queue, one at a
 * time, retried with exponential backoff and full jitter. `notify` only enqueues, so the guard
 * never waits for (or fails because of) a receiver. A notice that cannot be queued or delivered
 * is dropped, counted and reported through `onDrop` — never silently.
 */
import { randomInt } from 'node:crypto';
import type { Notice } from './notice.js';
import {
  WEBHOOK_SECRET_MIN_LENGTH,
  WEBHOOK_SIGNATURE_HEADER,
  webhookSignatureHeader,
} from './webhook-signature.js';

/** Why a notice was dropped. */
export type WebhookDropReason = 'queue_full' | 'attempts_exhausted' | 'closed';

/** Options of {@link createWebhookNotifier}. */
export interface WebhookNotifierConfig {
  readonly url: string;
  /** The signing secret; at least 32 characters. */
  readonly secret: string;
  /** One attempt's timeout, in ms. @default 5_000 */
  readonly timeoutMs?: number;
  /** Attempts per notice. @default 6 */
  readonly maxAttempts?: number;
  /** Notices waiting at most. @default 1_000 */
  readonly queueLimit?: number;
  /** The first retry's upper delay bound, doubled per attempt, in ms. @default 500 */
  readonly baseDelayMs?: number;
  /** The largest retry delay, in ms. @default 30_000 */
  readonly maxDelayMs?: number;
  /** A whole number in [0, bound): the jitter. @default crypto.randomInt */
  readonly random?: (bound: number) => number;
  /** Unix ms, for the signature timestamp. @default Date.now */
  readonly now?: () => number;
  /** @default global fetch */
  readonly fetch?: typeof fetch;
  /** A notice was dropped (log it). Must not throw. */
  readonly onDrop?: (notice: Notice, reason: WebhookDropReason, lastError: string | null) => void;
  /** An attempt failed and will be retried. Must not throw. */
  readonly onRetry?: (notice: Notice, attempt: number, error: string) => void;
}

/** Counters since start. */
export interface WebhookNotifierStats {
  readonly queued: number;
  readonly delivered: number;
  readonly dropped: number;
  readonly failedAttempts: number;
}

/** A running notifier. */
export interface WebhookNotifier {
  /** Enqueues a notice and returns at once. */
  notify(notice: Notice): void;
  stats(): WebhookNotifierStats;
  /** Resolves when the queue is empty and nothing is in flight (tests, shutdown). */
  idle(): Promise<void>;
  /**
   * Stops: waits up to `graceMs` for the queue to drain, then drops (and counts) what is left.
   * @default graceMs 2_000
   */
  close(graceMs?: number): Promise<void>;
}

/** The delay before retry `attempt` (1-based): full jitter over an exponential bound. */
export function retryDelayMs(
  attempt: number,
  baseDelayMs: number,
  maxDelayMs: number,
  random: (bound: number) => number,
): number {
  const bound = Math.min(maxDelayMs, baseDelayMs * 2 ** (attempt - 1));
  return random(Math.max(1, Math.floor(bound)) + 1);
}

/** Builds a notifier. @throws RangeError for a short secret or a URL that is not http(s). */
export function createWebhookNotifier(config: WebhookNotifierConfig): WebhookNotifier {
  if (config.secret.length < WEBHOOK_SECRET_MIN_LENGTH) {
    throw new RangeError(
      `the webhook secret must be at least ${WEBHOOK_SECRET_MIN_LENGTH} characters; generate one with \`openssl rand -hex 32\``,
    );
  }
  const url = new URL(config.url);
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new RangeError(`the webhook URL must be http(s), got ${url.protocol}`);
  }
  const settings = {
    timeoutMs: config.timeoutMs ?? 5_000,
    maxAttempts: config.maxAttempts ?? 6,
    queueLimit: config.queueLimit ?? 1_000,
    baseDelayMs: config.baseDelayMs ?? 500,
    maxDelayMs: config.maxDelayMs ?? 30_000,
    random: config.random ?? ((bound: number) => randomInt(bound)),
    now: config.now ?? Date.now,
    fetch: config.fetch ?? fetch,
  };
  const queue: Notice[] = [];
  const counts = { queued: 0, delivered: 0, dropped: 0, failedAttempts: 0 };
  let worker: Promise<void> | undefined;
  let closed = false;
  const abort = new AbortController();
  const waiters: (() => void)[] = [];

  const drop = (notice: Notice, reason: WebhookDropReason, lastError: string | null) => {
    counts.dropped += 1;
    try {
      config.onDrop?.(notice, reason, lastError);
    } catch {
      // A failing log hook must not stop deliveries.
    }
  };

  const attempt = async (notice: Notice): Promise<string | null> => {
    const body = JSON.stringify(notice);
    const timestamp = Math.floor(settings.now() / 1000);
    try {
      const response = await settings.fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          [WEBHOOK_SIGNATURE_HEADER]: webhookSignatureHeader(config.secret, timestamp, body),
          'sideguard-notice-id': notice.id,
        },
        body,
        redirect: 'manual',
        signal: AbortSignal.any([abort.signal, AbortSignal.timeout(settings.timeoutMs)]),
      });
      await response.body?.cancel().catch(() => {});
      return response.ok ? null : `HTTP ${response.status}`;
    } catch (error) {
      return error instanceof Error ? error.message : String(error);
    }
  };

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      abort.signal.addEventListener('abort', () => {
        clearTimeout(timer);
        resolve();
      });
    });

  const deliver = async (notice: Notice) => {
    let lastError: string | null = null;
    for (let number = 1; number <= settings.maxAttempts; number++) {
      if (abort.signal.aborted) return drop(notice, 'closed', lastError);
      lastError = await attempt(notice);
      if (lastError === null) {
        counts.delivered += 1;
        return;
      }
      counts.failedAttempts += 1;
      if (number === settings.maxAttempts) break;
      config.onRetry?.(notice, number, lastError);
      await sleep(retryDelayMs(number, settings.baseDelayMs, settings.maxDelayMs, settings.random));
    }
    drop(notice, abort.signal.aborted ? 'closed' : 'attempts_exhausted', lastError);
  };

  const run = async () => {
    for (let notice = queue.shift(); notice !== undefined; notice = queue.shift()) {
      await deliver(notice);
    }
    worker = undefined;
    for (const wake of waiters.splice(0)) wake();
  };

  return {
    notify(notice) {
      if (closed) return drop(notice, 'closed', null);
      if (queue.length >= settings.queueLimit) return drop(notice, 'queue_full', null);
      counts.queued += 1;
      queue.push(notice);
      worker ??= run();
    },
    stats: () => ({ ...counts }),
    idle: () =>
      worker === undefined ? Promise.resolve() : new Promise((resolve) => waiters.push(resolve)),
    async close(graceMs = 2_000) {
      closed = true;
      if (worker !== undefined) {
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([
          new Promise<void>((resolve) => waiters.push(resolve)),
          new Promise<void>((resolve) => {
            timer = setTimeout(resolve, graceMs);
          }),
        ]);
        clearTimeout(timer);
      }
      abort.abort();
      for (const notice of queue.splice(0)) drop(notice, 'closed', null);
      await worker;
    },
  };
}
