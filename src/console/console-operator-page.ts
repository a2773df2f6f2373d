/** The operator page: proposals the guard could not settle, with what may be done about each. */
import type { StuckItem } from '../approvals/approvals-types.js';
import { html } from './console-html.js';
import { layout, type PageViewer, statusBadge } from './console-layout.js';
import { proposalPath } from './console-proposal-page.js';

const WHAT_TO_DO: Readonly<Record<string, string>> = {
  verification_unresolved: 'Check with the provider whether it happened, then resolve it.',
  failed_unknown: 'Check with the provider whether it happened, then resolve it.',
  compensation_required: 'It happened but a later step failed: compensate it at the provider.',
};

/** The whole operator page. */
export function operatorPage(items: readonly StuckItem[], viewer: PageViewer): string {
  return layout(
    'Operator',
    html`<h1>Stuck proposals (${items.length})</h1>
<div class="scroll"><table><thead><tr><th scope="col">Proposal</th><th scope="col">Status</th><th scope="col">Requested by</th><th scope="col">Since</th><th scope="col">What to do</th></tr></thead><tbody>
${
  items.length === 0
    ? html`<tr><td colspan="5" class="muted">Nothing is stuck.</td></tr>`
    : items.map(
        (
          item,
        ) => html`<tr data-proposal="${item.proposal}"><td><a href="${proposalPath(item)}${item.resolvable ? '#resolve' : ''}">${item.proposal}</a><br><span class="muted">${item.actionType} · ${item.tenant}</span></td>
<td>${statusBadge(item.status)}<br><span class="muted">${item.reasonCode ?? ''}</span></td>
<td>${item.principal}${item.agent === null ? '' : html`<br><span class="muted">via ${item.agent}</span>`}</td>
<td>${item.updatedAt}</td><td>${WHAT_TO_DO[item.status] ?? ''}</td></tr>`,
      )
}
</tbody></table></div>`,
    viewer,
  );
}
