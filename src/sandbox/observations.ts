/**
 * What the sandbox saw: every data-plane request with its decision, every fault decision with
 * whether the write happened, and write counts derived from the receipts providers issued.
 */
import type { FaultKind } from './fault-plan.js';
import type { SandboxReceipt } from './state-store.js';

/** Whether the provider's write happened, as the sandbox (not the client) knows it. */
export const WriteOutcome = {
  /** Nothing was written: rejected, faulted before execution, a read, or a replay. */
  notDispatched: 'not_dispatched',
  /** The write is applied and durable. */
  committed: 'committed',
  /** Execution began but persisting failed: the write may or may not survive a restart. */
  unknown: 'unknown',
} as const;
export type WriteOutcome = (typeof WriteOutcome)[keyof typeof WriteOutcome];

/** What the data plane decided for a request. */
export const RequestDecision = {
  served: 'served',
  replayed: 'replayed',
  reservedHeader: 'reserved_header',
  routeNotFound: 'route_not_found',
  payloadTooLarge: 'payload_too_large',
  unauthenticated: 'unauthenticated',
  unknownKey: 'unknown_key',
  forbidden: 'forbidden',
  invalid: 'invalid',
  idempotencyMismatch: 'idempotency_mismatch',
  idempotencyInFlight: 'idempotency_in_flight',
  faulted: 'faulted',
  aborted: 'aborted',
} as const;
export type RequestDecision = (typeof RequestDecision)[keyof typeof RequestDecision];

/** How the response left (or did not leave) the sandbox. */
export const ResponseDelivery = {
  sent: 'sent',
  /** Connection destroyed with zero response bytes. */
  dropped: 'dropped',
  /** Held back past the client's patience, then destroyed with zero response bytes. */
  hung: 'hung',
  /** The client closed the connection before the answer was ready. */
  clientGone: 'client_gone',
} as const;
export type ResponseDelivery = (typeof ResponseDelivery)[keyof typeof ResponseDelivery];

/** What is known of any data-plane request, finished or not. */
export interface RequestFacts {
  /** 1-based order of arrival since start or reset. */
  readonly sequence: number;
  readonly requestId: string;
  /** ISO-8601 arrival time (sandbox clock). */
  readonly receivedAt: string;
  readonly provider: string | null;
  readonly operation: string | null;
  readonly method: string;
  /** Path without the query, cut to 200 characters. */
  readonly path: string;
  readonly fault: FaultKind | null;
  readonly writeOutcome: WriteOutcome;
  /** The idempotency key the request sent (recorded even where the provider ignores keys). */
  readonly idempotencyKey: string | null;
  readonly effectKey: string | null;
  /** The receipt of the write this request committed, if any. */
  readonly receiptId: string | null;
}

/** One finished data-plane request as observed. */
export interface RequestObservation extends RequestFacts {
  readonly role: string | null;
  readonly decision: RequestDecision;
  /** Response status, or `null` when no response bytes were sent. */
  readonly status: number | null;
  readonly delivery: ResponseDelivery;
  readonly durationMs: number;
}

/** Where a request that has not finished is. */
export const RequestPhase = {
  /** Arrived: its body, identity and parameters are being checked. */
  receiving: 'receiving',
  /** Waiting out a `latency` fault before execution. */
  delayed: 'delayed',
  /** Parked by a `hold` fault until released through the control plane. */
  held: 'held',
  /** Executing and persisting its write. */
  committing: 'committing',
  /** Its write is decided (see `writeOutcome`), its answer held back by `hang_after_write`. */
  hanging: 'hanging',
} as const;
export type RequestPhase = (typeof RequestPhase)[keyof typeof RequestPhase];

/** A data-plane request that has not finished yet: what is known so far, and where it is. */
export interface InFlightRequest extends RequestFacts {
  readonly phase: RequestPhase;
}

/** One fault decision (made for every valid, authorised request to an operation). */
export interface FaultTraceEntry {
  readonly sequence: number;
  readonly requestId: string;
  readonly provider: string;
  readonly operation: string;
  /** 0-based index of this request among requests to the same provider + operation. */
  readonly requestIndex: number;
  readonly fault: FaultKind | null;
  readonly ruleIndex: number | null;
  readonly writeOutcome: WriteOutcome;
  readonly delivery: ResponseDelivery;
  readonly status: number | null;
}

/** Write counts derived from receipts. */
export interface WriteCounts {
  readonly total: number;
  /** `provider.operation` → committed writes. */
  readonly byOperation: Readonly<Record<string, number>>;
  /** Semantic effect key → committed writes carrying it, and through which operations. */
  readonly byEffect: Readonly<
    Record<
      string,
      { readonly count: number; readonly byOperation: Readonly<Record<string, number>> }
    >
  >;
}

/** The observations document served by the control plane and included in exports. */
export interface SandboxObservations {
  readonly writes: WriteCounts;
  readonly receipts: readonly SandboxReceipt[];
  readonly requests: readonly RequestObservation[];
  readonly trace: readonly FaultTraceEntry[];
  /**
   * Requests that arrived and have not finished (receiving, delayed, held, committing or hanging),
   * oldest first. A finished request moves to `requests`.
   */
  readonly inFlight: readonly InFlightRequest[];
  /** Oldest request/trace entries dropped to stay within the in-memory limit. */
  readonly droppedEntryCount: number;
}

/** Counts committed writes per operation and per semantic effect. */
export function countWrites(receipts: readonly SandboxReceipt[]): WriteCounts {
  // Maps, not object literals: effect keys are caller data and may be "__proto__" or "constructor".
  const byOperation = new Map<string, number>();
  const byEffect = new Map<string, { count: number; byOperation: Map<string, number> }>();
  for (const receipt of receipts) {
    const operation = `${receipt.provider}.${receipt.operation}`;
    byOperation.set(operation, (byOperation.get(operation) ?? 0) + 1);
    if (receipt.effectKey !== null) {
      const effect = byEffect.get(receipt.effectKey) ?? {
        count: 0,
        byOperation: new Map<string, number>(),
      };
      effect.count += 1;
      effect.byOperation.set(operation, (effect.byOperation.get(operation) ?? 0) + 1);
      byEffect.set(receipt.effectKey, effect);
    }
  }
  return {
    total: receipts.length,
    byOperation: Object.fromEntries(byOperation),
    byEffect: Object.fromEntries(
      [...byEffect].map(([key, effect]) => [
        key,
        { count: effect.count, byOperation: Object.fromEntries(effect.byOperation) },
      ]),
    ),
  };
}

/** Bounded, in-memory log of requests and fault decisions (not persisted). */
export class ObservationLog {
  private requestEntries: RequestObservation[] = [];
  private traceEntries: FaultTraceEntry[] = [];
  private open = new Set<() => InFlightRequest>();
  private dropped = 0;

  /** @param maxEntries most entries kept per list; older ones are dropped and counted. @default 20 000 */
  constructor(private readonly maxEntries = 20_000) {}

  recordRequest(entry: RequestObservation): void {
    this.requestEntries.push(entry);
    if (this.requestEntries.length > this.maxEntries) {
      this.requestEntries.splice(0, this.requestEntries.length - this.maxEntries);
      this.dropped += 1;
    }
  }

  recordTrace(entry: FaultTraceEntry): void {
    this.traceEntries.push(entry);
    if (this.traceEntries.length > this.maxEntries) {
      this.traceEntries.splice(0, this.traceEntries.length - this.maxEntries);
      this.dropped += 1;
    }
  }

  /**
   * Shows a request in `inFlight` (described by `view`, read at each snapshot) until the returned
   * function is called. A `clear` forgets it at once.
   */
  track(view: () => InFlightRequest): () => void {
    const open = this.open;
    open.add(view);
    return () => open.delete(view);
  }

  clear(): void {
    this.requestEntries = [];
    this.traceEntries = [];
    this.open = new Set();
    this.dropped = 0;
  }

  snapshot(receipts: readonly SandboxReceipt[]): SandboxObservations {
    return {
      writes: countWrites(receipts),
      receipts: [...receipts],
      requests: [...this.requestEntries],
      trace: [...this.traceEntries],
      inFlight: [...this.open].map((view) => view()),
      droppedEntryCount: this.dropped,
    };
  }
}
