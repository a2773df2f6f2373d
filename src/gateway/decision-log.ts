/**
 * Every gateway decision becomes a `gateway_decided` event on its tenant's hash chain, with
 * allow-listed metadata only — door, decision, reason, upstream, route template or tool, binding,
 * agent, principal, proposal, outcome, wire status and keyed digests; never a body, a raw path or a
 * credential (I8). Written by group commit (decision 070): decisions queue in a bounded buffer and
 * one writer seals them in batches, one store commit per tenant, so a forwarded read never waits
 * for a disk sync. Nothing is dropped: a failed batch is retried with backoff, a full buffer makes
 * `record` wait (back-pressure), and `close` flushes.
 */
import { SideguardError } from '../core/errors.js';
import type { LedgerEventDraft } from '../core/ledger.js';
import type { GuardStore } from '../core/store.js';
import { decisionLedgerDraft } from './decision-ledger-draft.js';
import type { DecisionKind, DecisionReason } from './decision-vocabulary.js';

export { endDecisionSpan, startDecisionSpan } from './decision-span.js';

/** One decision, as logged and traced. */
export interface GatewayDecisionEvent {
  readonly v: 1;
  readonly at: string;
  readonly door: 'http' | 'mcp';
  readonly tenant: string;
  readonly decision: DecisionKind;
  readonly reason: DecisionReason;
  readonly upstream: string | null;
  /** Route template, tool name or `METHOD <unmatched>`. */
  readonly subject: string;
  readonly binding: string | null;
  readonly agent: string | null;
  readonly principal: string | null;
  readonly proposal?: string;
  readonly outcome?: string;
  /** The wire code of the answer (e.g. `approval_required`, `completed`). */
  readonly code?: string;
  /** The HTTP status of the answer, or the MCP door's equivalent. */
  readonly status?: number;
  /** Keyed digest (HMAC) of the request body; never the body. */
  readonly requestDigest?: string;
}

/** Seals decision events onto the ledger; never throws and never drops an event silently. */
export interface DecisionLog {
  /**
   * Queues the decision. Resolves at once while the buffer has room; when it is full, once a
   * batch was sealed and there is room again (back-pressure: the caller's answer waits, the
   * decision is never dropped). Never rejects.
   */
  record(event: GatewayDecisionEvent): Promise<void>;
  /** Resolves once every decision recorded before the call is sealed in the ledger. */
  flush(): Promise<void>;
  /**
   * Flushes, retrying a failing store for up to `closeTimeoutMs`, then stops. Decisions that
   * could still not be written are reported through `onError` (with their count), never
   * silently lost; so is a decision recorded after close. Idempotent.
   */
  close(): Promise<void>;
  /** Decisions recorded and not yet sealed (buffered, being written, or waiting for room). */
  readonly pending: number;
}

/** Options of {@link createDecisionLog}. */
export interface DecisionLogOptions {
  /**
   * How long a decision may wait for a batch to fill, in ms: each batch costs one synced store
   * commit per tenant (which blocks the event loop on SQLite), so this bounds that cost to about
   * ten a second, and bounds what a SIGKILL can lose. @default 100
   */
  readonly flushIntervalMs?: number;
  /** Decisions per batch; a full batch is written at once. @default 256 */
  readonly maxBatch?: number;
  /** Decisions buffered (and being written) before `record` waits. @default 8192 */
  readonly capacity?: number;
  /** First wait before a failed batch is retried, doubled per failure, in ms. @default 50 */
  readonly retryDelayMs?: number;
  /** Longest wait between retries, in ms. @default 2000 */
  readonly maxRetryDelayMs?: number;
  /** How long `close` keeps retrying before it reports what is left, in ms. @default 10000 */
  readonly closeTimeoutMs?: number;
  /** Told about every failed batch and about anything lost at close. @default ignore */
  readonly onError?: (error: unknown) => void;
}

interface Queued {
  /** Order of recording: the buffer is kept sorted by it. */
  readonly sequence: number;
  readonly tenant: string;
  readonly draft: LedgerEventDraft;
}

const RESOLVED = Promise.resolve();

/** A group-committing decision log over the guard's store (the tenants' ledgers). */
export function createDecisionLog(
  store: Pick<GuardStore, 'commit'>,
  options: DecisionLogOptions = {},
): DecisionLog {
  const maxBatch = options.maxBatch ?? 256;
  const capacity = Math.max(options.capacity ?? 8192, maxBatch);
  const interval = options.flushIntervalMs ?? 100;
  const report = (error: unknown): void => {
    try {
      options.onError?.(error);
    } catch {
      // Nobody left to tell.
    }
  };
  let queue: Queued[] = [];
  let inFlight: readonly Queued[] = [];
  const blocked: { readonly item: Queued; readonly admit: () => void }[] = [];
  const waiters: { readonly through: number; readonly done: () => void }[] = [];
  let nextSequence = 0;
  let writing = false;
  let failures = 0;
  let timer: NodeJS.Timeout | undefined;
  let retryTimer: NodeJS.Timeout | undefined;
  let closing = false;
  let closed = false;

  const oldestUnwritten = (): number =>
    Math.min(
      inFlight[0]?.sequence ?? Number.POSITIVE_INFINITY,
      queue[0]?.sequence ?? Number.POSITIVE_INFINITY,
      blocked[0]?.item.sequence ?? Number.POSITIVE_INFINITY,
    );
  const settle = (): void => {
    while (blocked.length > 0 && queue.length + inFlight.length < capacity) {
      const next = blocked.shift();
      if (next === undefined) break;
      queue.push(next.item);
      next.admit();
    }
    const oldest = oldestUnwritten();
    for (let index = waiters.length - 1; index >= 0; index -= 1) {
      const waiter = waiters[index];
      if (waiter !== undefined && waiter.through < oldest) {
        waiters.splice(index, 1);
        waiter.done();
      }
    }
  };
  const schedule = (): void => {
    if (writing || retryTimer !== undefined || closed || queue.length === 0) return;
    const urgent = queue.length >= maxBatch || blocked.length > 0 || waiters.length > 0 || closing;
    if (urgent) {
      void write();
      return;
    }
    timer ??= setTimeout(() => {
      timer = undefined;
      void write();
    }, interval);
  };
  /** Writes one batch; failed tenants' decisions go back to the front of the buffer. */
  const write = async (): Promise<void> => {
    if (writing || closed || queue.length === 0) return;
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
    writing = true;
    inFlight = queue.splice(0, maxBatch);
    const byTenant = new Map<string, Queued[]>();
    for (const item of inFlight) {
      const list = byTenant.get(item.tenant);
      if (list === undefined) byTenant.set(item.tenant, [item]);
      else list.push(item);
    }
    const failed: Queued[] = [];
    await Promise.all(
      [...byTenant].map(async ([tenant, items]) => {
        try {
          const result = await store.commit({ tenant, events: items.map((item) => item.draft) });
          if (result.kind !== 'committed') throw new Error(`the store answered ${result.kind}`);
        } catch (error) {
          failed.push(...items);
          report(
            new SideguardError(
              'decision_log_write_failed',
              `Failed to seal ${items.length} gateway decision(s) in the ledger; they stay queued and are retried (${error instanceof Error ? error.message : String(error)})`,
              { cause: error, data: { count: items.length } },
            ),
          );
        }
      }),
    );
    inFlight = [];
    writing = false;
    if (failed.length > 0 && !closed) {
      failed.sort((a, b) => a.sequence - b.sequence);
      queue = [...failed, ...queue];
      failures += 1;
      const delay = Math.min(
        (options.retryDelayMs ?? 50) * 2 ** (failures - 1),
        options.maxRetryDelayMs ?? 2_000,
      );
      retryTimer = setTimeout(() => {
        retryTimer = undefined;
        void write();
      }, delay);
    } else {
      failures = 0;
    }
    settle();
    schedule();
  };

  const flush = (): Promise<void> => {
    const through = nextSequence - 1;
    if (closed || oldestUnwritten() > through) return RESOLVED;
    return new Promise<void>((done) => {
      waiters.push({ through, done });
      schedule();
    });
  };

  let closedPromise: Promise<void> | undefined;
  const close = async (): Promise<void> => {
    closing = true;
    const timeoutMs = options.closeTimeoutMs ?? 10_000;
    let deadline: NodeJS.Timeout | undefined;
    const drain = async (): Promise<true> => {
      // Decisions recorded while closing are flushed too.
      while (!closed && queue.length + inFlight.length + blocked.length > 0) await flush();
      return true;
    };
    const flushed = await Promise.race([
      drain(),
      new Promise<boolean>((done) => {
        deadline = setTimeout(() => done(false), timeoutMs);
      }),
    ]);
    clearTimeout(deadline);
    closed = true;
    clearTimeout(timer);
    clearTimeout(retryTimer);
    timer = undefined;
    retryTimer = undefined;
    if (!flushed) {
      const lost = queue.length + inFlight.length + blocked.length;
      report(
        new SideguardError(
          'decision_log_unwritten',
          `${lost} gateway decision(s) could not be sealed in the ledger within ${timeoutMs} ms of closing and are lost; check that the store is reachable`,
          { data: { count: lost } },
        ),
      );
      for (const entry of blocked.splice(0)) entry.admit();
      for (const waiter of waiters.splice(0)) waiter.done();
    }
  };

  return {
    record(event) {
      const item = {
        sequence: nextSequence,
        tenant: event.tenant,
        draft: decisionLedgerDraft(event),
      };
      nextSequence += 1;
      if (closed) {
        report(
          new SideguardError(
            'decision_log_closed',
            'A gateway decision was recorded after the decision log closed; it is not in the ledger',
          ),
        );
        return RESOLVED;
      }
      if (blocked.length === 0 && queue.length + inFlight.length < capacity) {
        queue.push(item);
        schedule();
        return RESOLVED;
      }
      return new Promise<void>((admit) => {
        blocked.push({ item, admit });
        schedule();
      });
    },
    flush,
    close() {
      closedPromise ??= close();
      return closedPromise;
    },
    get pending() {
      return queue.length + inFlight.length + blocked.length;
    },
  };
}
