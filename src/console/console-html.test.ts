import { describe, expect, it } from 'vitest';
import { escapeHtml, html } from './console-html.js';

describe('console html', () => {
  it('escapes every interpolated string, in text and in attributes, but not its own markup', () => {
    const hostile = `<script>alert('x')</script>"\`&`;
    const inner = html`<b>${hostile}</b>`;
    const page = html`<p title="${hostile}">${inner}${[hostile, 3, null, false]}</p>`;
    expect(page.value).toBe(
      `<p title="&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&quot;&#96;&amp;"><b>&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&quot;&#96;&amp;</b>&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&quot;&#96;&amp;3</p>`,
    );
    expect(escapeHtml('a&b')).toBe('a&amp;b');
  });
});
