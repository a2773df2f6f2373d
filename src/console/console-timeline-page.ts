/**
 * The timeline page: the proposal's ledger events as a vertical SVG (one mark per event, coloured
 * by kind: people, provider writes, failures) and a table, the receipts, and whether the tenant's
 * chain verifies. The reports' timeline (`src/verify`) is built from scenario evidence files; this
 * one needs only the ledger, so it draws its own (decision 092).
 */
import type { ProposalTimeline } from '../approvals/approvals-types.js';
import type { LedgerEvent } from '../core/ledger.js';
import { html, type SafeHtml } from './console-html.js';
import { layout, type PageViewer } from './console-layout.js';
import { proposalPath } from './console-proposal-page.js';

const PEOPLE = new Set([
  'authority_recorded',
  'authority_satisfied',
  'authority_rejected',
  'denied',
  'operator_resolved',
]);
const WRITES = new Set(['commit_started', 'committed', 'verification_observed']);
const BAD = new Set(['expired', 'failed_unknown', 'contract_rejected', 'compensation_required']);

const kindOf = (event: LedgerEvent): string =>
  PEOPLE.has(event.type)
    ? 'people'
    : WRITES.has(event.type)
      ? 'write'
      : BAD.has(event.type)
        ? 'bad'
        : 'step';

function shortData(event: LedgerEvent): string {
  const data = event.data as Record<string, unknown>;
  const parts: string[] = [];
  for (const key of ['authority', 'decision', 'reasonCode', 'operator', 'finding', 'receipt']) {
    const value = data[key];
    if (typeof value === 'string') parts.push(value);
    else if (value !== undefined && value !== null && key === 'receipt')
      parts.push(JSON.stringify(value));
  }
  return parts.join(' · ').slice(0, 80);
}

/** The SVG: one row per event. */
export function timelineSvg(events: readonly LedgerEvent[]): SafeHtml {
  const row = 34;
  const height = Math.max(1, events.length) * row + 10;
  return html`<svg class="timeline" viewBox="0 0 760 ${height}" width="760" height="${height}" role="img" aria-labelledby="tl-title"><title id="tl-title">Ledger timeline: ${events.length} events</title>
<line class="spine" x1="20" y1="10" x2="20" y2="${height - 10}"></line>
${events.map((event, index) => {
  const y = 20 + index * row;
  return html`<g data-type="${event.type}"><circle class="${kindOf(event)}" cx="20" cy="${y}" r="7"></circle>
<text x="40" y="${y + 4}">#${event.sequence} ${event.type}${event.status === null ? '' : ` → ${event.status}`}</text>
<text class="at" x="440" y="${y + 4}">${event.at.slice(11, 23)} ${shortData(event)}</text></g>`;
})}
</svg>`;
}

/** The whole timeline page. */
export function timelinePage(timeline: ProposalTimeline, viewer: PageViewer): string {
  const chain = timeline.chain;
  return layout(
    'Timeline',
    html`<h1>Timeline of <code>${timeline.proposal}</code></h1>
<p><a href="${proposalPath(timeline)}">Back to the proposal</a></p>
<p class="notice ${chain.kind === 'valid' ? 'ok' : 'error'}" id="chain">${
      chain.kind === 'valid'
        ? `The tenant's ledger chain verifies (${chain.count} events).`
        : `The tenant's ledger chain does NOT verify at event ${chain.sequence ?? chain.index}: ${chain.message}`
    }</p>
<p>Decision path: <code>${timeline.decisionPath.join(' → ')}</code></p>
<div class="scroll">${timelineSvg(timeline.events)}</div>
<h2>Receipts</h2>
${timeline.receipts.length === 0 ? html`<p class="muted">No provider receipt yet.</p>` : html`<ul id="receipts">${timeline.receipts.map((r) => html`<li><code>${r.id}</code> (${r.provider})</li>`)}</ul>`}
<p>Verification attempts: ${timeline.verificationAttempts}</p>
<h2>Events</h2>
<div class="scroll"><table><thead><tr><th scope="col">#</th><th scope="col">At</th><th scope="col">Event</th><th scope="col">Status</th><th scope="col">Data</th></tr></thead><tbody>
${timeline.events.map(
  (event) =>
    html`<tr><td>${event.sequence}</td><td>${event.at}</td><td>${event.type}</td><td>${event.status ?? ''}</td><td><code>${JSON.stringify(event.data)}</code></td></tr>`,
)}
</tbody></table></div>`,
    viewer,
  );
}
