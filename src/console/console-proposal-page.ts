/** The proposal page: exactly what would happen, the tally, and approve / deny / resolve forms. */
import type { ProposalDetails } from '../approvals/approvals-types.js';
import { html, type SafeHtml } from './console-html.js';
import {
  countdown,
  jsonBlock,
  layout,
  type PageViewer,
  previewText,
  statusBadge,
} from './console-layout.js';

/** `/proposals/ID?tenant=T` plus a suffix. */
export const proposalPath = (details: { proposal: string; tenant: string }, suffix = '') =>
  `/proposals/${encodeURIComponent(details.proposal)}${suffix}?tenant=${encodeURIComponent(details.tenant)}`;

function decisionForms(details: ProposalDetails, viewer: PageViewer): SafeHtml {
  const v = details.viewer;
  if (!v.isAuthority) {
    return html`<p class="notice">You are not one of this action's approvers; you can read it but not decide.</p>`;
  }
  if (v.decided !== null) {
    return html`<p class="notice ok">You ${v.decided === 'approve' ? 'approved' : 'denied'} this proposal.</p>`;
  }
  if (!v.mayDecide) {
    return html`<p class="notice">This proposal no longer waits for approval (${details.status ?? 'erased'}).</p>`;
  }
  const hidden = html`<input type="hidden" name="csrf" value="${viewer.csrfToken}">`;
  return html`<div class="decide">
<form method="post" action="${proposalPath(details, '/approve')}">${hidden}
<label for="approve-reason">Reason (optional)</label>
<textarea id="approve-reason" name="reason" rows="2" maxlength="1000"></textarea>
<p><button type="submit" class="approve" id="approve">Approve</button></p></form>
<form method="post" action="${proposalPath(details, '/deny')}">${hidden}
<label for="deny-reason">Reason (required to deny)</label>
<textarea id="deny-reason" name="reason" rows="2" maxlength="1000" required></textarea>
<p><button type="submit" class="deny" id="deny">Deny</button></p></form>
</div>
<p class="muted">The ledger keeps a keyed digest of your reason (proof of what you wrote), not its text.</p>`;
}

function resolveForm(details: ProposalDetails, viewer: PageViewer): SafeHtml {
  if (!details.viewer.mayResolve) return html``;
  return html`<h2 id="resolve">Resolve as operator</h2>
<p>The guard could not tell whether this happened. Check with the provider, then attest what you found.</p>
<form method="post" action="${proposalPath(details, '/resolve')}">
<input type="hidden" name="csrf" value="${viewer.csrfToken}">
<fieldset><legend>What did the provider show?</legend>
<label><input type="radio" name="finding" value="absent" required> Absent: no such write exists (releases the effect)</label>
<label><input type="radio" name="finding" value="present"> Present: the write exists, with this receipt</label>
</fieldset>
<label for="receipt-id">Receipt id (when present)</label><input type="text" id="receipt-id" name="receipt_id" maxlength="200">
<label for="receipt-provider">Provider (when present)</label><input type="text" id="receipt-provider" name="receipt_provider" maxlength="100">
<label for="note">What you checked, and where</label><textarea id="note" name="note" rows="3" maxlength="4096" required></textarea>
<p><button type="submit">Record the finding</button></p></form>`;
}

/** The whole proposal page. `flash` is a one-line outcome of the last action. */
export function proposalPage(
  details: ProposalDetails,
  viewer: PageViewer,
  flash: string | undefined,
): string {
  const a = details.approvals;
  return layout(
    previewText(details.preview),
    html`<h1>${previewText(details.preview)}</h1>
${flash === undefined ? '' : html`<p class="notice ok" role="status">${flash}</p>`}
<dl class="facts">
<dt>Status</dt><dd>${statusBadge(details.status)}${details.reasonCode === null ? '' : html` <span class="muted">${details.reasonCode}</span>`}</dd>
<dt>Action</dt><dd><code>${details.actionType}</code></dd>
<dt>Tenant</dt><dd>${details.tenant}</dd>
<dt>Requested by</dt><dd>${details.principal}${details.agent === null ? '' : html` via agent <strong>${details.agent}</strong>`}</dd>
<dt>Why approval</dt><dd>${details.policy.decision}: <code>${details.policy.reasonCode}</code></dd>
<dt>Proposed</dt><dd>${details.createdAt}</dd>
<dt>Expires</dt><dd>${details.expiresAt}${details.status === 'awaiting_authority' ? html` (${countdown(details.expiresAtMs, details.expiresAt)})` : ''}</dd>
<dt>Proposal id</dt><dd><code>${details.proposal}</code></dd>
</dl>
<h2>What will happen</h2>
${jsonBlock(details.preview)}
<h2>Protected fields <span class="muted">(they define the effect)</span></h2>
<div class="scroll"><table><tbody>${details.protectedFields.map(
      (field) =>
        html`<tr><th scope="row">${field.name}</th><td><code>${JSON.stringify(field.value)}</code></td></tr>`,
    )}</tbody></table></div>
<details><summary>Full input</summary>${jsonBlock(details.input)}</details>
<h2>Commitment</h2>
${
  details.commitment === undefined
    ? html`<p class="muted">(erased)</p>`
    : html`<dl class="facts"><dt>Digest</dt><dd><code id="commitment">${details.commitment.value}</code></dd>
<dt>Key</dt><dd>${details.commitment.algorithm} · ${details.commitment.keyHandle} v${details.commitment.keyVersion}</dd>
<dt>Effect key</dt><dd><code>${details.semanticEffectKey ?? ''}</code></dd></dl>
<p class="muted">Your decision binds exactly this commitment: a changed proposal would need a new approval.</p>`
}
<h2>Approvals: <span id="tally">${a.approvedBy.length} of ${a.required}</span>${a.rejectedBy === null ? '' : html` · denied by ${a.rejectedBy}`}</h2>
<div class="scroll"><table><thead><tr><th scope="col">Approver</th><th scope="col">Decision</th><th scope="col">When</th><th scope="col">Assurance</th></tr></thead><tbody>
${a.authorities.map(
  (entry) =>
    html`<tr><td>${entry.id}</td><td>${entry.decision ?? 'pending'}</td><td>${entry.at ?? ''}</td><td>${entry.channelAssurance ?? ''} <span class="muted">(needs ${entry.requiredAssurance})</span></td></tr>`,
)}
</tbody></table></div>
${decisionForms(details, viewer)}
${resolveForm(details, viewer)}
${
  details.receipts.length === 0
    ? ''
    : html`<h2>Receipts</h2><ul>${details.receipts.map((r) => html`<li><code>${r.id}</code> (${r.provider})</li>`)}</ul>`
}
<p><a href="${proposalPath(details, '/timeline')}">Timeline from the ledger</a></p>`,
    viewer,
  );
}
