/**
 * Small helpers the HTML report and its timeline diagram share: escaping for HTML and inline SVG,
 * badges, anchors, label cutting and deterministic number formatting (no locale, no clock).
 */
import type { ScenarioReport } from './report-types.js';

/** The longest label drawn in the timeline, in code points (the full text stays in the tooltip). */
export const LABEL_CHARS = 30;

const ESCAPES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** Escape for HTML text and double- or single-quoted attributes, in HTML and inline SVG alike. */
export function esc(value: string): string {
  return value.replace(/[&<>"']/g, (ch) => ESCAPES[ch] ?? ch);
}

export function badge(kind: 'pass' | 'fail' | 'na' | 'none', label: string): string {
  return `<span class="badge ${kind}">${esc(label)}</span>`;
}

/** A section id that is unique (it carries the position) and safe in an attribute and a URL. */
export function anchorFor(report: ScenarioReport, index: number): string {
  const slug = report.scenario
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .slice(0, 48)
    .replace(/^-+|-+$/g, '');
  return `scenario-${index + 1}${slug === '' ? '' : `-${slug}`}`;
}

/** Cut a label to `max` code points, with an ellipsis; the full text stays in the tooltip. */
export function truncate(value: string, max = LABEL_CHARS): string {
  const flat = value.replace(/\s+/g, ' ');
  const chars = Array.from(flat);
  return chars.length <= max ? flat : `${chars.slice(0, max - 1).join('')}…`;
}

export function plural(count: number, one: string, many: string): string {
  return count === 1 ? one : many;
}

/** `250 ms`, `1.5 s`, `2 min 5 s`; deterministic, no locale. */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms)) return '?';
  if (Math.abs(ms) < 1000) return `${Math.round(ms)} ms`;
  if (Math.abs(ms) < 60_000) return `${(ms / 1000).toFixed(ms % 1000 === 0 ? 0 : 2)} s`;
  const minutes = Math.trunc(ms / 60_000);
  return `${minutes} min ${Math.round((ms - minutes * 60_000) / 1000)} s`;
}

export function round(value: number): number {
  return Math.round(value * 10) / 10;
}
