/**
 * The timeline of a scenario report: the ledger is the backbone (sequence order); each provider
 * write request is placed right after the `commit_started` whose idempotency key it carried;
 * other requests (reads, other actors, bypasses) are placed by time.
 */
import type { LedgerEvent } from '../core/ledger.js';
import type { SandboxReceiptEvidence, SandboxRequestEvidence } from './evidence-files.js';
import { WRITE_METHODS } from './evidence-model.js';
import type { TimelineEntry } from './report-types.js';

/** Builds the timeline from the ledger, the sandbox's requests and its receipts. */
export function buildTimeline(
  events: readonly LedgerEvent[],
  requests: readonly SandboxRequestEvidence[],
  receipts: readonly SandboxReceiptEvidence[],
): TimelineEntry[] {
  const byReceipt = new Map(receipts.map((r) => [r.receiptId, r]));
  const requestEntries = (request: SandboxRequestEvidence): TimelineEntry[] => {
    const entries: TimelineEntry[] = [
      {
        at: request.receivedAt,
        source: 'sandbox',
        sequence: null,
        proposal: null,
        type:
          request.fault === null
            ? `request:${request.operation ?? request.method}`
            : `fault:${request.fault}`,
        status: request.status === null ? null : String(request.status),
        detail: `${request.method} ${request.operation ?? ''} → ${request.writeOutcome}, ${request.delivery}${request.fault ? ` (${request.fault})` : ''}`,
      },
    ];
    const receipt = request.receiptId === null ? undefined : byReceipt.get(request.receiptId);
    if (receipt !== undefined) {
      entries.push({
        at: receipt.committedAt,
        source: 'sandbox',
        sequence: null,
        proposal: null,
        type: `write:${receipt.operation}`,
        status: null,
        detail: `${receipt.objectId}${receipt.amountMinor === undefined ? '' : ` ${receipt.amountMinor}`}${receipt.effectKey === null ? ' (no effect: another actor)' : ''}`,
      });
    }
    return entries;
  };
  const writes = requests.filter((r) => WRITE_METHODS.has(r.method));
  const placed = new Set<number>();
  const timeline: TimelineEntry[] = [];
  const flushBefore = (at: string) => {
    for (const request of writes) {
      if (!placed.has(request.sequence) && request.receivedAt < at) {
        placed.add(request.sequence);
        timeline.push(...requestEntries(request));
      }
    }
  };
  for (const event of events) {
    if (event.type !== 'commit_started') flushBefore(event.at);
    const reason = event.data.reasonCode;
    const receipt = (event.data.receipt as { id?: string } | undefined)?.id;
    timeline.push({
      at: event.at,
      source: 'ledger',
      sequence: event.sequence,
      proposal: event.proposal,
      type: event.type,
      status: event.status,
      detail:
        [typeof reason === 'string' ? reason : undefined, receipt].filter(Boolean).join(' ') || '',
    });
    if (event.type === 'commit_started') {
      const key = event.data.providerIdempotencyKey;
      for (const request of writes) {
        if (!placed.has(request.sequence) && request.idempotencyKey === key) {
          placed.add(request.sequence);
          timeline.push(...requestEntries(request));
        }
      }
    }
  }
  flushBefore('\uffff');
  return timeline;
}
