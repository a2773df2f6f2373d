/** The inbox: proposals awaiting the viewer, soonest to expire first, with filters. */
import type { PendingFilter, PendingItem } from '../approvals/approvals-types.js';
import { html, type SafeHtml } from './console-html.js';
import { countdown, layout, type PageViewer, previewText } from './console-layout.js';

/** The query string of a filter (for links and the live stream). */
export function filterQuery(filter: PendingFilter): string {
  const params = new URLSearchParams();
  if (filter.tenant) params.set('tenant', filter.tenant);
  if (filter.action) params.set('action', filter.action);
  if (filter.requester) params.set('requester', filter.requester);
  const text = params.toString();
  return text === '' ? '' : `?${text}`;
}

const proposalHref = (item: { proposal: string; tenant: string }) =>
  `/proposals/${encodeURIComponent(item.proposal)}?tenant=${encodeURIComponent(item.tenant)}`;

/** The table rows (also what the live stream sends). */
export function inboxRows(items: readonly PendingItem[]): SafeHtml {
  if (items.length === 0) {
    return html`<tr><td colspan="6" class="muted">Nothing waits for your approval.</td></tr>`;
  }
  return html`${items.map(
    (item) => html`<tr data-proposal="${item.proposal}">
<td>${countdown(item.expiresAtMs, item.expiresAt)}</td>
<td><a href="${proposalHref(item)}">${previewText(item.preview)}</a><br><span class="muted">${item.actionType}</span></td>
<td>${item.principal}${item.agent === null ? '' : html`<br><span class="muted">via ${item.agent}</span>`}</td>
<td class="hide-narrow">${item.tenant}</td>
<td>${item.approvals.approvedBy.length} of ${item.approvals.required}</td>
<td>${item.yourDecision === null ? html`<a href="${proposalHref(item)}">Review</a>` : item.yourDecision === 'approve' ? 'you approved' : 'you denied'}</td>
</tr>`,
  )}`;
}

/** The whole inbox page. */
export function inboxPage(
  items: readonly PendingItem[],
  filter: PendingFilter,
  viewer: PageViewer,
  options: { readonly tenants: readonly string[]; readonly actions: readonly string[] },
): string {
  const option = (value: string, selected: string | undefined) =>
    html`<option value="${value}"${value === selected ? html` selected` : ''}>${value}</option>`;
  return layout(
    'Inbox',
    html`<h1>Waiting for your approval (<span id="inbox-count">${items.length}</span>)</h1>
<form class="filters" method="get" action="/">
<div><label for="f-tenant">Tenant</label><select id="f-tenant" name="tenant"><option value="">all</option>${options.tenants.map((t) => option(t, filter.tenant))}</select></div>
<div><label for="f-action">Action</label><select id="f-action" name="action"><option value="">all</option>${options.actions.map((a) => option(a, filter.action))}</select></div>
<div><label for="f-requester">Requested by</label><input type="text" id="f-requester" name="requester" value="${filter.requester ?? ''}"></div>
<div><button type="submit">Filter</button></div>
</form>
<div class="scroll"><table><caption class="muted">Soonest to expire first; updates live.</caption>
<thead><tr><th scope="col">Expires</th><th scope="col">What</th><th scope="col">Requested by</th><th scope="col" class="hide-narrow">Tenant</th><th scope="col">Approvals</th><th scope="col">You</th></tr></thead>
<tbody id="inbox-rows">${inboxRows(items)}</tbody></table></div>`,
    viewer,
    { live: `/events${filterQuery(filter)}` },
  );
}
