/**
 * HTML with escaping by default: every interpolated value is escaped unless it is already
 * `SafeHtml` (built by this tag). Hostile strings from proposals, principals or the ledger can
 * only ever appear as text.
 */

/** Markup built by {@link html}; the only thing interpolated without escaping. */
export class SafeHtml {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

const ESCAPES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
  '`': '&#96;',
};

/** Escapes text for element content and quoted attributes. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"'`]/g, (char) => ESCAPES[char] ?? char);
}

/** A value allowed inside `html`: text, numbers, markup, lists of them; null/false render nothing. */
export type HtmlValue =
  | string
  | number
  | SafeHtml
  | null
  | undefined
  | false
  | readonly HtmlValue[];

function render(value: HtmlValue): string {
  if (value === null || value === undefined || value === false) return '';
  if (value instanceof SafeHtml) return value.value;
  if (Array.isArray(value)) return value.map((item) => render(item as HtmlValue)).join('');
  return escapeHtml(String(value));
}

/** The tag: `html\`<p>${text}</p>\``. */
export function html(strings: TemplateStringsArray, ...values: readonly HtmlValue[]): SafeHtml {
  let out = strings[0] ?? '';
  for (let index = 0; index < values.length; index++) {
    out += render(values[index] as HtmlValue) + (strings[index + 1] ?? '');
  }
  return new SafeHtml(out);
}
