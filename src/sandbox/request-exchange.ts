/**
 * One data-plane request and its answer: what the sandbox has learned about it so far (the
 * observation), and the only ways it ends — a response sent, or the connection dropped with zero
 * bytes — each recorded exactly once in the request log, unless a reset retired its world.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { FaultKind } from './fault-plan.js';
import {
  type InFlightRequest,
  RequestDecision,
  type RequestFacts,
  RequestPhase,
  ResponseDelivery,
  WriteOutcome,
} from './observations.js';
import type { SandboxRuntime } from './sandbox-runtime.js';
import type { ProviderDefinition, ProviderResponse } from './sandbox-types.js';

/** What the sandbox knows about a request; filled in as the request moves through the plane. */
export interface ExchangeObservation {
  provider: string | null;
  operation: string | null;
  role: string | null;
  decision: RequestDecision;
  fault: FaultKind | null;
  writeOutcome: WriteOutcome;
  idempotencyKey: string | null;
  effectKey: string | null;
  receiptId: string | null;
}

/** The fault-trace coordinates of a request that reached the commit point. */
export interface TracePoint {
  readonly requestIndex: number;
  readonly ruleIndex: number | null;
}

/** One request/response pair on the data plane. */
export class RequestExchange {
  readonly requestId: string;
  readonly sequence: number;
  readonly method: string;
  readonly pathname: string;
  readonly rawQuery: string;
  readonly receivedAt: string;
  readonly observation: ExchangeObservation;
  /** Where the request is until it finishes (shown in the observations' `inFlight`). */
  phase: RequestPhase = RequestPhase.receiving;
  private readonly startedMs = performance.now();
  private readonly epoch: number;
  private recorded = false;
  private readonly untrack: () => void;

  constructor(
    private readonly runtime: SandboxRuntime,
    readonly request: IncomingMessage,
    private readonly response: ServerResponse,
    readonly provider: ProviderDefinition | undefined,
  ) {
    this.receivedAt = new Date(runtime.config.nowMs()).toISOString();
    const { sequence, token } = runtime.nextRequest();
    this.sequence = sequence;
    this.requestId = provider?.requestId(token) ?? `req_${token}`;
    this.method = request.method ?? 'GET';
    const rawUrl = request.url ?? '/';
    const queryStart = rawUrl.indexOf('?');
    this.pathname = queryStart === -1 ? rawUrl : rawUrl.slice(0, queryStart);
    this.rawQuery = queryStart === -1 ? '' : rawUrl.slice(queryStart + 1);
    this.epoch = runtime.epoch;
    this.observation = {
      provider: provider?.name ?? null,
      operation: null,
      role: null,
      decision: RequestDecision.served,
      fault: null,
      writeOutcome: WriteOutcome.notDispatched,
      idempotencyKey: null,
      effectKey: null,
      receiptId: null,
    };
    this.untrack = runtime.log.track(() => this.inFlightView());
  }

  /** The request has finished (answered, dropped or abandoned): it leaves `inFlight`. */
  finish(): void {
    this.untrack();
  }

  private inFlightView(): InFlightRequest {
    return { ...this.facts(), phase: this.phase };
  }

  private facts(): RequestFacts {
    const observation = this.observation;
    return {
      sequence: this.sequence,
      requestId: this.requestId,
      receivedAt: this.receivedAt,
      provider: observation.provider,
      operation: observation.operation,
      method: this.method,
      path: this.pathname.slice(0, 200),
      fault: observation.fault,
      writeOutcome: observation.writeOutcome,
      idempotencyKey: observation.idempotencyKey,
      effectKey: observation.effectKey,
      receiptId: observation.receiptId,
    };
  }

  /** A reset happened while this request was in flight: it belongs to the old world. */
  outlivedReset(): boolean {
    return this.runtime.epoch !== this.epoch;
  }

  /** Whether the client can no longer receive an answer. */
  get clientGone(): boolean {
    return this.response.destroyed;
  }

  /** Logs the request once (later calls, and calls after a reset, do nothing). */
  record(delivery: ResponseDelivery, status: number | null): void {
    if (this.recorded || this.outlivedReset()) return;
    this.recorded = true;
    this.runtime.log.recordRequest({
      ...this.facts(),
      role: this.observation.role,
      decision: this.observation.decision,
      status,
      delivery,
      durationMs: Math.round((performance.now() - this.startedMs) * 1000) / 1000,
    });
  }

  /** Adds the fault decision of a request at the commit point to the trace. */
  trace(point: TracePoint, delivery: ResponseDelivery, status: number | null): void {
    if (this.outlivedReset()) return;
    this.runtime.log.recordTrace({
      sequence: this.sequence,
      requestId: this.requestId,
      provider: this.observation.provider ?? '',
      operation: this.observation.operation ?? '',
      requestIndex: point.requestIndex,
      fault: this.observation.fault,
      ruleIndex: point.ruleIndex,
      writeOutcome: this.observation.writeOutcome,
      delivery,
      status,
    });
  }

  /**
   * Sends `answer` (finalised by the provider) and logs the request; returns the status sent,
   * or `null` when the client was already gone.
   */
  send(
    answer: ProviderResponse,
    decision: RequestDecision,
    extraHeaders: Record<string, string> = {},
    bodyText?: string,
  ): number | null {
    this.observation.decision = decision;
    if (this.response.destroyed || this.response.headersSent) {
      this.record(ResponseDelivery.clientGone, null);
      return null;
    }
    const finalAnswer = this.provider?.finalize?.(answer, this.requestId) ?? answer;
    writeResponse(
      this.response,
      finalAnswer,
      this.provider?.requestIdHeader ?? 'Request-Id',
      this.requestId,
      extraHeaders,
      bodyText,
    );
    this.record(ResponseDelivery.sent, finalAnswer.status);
    return finalAnswer.status;
  }

  /** Destroys the connection with zero response bytes: the client cannot tell what happened. */
  drop(decision: RequestDecision, delivery: ResponseDelivery): void {
    this.observation.decision = decision;
    this.request.socket.destroy();
    this.record(delivery, null);
  }

  /** Ends a request of a world a reset retired: its connection closes, nothing is logged. */
  abandon(): void {
    this.request.socket.destroy();
  }
}

function writeResponse(
  response: ServerResponse,
  answer: ProviderResponse,
  requestIdHeader: string,
  requestId: string,
  extraHeaders: Record<string, string>,
  bodyText?: string,
): void {
  const text = bodyText ?? (answer.body === undefined ? '' : JSON.stringify(answer.body));
  const headers: Record<string, string | number> = {
    [requestIdHeader]: requestId,
    ...answer.headers,
    ...extraHeaders,
  };
  if (text.length > 0) headers['Content-Type'] = 'application/json; charset=utf-8';
  headers['Content-Length'] = Buffer.byteLength(text);
  response.writeHead(answer.status, headers);
  response.end(text);
}
