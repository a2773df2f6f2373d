/**
 * The OpenTelemetry span of one gateway decision, carrying the same allow-listed attributes as
 * its `gateway_decided` ledger event (a no-op unless the host installed an SDK).
 */
import { type Span, SpanStatusCode, trace } from '@opentelemetry/api';
import type { GatewayDecisionEvent } from './decision-log.js';

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
