/**
 * Faults at the commit point, delivered: the ones that end a request before execution (rate
 * limit, drop before dispatch, error before write), the waits before the write (latency, hold),
 * and the ones that replace the answer after the write (error, drop or hang after write).
 * Every request that reaches the commit point leaves exactly one trace entry.
 */
import type { FaultSpec } from './fault-plan.js';
import { RequestDecision, RequestPhase, ResponseDelivery } from './observations.js';
import type { RequestExchange, TracePoint } from './request-exchange.js';
import type { HeldRequest, SandboxRuntime } from './sandbox-runtime.js';
import type { ProviderErrorShapes, ProviderResponse } from './sandbox-types.js';

/** How long a `hang_after_write` holds the connection when the plan names no `hangMs`. */
export const defaultHangMs = 60_000;

/** One request at the commit point, with the fault the plan chose for it (or none). */
export interface CommitPoint {
  readonly runtime: SandboxRuntime;
  readonly exchange: RequestExchange;
  readonly errors: ProviderErrorShapes;
  readonly fault: FaultSpec | null;
  readonly point: TracePoint;
}

/** Sends an answer decided at the commit point and traces it. */
export function sendTraced(
  commit: CommitPoint,
  answer: ProviderResponse,
  decision: RequestDecision,
  headers: Readonly<Record<string, string>> = {},
): void {
  commit.exchange.trace(
    commit.point,
    ResponseDelivery.sent,
    commit.exchange.send(answer, decision, { ...headers }),
  );
}

/** Delivers a fault that ends the request before anything executes; `true` when one did. */
export function faultBeforeExecution(commit: CommitPoint): boolean {
  const { fault, errors, exchange } = commit;
  switch (fault?.kind) {
    case 'rate_limit':
      sendTraced(commit, errors.rateLimited(fault.retryAfterSeconds ?? 1), RequestDecision.faulted);
      return true;
    case 'drop_before_dispatch':
      exchange.drop(RequestDecision.faulted, ResponseDelivery.dropped);
      exchange.trace(commit.point, ResponseDelivery.dropped, null);
      return true;
    case 'error_before_write':
      sendTraced(commit, errors.internal(fault.status ?? 500), RequestDecision.faulted);
      return true;
    default:
      return false;
  }
}

/**
 * Waits out a `latency` or `hold` fault before execution. `false` when the request must not
 * execute: a reset retired it (its connection is closed, nothing logged) or its hold was aborted.
 */
export async function waitBeforeWrite(
  commit: CommitPoint,
  held: Omit<HeldRequest, 'holdId' | 'heldAt' | 'requestIndex' | 'requestId'>,
): Promise<boolean> {
  const { fault, exchange, runtime } = commit;
  if (fault?.kind === 'latency') {
    exchange.phase = RequestPhase.delayed;
    await runtime.sleep(fault.latencyMs);
  }
  if (exchange.outlivedReset()) {
    exchange.abandon();
    return false;
  }
  if (fault?.kind !== 'hold') return true;
  exchange.phase = RequestPhase.held;
  const hold = runtime.hold({
    ...held,
    requestId: exchange.requestId,
    requestIndex: commit.point.requestIndex,
  });
  if ((await hold.outcome) === 'released') return true;
  exchange.drop(RequestDecision.aborted, ResponseDelivery.dropped);
  exchange.trace(commit.point, ResponseDelivery.dropped, null);
  return false;
}

/** Sends the answer of an executed (or replayed) request, unless an after-write fault replaces it. */
export async function deliverAnswer(
  commit: CommitPoint,
  answer: ProviderResponse,
  decision: RequestDecision,
  headers: Readonly<Record<string, string>>,
  bodyText?: string,
): Promise<void> {
  const { fault, errors, exchange, runtime, point } = commit;
  switch (fault?.kind) {
    case 'error_after_write':
      sendTraced(commit, errors.internal(fault.status ?? 500), RequestDecision.faulted, headers);
      return;
    case 'drop_after_write':
      exchange.drop(RequestDecision.faulted, ResponseDelivery.dropped);
      exchange.trace(point, ResponseDelivery.dropped, null);
      return;
    case 'hang_after_write':
      exchange.observation.decision = RequestDecision.faulted;
      exchange.phase = RequestPhase.hanging;
      exchange.trace(point, ResponseDelivery.hung, null);
      await runtime.sleep(fault.hangMs ?? defaultHangMs);
      exchange.drop(RequestDecision.faulted, ResponseDelivery.hung);
      return;
    default: {
      const status = exchange.send(answer, decision, { ...headers }, bodyText);
      exchange.trace(
        point,
        exchange.clientGone && status === null
          ? ResponseDelivery.clientGone
          : ResponseDelivery.sent,
        status,
      );
    }
  }
}
