/**
 * The report's timeline diagram: one inline SVG per scenario with the guard's ledger events above
 * the provider sandbox's requests on a shared time axis, a marker shape and colour per kind, and a
 * legend. Pure and escaped like the rest of the page (`report-html.ts`).
 */
import { esc, formatDuration, plural, round, truncate } from './report-html-kit.js';
import { type SortedTimelineEntry, sortTimeline } from './report-markdown.js';
import type { ScenarioReport, TimelineEntry } from './report-types.js';
/** What a ledger event is about; each kind has its own colour and its own marker shape. */
export type LedgerKind =
  | 'decision'
  | 'authority'
  | 'commit-start'
  | 'commit'
  | 'verification'
  | 'failure'
  | 'compensation'
  | 'other';

const LEDGER_KINDS: Readonly<Record<string, LedgerKind>> = {
  contract_validated: 'decision',
  policy_decided: 'decision',
  idempotency_decided: 'decision',
  dry_run_predicted: 'decision',
  retry_resolved: 'decision',
  resend_allowed: 'decision',
  authority_recorded: 'authority',
  authority_satisfied: 'authority',
  commit_started: 'commit-start',
  committed: 'commit',
  verification_started: 'verification',
  verification_observed: 'verification',
  late_result_observed: 'verification',
  contract_rejected: 'failure',
  denied: 'failure',
  expired: 'failure',
  drift_detected: 'failure',
  superseded: 'failure',
  commit_failed: 'failure',
  commit_outcome_unknown: 'failure',
  partial_commit: 'failure',
  authority_rejected: 'failure',
  authority_lapsed: 'failure',
  lease_expired: 'failure',
  verification_unresolved: 'failure',
  compensation_failed: 'failure',
  compensation_required: 'compensation',
  compensation_started: 'compensation',
  compensated: 'compensation',
};

export function ledgerKind(type: string): LedgerKind {
  return Object.hasOwn(LEDGER_KINDS, type) ? LEDGER_KINDS[type]! : 'other';
}

/** How a reviewer reads each sandbox fault kind (see `src/sandbox/fault-plan.ts`). */
const FAULT_TEXT: Readonly<
  Record<string, { readonly text: string; readonly afterWrite: boolean }>
> = {
  latency: { text: 'latency', afterWrite: false },
  error_before_write: { text: 'error before write', afterWrite: false },
  error_after_write: { text: 'error after write', afterWrite: true },
  drop_before_dispatch: { text: 'dropped before dispatch', afterWrite: false },
  drop_after_write: { text: 'response lost after write', afterWrite: true },
  hang_after_write: { text: 'hung after write', afterWrite: true },
  hold: { text: 'held until released', afterWrite: false },
  rate_limit: { text: 'rate limited', afterWrite: false },
};

type PlacedEntry = SortedTimelineEntry;

export function proposalAliases(report: ScenarioReport): Map<string, string> {
  const aliases = new Map<string, string>();
  const add = (proposal: string | null): void => {
    if (proposal !== null && !aliases.has(proposal)) aliases.set(proposal, `P${aliases.size + 1}`);
  };
  for (const p of report.proposals) add(p.proposal);
  for (const e of report.timeline) add(e.proposal);
  return aliases;
}

// Geometry, in SVG user units (px at 100%).
const LEFT = 168;
const MIN_STEP = 40;
const MIN_AXIS_WIDTH = 680;
const RIGHT = 260;
const LEDGER_Y = 176;
const SANDBOX_Y = 296;
const AXIS_Y = 464;
const LEGEND_Y = AXIS_Y + 62;
const HEIGHT = LEGEND_Y + 58;

export function renderTimelineSvg(report: ScenarioReport, id: string): string {
  const placed = sortTimeline(report.timeline);
  const count = placed.length;
  const axisWidth = Math.max(MIN_AXIS_WIDTH, count * MIN_STEP);
  const step = count === 0 ? axisWidth : axisWidth / count;
  const axisEnd = LEFT + axisWidth;
  const width = axisEnd + RIGHT;
  const xOf = (column: number): number => round(LEFT + (column + 0.5) * step);
  const aliases = proposalAliases(report);
  const showAliases = aliases.size > 1;

  const ledgerCount = placed.filter((p) => p.entry.source === 'ledger').length;
  const writeCount = placed.filter((p) => isWrite(p.entry)).length;
  const faultCount = placed.filter((p) => p.entry.source === 'sandbox' && isFault(p.entry)).length;
  const status = report.action_status ?? 'none';

  const out: string[] = [
    `<svg class="tl" viewBox="0 0 ${width} ${HEIGHT}" width="${width}" height="${HEIGHT}" role="img" aria-labelledby="${id}-title ${id}-desc">`,
    `<title id="${id}-title">${esc(`Timeline of scenario ${report.scenario}`)}</title>`,
    `<desc id="${id}-desc">${esc(`${ledgerCount} ledger events and ${count - ledgerCount} sandbox entries (${writeCount} writes, ${faultCount} faults), in causal order; final status ${status}; scenario ${report.passed ? 'PASS' : 'FAIL'}.`)}</desc>`,
    '<defs>',
    `<marker id="${id}-arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0 0L10 5L0 10z" class="connector-head"/></marker>`,
    '</defs>',
    // Lanes.
    `<rect class="lane-band" x="${LEFT - 8}" y="${LEDGER_Y - 24}" width="${axisWidth + 16}" height="48" rx="6"/>`,
    `<rect class="lane-band sandbox" x="${LEFT - 8}" y="${SANDBOX_Y - 24}" width="${axisWidth + 16}" height="48" rx="6"/>`,
    `<line class="lane-line" x1="${LEFT - 8}" y1="${LEDGER_Y}" x2="${axisEnd + 8}" y2="${LEDGER_Y}"/>`,
    `<line class="lane-line" x1="${LEFT - 8}" y1="${SANDBOX_Y}" x2="${axisEnd + 8}" y2="${SANDBOX_Y}"/>`,
    `<text class="lane-name" x="12" y="${LEDGER_Y - 3}">Guard ledger</text>`,
    `<text class="lane-sub" x="12" y="${LEDGER_Y + 13}">${ledgerCount} ${plural(ledgerCount, 'event', 'events')}</text>`,
    `<text class="lane-name" x="12" y="${SANDBOX_Y - 3}">Provider sandbox</text>`,
    `<text class="lane-sub" x="12" y="${SANDBOX_Y + 13}">${writeCount} ${plural(writeCount, 'write', 'writes')} · ${faultCount} ${plural(faultCount, 'fault', 'faults')}</text>`,
  ];

  if (count === 0) {
    out.push(
      `<text class="empty-lane" x="${LEFT + 12}" y="${(LEDGER_Y + SANDBOX_Y) / 2 + 4}">No timeline entries.</text>`,
    );
  }

  // Faint column guides tie a ledger event and a sandbox entry to the same place on the axis.
  for (let column = 0; column < count; column++) {
    const x = xOf(column);
    out.push(`<line class="guide" x1="${x}" y1="${LEDGER_Y + 10}" x2="${x}" y2="${AXIS_Y - 6}"/>`);
  }

  // Connectors from commit_started to the write it caused: the latest unmatched commit_started
  // before the write (of the same proposal when the write names one). A write with no
  // commit_started before it gets no connector, which is itself the finding.
  const openCommits: { column: number; proposal: string | null }[] = [];
  placed.forEach((p, column) => {
    if (p.entry.source === 'ledger' && p.entry.type === 'commit_started') {
      openCommits.push({ column, proposal: p.entry.proposal });
    } else if (isWrite(p.entry)) {
      let match = -1;
      for (let i = openCommits.length - 1; i >= 0; i--) {
        const candidate = openCommits[i]!;
        if (p.entry.proposal === null || candidate.proposal === p.entry.proposal) {
          match = i;
          break;
        }
      }
      if (match >= 0) {
        const from = openCommits.splice(match, 1)[0]!;
        const x1 = xOf(from.column);
        const x2 = xOf(column);
        const mid = round((LEDGER_Y + SANDBOX_Y) / 2);
        out.push(
          `<path class="connector" d="M${x1} ${LEDGER_Y + 10} C${x1} ${mid} ${x2} ${mid} ${x2} ${SANDBOX_Y - 13}" marker-end="url(#${id}-arrow)"><title>${esc(`commit_started (#${p.entry.sequence ?? '?'}) caused this write`)}</title></path>`,
        );
      }
    }
  });

  placed.forEach((p, column) => {
    const x = xOf(column);
    out.push(
      p.entry.source === 'ledger'
        ? ledgerMarker(p, x, showAliases ? (aliases.get(p.entry.proposal ?? '') ?? null) : null)
        : sandboxMarker(p, x, report),
    );
  });

  out.push(...timeAxis(placed, xOf, step, axisEnd));
  out.push(...finalColumn(report, axisEnd));
  out.push(...legend());
  out.push('</svg>');
  return out.join('\n');
}

function ledgerMarker(p: PlacedEntry, x: number, alias: string | null): string {
  const { entry } = p;
  const kind = ledgerKind(entry.type);
  const seq = entry.sequence === null ? '' : `#${entry.sequence} `;
  const label = truncate(`${seq}${entry.type}${alias === null ? '' : ` · ${alias}`}`);
  const lx = x + 5;
  const ly = LEDGER_Y - 14;
  return [
    `<g class="ev k-${kind}">`,
    `<title>${esc(describe(entry))}</title>`,
    shape(kind, x, LEDGER_Y),
    `<text class="ev-label${kind === 'failure' ? ' warn' : ''}" x="${lx}" y="${ly}" transform="rotate(-45 ${lx} ${ly})">${esc(label)}</text>`,
    '</g>',
  ].join('');
}

function sandboxMarker(p: PlacedEntry, x: number, report: ScenarioReport): string {
  const { entry } = p;
  const y = SANDBOX_Y;
  const lx = x + 5;
  const ly = y + 16;
  const labelAt = (label: string, cls: string): string =>
    `<text class="ev-label ${cls}" x="${lx}" y="${ly}" transform="rotate(45 ${lx} ${ly})">${esc(truncate(label))}</text>`;
  const title = `<title>${esc(describe(entry))}</title>`;

  if (isWrite(entry)) {
    const operation = entry.type.slice('write:'.length);
    const receipt = receiptFor(entry, report);
    const receiptId = receipt?.id ?? (entry.detail.trim() === '' ? 'no receipt id' : entry.detail);
    const unclaimed = receipt !== null && !receipt.inLedger;
    return [
      `<g class="ev write${unclaimed ? ' unclaimed' : ''}">`,
      title,
      unclaimed ? `<circle class="unclaimed-ring" cx="${x}" cy="${y}" r="14"/>` : '',
      `<rect class="s-write" x="${x - 9}" y="${y - 9}" width="18" height="18" rx="3"/>`,
      `<path class="s-write-tick" d="M${x - 4.5} ${y}l3 3.5l6-7"/>`,
      labelAt(
        unclaimed ? `${receiptId} · NOT IN LEDGER` : `${receiptId} · ${operation}`,
        unclaimed ? 'warn' : 'write-label',
      ),
      '</g>',
    ].join('');
  }
  if (isFault(entry)) {
    const kind = entry.type.slice('fault:'.length);
    const known = Object.hasOwn(FAULT_TEXT, kind) ? FAULT_TEXT[kind]! : null;
    const after = known?.afterWrite ?? false;
    return [
      `<g class="ev fault${after ? ' after-write' : ''}">`,
      title,
      `<path class="s-fault" d="M${x + 2} ${y - 11}L${x - 6} ${y + 1}H${x - 1}L${x - 3} ${y + 11}L${x + 6} ${y - 1}H${x + 1}Z"/>`,
      labelAt(known?.text ?? kind, 'warn'),
      '</g>',
    ].join('');
  }
  return [
    '<g class="ev request">',
    title,
    `<circle class="s-request" cx="${x}" cy="${y}" r="3.5"/>`,
    labelAt(entry.detail.trim() === '' ? entry.type : `${entry.type} · ${entry.detail}`, 'muted'),
    '</g>',
  ].join('');
}

/** The marker shape of each ledger kind, so colour is never the only cue. */
function shape(kind: LedgerKind, x: number, y: number): string {
  switch (kind) {
    case 'decision':
      return `<circle class="mk" cx="${x}" cy="${y}" r="6.5"/>`;
    case 'authority':
      return `<path class="mk" d="M${x} ${y - 8}L${x + 8} ${y}L${x} ${y + 8}L${x - 8} ${y}Z"/>`;
    case 'commit-start':
      return `<rect class="mk" x="${x - 6}" y="${y - 6}" width="12" height="12"/>`;
    case 'commit':
      return `<rect class="mk" x="${x - 7}" y="${y - 7}" width="14" height="14"/>`;
    case 'verification':
      return `<path class="mk" d="M${x} ${y - 8}L${x + 7.5} ${y + 6}H${x - 7.5}Z"/>`;
    case 'failure':
      return `<circle class="mk" cx="${x}" cy="${y}" r="7.5"/><path class="mk-x" d="M${x - 3.5} ${y - 3.5}L${x + 3.5} ${y + 3.5}M${x + 3.5} ${y - 3.5}L${x - 3.5} ${y + 3.5}"/>`;
    case 'compensation':
      return `<path class="mk" d="M${x - 7.5} ${y - 6}H${x + 7.5}L${x} ${y + 8}Z"/>`;
    case 'other':
      return `<circle class="mk" cx="${x}" cy="${y}" r="5"/>`;
  }
}

/**
 * Brackets under the axis group runs of equal timestamps and say how long after the first entry
 * they happened. Labels take the first of two rows where they fit; one that fits nowhere is left
 * to the bracket's tooltip.
 */
function timeAxis(
  placed: readonly PlacedEntry[],
  xOf: (column: number) => number,
  step: number,
  axisEnd: number,
): string[] {
  const out: string[] = [
    `<line class="axis" x1="${LEFT - 8}" y1="${AXIS_Y}" x2="${axisEnd + 14}" y2="${AXIS_Y}"/>`,
    `<path class="axis-head" d="M${axisEnd + 14} ${AXIS_Y - 4}L${axisEnd + 22} ${AXIS_Y}L${axisEnd + 14} ${AXIS_Y + 4}Z"/>`,
    `<text class="axis-name" x="12" y="${AXIS_Y + 4}">order →</text>`,
  ];
  const first = placed.find((p) => p.timeMs !== null)?.timeMs ?? null;
  if (first !== null) {
    out.push(
      `<text class="axis-sub" x="12" y="${AXIS_Y + 19}">${esc(`t0 ${new Date(first).toISOString()}`)}</text>`,
    );
  }
  const rowEnds = [Number.NEGATIVE_INFINITY, Number.NEGATIVE_INFINITY];
  let start = 0;
  while (start < placed.length) {
    let end = start;
    const startEntry = placed[start]!;
    while (end + 1 < placed.length && sameTime(placed[end + 1]!, startEntry)) end++;
    const x1 = round(xOf(start) - step / 2 + 3);
    const x2 = round(xOf(end) + step / 2 - 3);
    const label =
      startEntry.timeMs === null || first === null
        ? 'time ?'
        : `+${formatDuration(startEntry.timeMs - first)}`;
    const at =
      startEntry.timeMs === null ? startEntry.entry.at : new Date(startEntry.timeMs).toISOString();
    out.push(
      `<path class="bracket" d="M${x1} ${AXIS_Y + 4}v5H${x2}v-5"><title>${esc(`${at} · ${end - start + 1} ${plural(end - start + 1, 'entry', 'entries')}`)}</title></path>`,
    );
    const center = round((x1 + x2) / 2);
    const halfWidth = (label.length * 6) / 2;
    const row = rowEnds.findIndex((rowEnd) => center - halfWidth > rowEnd + 6);
    if (row >= 0) {
      rowEnds[row] = center + halfWidth;
      out.push(
        `<text class="tick" x="${center}" y="${AXIS_Y + 22 + row * 14}" text-anchor="middle">${esc(label)}</text>`,
      );
    }
    start = end + 1;
  }
  return out;
}

function sameTime(a: PlacedEntry, b: PlacedEntry): boolean {
  return a.timeMs === null || b.timeMs === null
    ? a.timeMs === b.timeMs && a.entry.at === b.entry.at
    : a.timeMs === b.timeMs;
}

/** The final status at the end of the ledger lane, the write count at the end of the sandbox's. */
function finalColumn(report: ScenarioReport, axisEnd: number): string[] {
  const x = axisEnd + 34;
  const status = `final: ${truncate(report.action_status ?? 'no status', 22)}`;
  const writes = `${report.external_write_count} ${plural(report.external_write_count, 'write', 'writes')} observed`;
  const verdict = report.passed ? 'PASS' : 'FAIL';
  const pill = (y: number, label: string, cls: string): string => {
    const w = round(label.length * 6.8 + 20);
    return `<g class="pill ${cls}"><rect x="${x}" y="${y - 12}" width="${w}" height="24" rx="12"/><text x="${x + 10}" y="${y + 4}">${esc(label)}</text></g>`;
  };
  return [
    pill(LEDGER_Y, status, 'status'),
    pill(
      round((LEDGER_Y + SANDBOX_Y) / 2),
      `${verdict} ${report.passed ? '✓' : '✗'}`,
      report.passed ? 'pass' : 'fail',
    ),
    pill(SANDBOX_Y, writes, 'status'),
  ];
}

function legend(): string[] {
  const items: readonly (readonly [LedgerKind, string])[] = [
    ['decision', 'decision'],
    ['authority', 'authority'],
    ['commit-start', 'commit started'],
    ['commit', 'committed'],
    ['verification', 'verification'],
    ['failure', 'failure / unknown'],
    ['compensation', 'compensation'],
  ];
  const out: string[] = [`<g class="legend" transform="translate(12 ${LEGEND_Y})">`];
  out.push('<text class="legend-head" x="0" y="4">Ledger</text>');
  items.forEach(([kind, label], i) => {
    out.push(
      `<g class="k-${kind}" transform="translate(${76 + i * 128} 0)">${shape(kind, 0, 0)}<text x="14" y="4">${label}</text></g>`,
    );
  });
  const y2 = 30;
  out.push(
    `<text class="legend-head" x="0" y="${y2 + 4}">Sandbox</text>`,
    `<g transform="translate(76 ${y2})"><rect class="s-write" x="-9" y="-9" width="18" height="18" rx="3"/><path class="s-write-tick" d="M-4.5 0l3 3.5l6-7"/><text x="16" y="4">write (receipt id)</text></g>`,
    `<g class="fault after-write" transform="translate(232 ${y2})"><path class="s-fault" d="M2 -11L-6 1H-1L-3 11L6 -1H1Z"/><text x="12" y="4">fault</text></g>`,
    `<g transform="translate(312 ${y2})"><path class="connector" d="M0 0H34"/><text x="42" y="4">commit_started → write it caused</text></g>`,
    `<text class="muted" x="572" y="${y2 + 4}">x: causal order (ledger sequence; writes after the commit that caused them)</text>`,
    '</g>',
  );
  return out;
}

function isWrite(entry: TimelineEntry): boolean {
  return entry.source === 'sandbox' && entry.type.startsWith('write:');
}

function isFault(entry: TimelineEntry): boolean {
  return entry.type.startsWith('fault:');
}

/** The receipt a write entry names in its detail (the longest matching id wins). */
function receiptFor(
  entry: TimelineEntry,
  report: ScenarioReport,
): ScenarioReport['receipts'][number] | null {
  let best: ScenarioReport['receipts'][number] | null = null;
  for (const receipt of report.receipts) {
    if (receipt.id === '' || !entry.detail.includes(receipt.id)) continue;
    if (best === null || receipt.id.length > best.id.length) best = receipt;
  }
  return best;
}

function describe(entry: TimelineEntry): string {
  return [
    entry.at,
    entry.source,
    entry.sequence === null ? null : `#${entry.sequence}`,
    entry.type,
    entry.status === null ? null : `status ${entry.status}`,
    entry.proposal === null ? null : `proposal ${entry.proposal}`,
    entry.detail.trim() === '' ? null : entry.detail,
  ]
    .filter((part) => part !== null)
    .join(' · ');
}
