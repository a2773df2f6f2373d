/**
 * Every gateway decision becomes an event with allow-listed metadata — door, decision, reason,
 * upstream, route template or tool, binding, agent, principal, proposal, outcome, wire status and
 * keyed digests — never a body, a raw path or a credential (I8). Events are written to the
 * gateway state in batches (a read must not wait for a disk sync) and, as OpenTelemetry span
 * attributes, to whatever tracer the host installed (a no-op otherwise).
 */
import { type Span, SpanStatusCode, trace } from '@opentelemetry/api';
import type { DecisionKind, DecisionReason } from './decision-vocabulary.js';
import type { GatewayStateStore } from './state/gateway-state.js';

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

/** Receives decision events; never throws and never blocks the answer on a disk write. */
export interface DecisionLog {
  record(event: GatewayDecisionEvent): void;
  /** Writes what is buffered. */
  flush(): Promise<void>;
  /** Flushes and stops the timer. */
  close(): Promise<void>;
}

/** Options of {@link createDecisionLog}. */
export interface DecisionLogOptions {
  /** How long an event may wait in the buffer, in ms. @default 50 */
  readonly flushIntervalMs?: number;
  /** Flush at once at this many buffered events. @default 256 */
  readonly maxBatch?: number;
  /** Called when a batch cannot be written (it is dropped). @default ignore */
  readonly onError?: (error: unknown) => void;
}

/** A batching decision log over a gateway state store. */
export function createDecisionLog(
  state: GatewayStateStore,
  options: DecisionLogOptions = {},
): DecisionLog {
  const maxBatch = options.maxBatch ?? 256;
  const interval = options.flushIntervalMs ?? 50;
  let buffer: { tenant: string; atMs: number; event: string }[] = [];
  let timer: NodeJS.Timeout | undefined;
  let writing: Promise<void> = Promise.resolve();
  const flush = (): Promise<void> => {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
    if (buffer.length === 0) return writing;
    const batch = buffer;
    buffer = [];
    writing = writing
      .then(() => state.appendDecisions(batch))
      .catch((error: unknown) => {
        try {
          options.onError?.(error);
        } catch {
          // Nobody left to tell.
        }
      });
    return writing;
  };
  return {
    record(event) {
      // Plain JSON: the event is built with a fixed key order and holds only strings and numbers.
      buffer.push({
        tenant: event.tenant,
        atMs: Date.parse(event.at),
        event: JSON.stringify(event),
      });
      if (buffer.length >= maxBatch) void flush();
      else timer ??= setTimeout(() => void flush(), interval);
    },
    flush,
    close: flush,
  };
}

const tracer = trace.getTracer('sideguard.gateway');

/** Starts the span of one gateway call; end it with {@link endDecisionSpan}. */
export function startDecisionSpan(door: 'http' | 'mcp'): Span {
  return tracer.startSpan(`sideguard.gateway.${door}`);
}

/** Puts the event's allow-listed fields on the span and ends it. */
export function endDecisionSpan(span: Span, event: GatewayDecisionEvent): void {
  if (span.isRecording()) {
    const attributes: Record<string, string | number> = {
      'sideguard.door': event.door,
      'sideguard.tenant': event.tenant,
      'sideguard.decision': event.decision,
      'sideguard.reason': event.reason,
      'sideguard.subject': event.subject,
    };
    const optional: [string, string | number | null | undefined][] = [
      ['sideguard.upstream', event.upstream],
      ['sideguard.binding', event.binding],
      ['sideguard.agent', event.agent],
      ['sideguard.principal', event.principal],
      ['sideguard.proposal', event.proposal],
      ['sideguard.outcome', event.outcome],
      ['sideguard.code', event.code],
      ['sideguard.request_digest', event.requestDigest],
      ['http.response.status_code', event.status],
    ];
    for (const [name, value] of optional) {
      if (value !== null && value !== undefined) attributes[name] = value;
    }
    span.setAttributes(attributes);
    if (event.status !== undefined && event.status >= 500) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: event.code ?? 'error' });
    }
  }
  span.end();
}
