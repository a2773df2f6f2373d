/** The page frame every console page shares, plus the login and message pages. */
import type { JsonValue } from '../core/canonical-json.js';
import { html, type SafeHtml } from './console-html.js';

/** Who is looking, for the header and the forms. */
export interface PageViewer {
  readonly id: string;
  readonly csrfToken: string;
  readonly operates: boolean;
}

/** A whole page. `live` is an SSE URL the script subscribes to. */
export function layout(
  title: string,
  body: SafeHtml,
  viewer: PageViewer | undefined,
  options: { readonly live?: string } = {},
): string {
  return `<!doctype html>${html`<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${title} · Sideguard approvals</title>
<link rel="stylesheet" href="/assets/console.css">
<script src="/assets/console.js" defer></script>
</head><body${options.live === undefined ? '' : html` data-live="${options.live}"`}>
<a class="skip" href="#main">Skip to content</a>
<header><strong>Sideguard approvals</strong>${
    viewer === undefined
      ? ''
      : html`<nav aria-label="Console"><a href="/">Inbox</a>${viewer.operates ? html`<a href="/operator">Operator</a>` : ''}
<span class="muted">Signed in as <strong>${viewer.id}</strong></span>
<form method="post" action="/logout"><input type="hidden" name="csrf" value="${viewer.csrfToken}"><button type="submit">Log out</button></form></nav>`
  }</header>
<main id="main">${body}</main></body></html>`}`;
}

/** The login form. `loginToken` is the pre-session CSRF token. */
export function loginPage(options: {
  readonly loginToken: string;
  readonly next: string;
  readonly message?: string;
  readonly approver?: string;
}): string {
  return layout(
    'Log in',
    html`<h1>Log in to approve</h1>
${options.message === undefined ? '' : html`<p class="notice error" role="alert">${options.message}</p>`}
<form method="post" action="/login">
<input type="hidden" name="login_token" value="${options.loginToken}">
<input type="hidden" name="next" value="${options.next}">
<label for="approver">Approver id</label>
<input type="text" id="approver" name="approver" autocomplete="username" required value="${options.approver ?? ''}" autofocus>
<label for="secret">Secret</label>
<input type="password" id="secret" name="secret" autocomplete="current-password" required>
<p><button type="submit">Log in</button></p>
</form>
<p class="muted">Your id and secret come from whoever runs Sideguard (they keep only a hash of the secret).</p>`,
    undefined,
  );
}

/** A page with one message: refusals and errors. */
export function messagePage(
  title: string,
  message: string,
  viewer: PageViewer | undefined,
  back: { readonly href: string; readonly label: string } = {
    href: '/',
    label: 'Back to the inbox',
  },
): string {
  return layout(
    title,
    html`<h1>${title}</h1><p class="notice error" role="alert">${message}</p><p><a href="${back.href}">${back.label}</a></p>`,
    viewer,
  );
}

/** JSON shown as indented text (escaped by `html`). */
export function jsonBlock(value: JsonValue | undefined): SafeHtml {
  return value === undefined
    ? html`<p class="muted">(erased)</p>`
    : html`<pre>${JSON.stringify(value, null, 2)}</pre>`;
}

/** One-line text for a preview: its `summary` when it has one. */
export function previewText(preview: JsonValue | undefined): string {
  if (preview === undefined) return '(no preview)';
  if (typeof preview === 'object' && preview !== null && !Array.isArray(preview)) {
    const summary = (preview as Record<string, JsonValue>).summary;
    if (typeof summary === 'string') return summary;
  }
  return JSON.stringify(preview);
}

/** A status badge. */
export const statusBadge = (status: string | null): SafeHtml =>
  html`<span class="status status-${status ?? 'none'}">${status ?? 'none'}</span>`;

/** A countdown the script keeps current; the server renders the absolute time. */
export const countdown = (expiresAtMs: number, expiresAt: string): SafeHtml =>
  html`<time datetime="${expiresAt}" data-expires-ms="${expiresAtMs}">${expiresAt}</time>`;
