/**
 * The Markdown scenario report (`reports/NAME.md`) for reviewers: a pure function from a
 * `ScenarioReport` to text, with every report value escaped so it cannot break the Markdown.
 */
import type {
  ExpectationCheck,
  InvariantVerdict,
  ReportProposal,
  ReportReceipt,
  ScenarioReport,
  TimelineEntry,
} from './report-types.js';

/** One row of a scenario's key facts: the names are the ones issue 5 uses. */
export interface ScenarioKeyFact {
  readonly key: string;
  readonly value: string | number | boolean | null | readonly string[];
}

/**
 * The key facts of a scenario, in the order both the Markdown and the HTML report show them.
 * `decision_path` stays a list so each renderer can draw its arrows.
 */
export function scenarioKeyFacts(report: ScenarioReport): readonly ScenarioKeyFact[] {
  return [
    { key: 'scenario', value: report.scenario },
    { key: 'label', value: report.label },
    { key: 'expected_label', value: report.expected_label },
    { key: 'passed', value: report.passed },
    { key: 'action_status', value: report.action_status },
    { key: 'external_write_count', value: report.external_write_count },
    { key: 'duplicate_prevented', value: report.duplicate_prevented },
    { key: 'unsafe_action_blocked', value: report.unsafe_action_blocked },
    { key: 'compensation_required', value: report.compensation_required },
    { key: 'decision_path', value: report.decision_path },
    { key: 'ledger_entries', value: report.ledger.entries },
    { key: 'ledger_chain', value: report.ledger.chain },
  ];
}

/** The checks that failed: invariants as `I1 once`, expectations as `expectation:NAME`. */
export function scenarioFailures(report: ScenarioReport): readonly string[] {
  return [
    ...report.invariants.filter((v) => v.verdict === 'fail').map((v) => `${v.id} ${v.name}`),
    ...report.expectations.filter((e) => !e.passed).map((e) => `expectation:${e.name}`),
  ];
}

/**
 * A semantic effect key short enough for a table cell: keys longer than 20 characters keep their
 * first 10 and last 6 (the full key is in the JSON report). `null` stays `null`.
 */
export function shortenEffectKey(effect: string | null): string | null {
  if (effect === null) return null;
  const chars = Array.from(effect);
  if (chars.length <= 20) return effect;
  return `${chars.slice(0, 10).join('')}…${chars.slice(-6).join('')}`;
}

/** A timeline entry with its place on the time axis. */
export interface SortedTimelineEntry {
  readonly entry: TimelineEntry;
  /** Milliseconds since the epoch, or `null` when `at` does not parse. */
  readonly timeMs: number | null;
  /** The sort key: the time, or the previous entry's key when `at` does not parse. */
  readonly key: number;
  /** The entry's position in the report's timeline. */
  readonly index: number;
}

/**
 * The timeline in the report's causal order: the ledger's sequence, with each provider write
 * placed right after the `commit_started` whose idempotency key it carried. It is not re-sorted
 * by time, because the guard's clock and the provider's clock are different clocks (a verifier
 * run even advances the guard's on purpose); times only label the axis.
 */
export function sortTimeline(timeline: readonly TimelineEntry[]): SortedTimelineEntry[] {
  let previous = Number.NEGATIVE_INFINITY;
  const placed = timeline.map((entry, index) => {
    const parsed = Date.parse(entry.at);
    const timeMs = Number.isNaN(parsed) ? null : parsed;
    const key = timeMs ?? previous;
    previous = key;
    return { entry, timeMs, key, index };
  });
  return placed;
}

/**
 * Render one scenario's report as GitHub-flavoured Markdown: title with PASS/FAIL, key facts
 * (`action_status`, `external_write_count`, `duplicate_prevented`, `unsafe_action_blocked`,
 * `compensation_required`, `decision_path` as `a -> b -> c`, …), then receipts, invariants,
 * expectations, proposals, a compact timeline in causal order and the artifact paths. Pure: same input, same text.
 */
export function renderScenarioMarkdown(report: ScenarioReport): string {
  const verdict = report.passed ? 'PASS' : 'FAIL';
  const failures = scenarioFailures(report);
  // A trailing `#` run would be read as the heading's closing sequence, so every `#` is escaped.
  const title = text(report.scenario).replaceAll('#', '\\#');
  const lines: string[] = [`# ${verdict} — ${title}`, ''];
  if (report.description.trim() !== '') {
    // A fixed lead word keeps a description from starting a heading, list or quote.
    lines.push(`Scenario: ${text(report.description)}`, '');
  }
  if (failures.length > 0) {
    lines.push(`Failed checks: ${failures.map(text).join(', ')}`, '');
  }

  lines.push(
    ...table(
      ['key', 'value'],
      scenarioKeyFacts(report).map((fact) => [fact.key, factCell(fact)]),
    ),
    '',
    `Ledger: ${report.ledger.entries} entries, hash chain ${text(report.ledger.chain)}` +
      (report.ledger.detail.trim() === '' ? '.' : ` (${text(report.ledger.detail)}).`),
    '',
  );

  lines.push('## Receipts', '');
  lines.push(
    ...orNone(
      report.receipts,
      'No provider write was observed.',
      table(
        ['id', 'provider', 'operation', 'effect', 'amount (minor)', 'in ledger', 'created at'],
        report.receipts.map(receiptRow),
      ),
    ),
  );

  lines.push('## Invariants', '');
  lines.push(
    ...orNone(
      report.invariants,
      'No invariant verdicts.',
      table(['id', 'name', 'verdict', 'evidence'], report.invariants.map(invariantRow)),
    ),
  );

  lines.push('## Expectations', '');
  lines.push(
    ...orNone(
      report.expectations,
      'No expectations.',
      table(['check', 'expected', 'observed', 'result'], report.expectations.map(expectationRow)),
    ),
  );

  lines.push('## Proposals', '');
  lines.push(
    ...orNone(
      report.proposals,
      'No proposals.',
      table(
        ['proposal', 'action type', 'status', 'semantic effect', 'decision path'],
        report.proposals.map(proposalRow),
      ),
    ),
  );

  lines.push(
    '## Timeline',
    '',
    'In causal order: the ledger’s sequence, each provider write right after the commit that caused it. Ledger times come from the guard’s clock (simulated in verifier runs, so it can run ahead), sandbox times from the provider’s.',
    '',
  );
  lines.push(
    ...orNone(
      report.timeline,
      'No timeline entries.',
      table(
        ['#', 'at', 'source', 'seq', 'proposal', 'type', 'status', 'detail'],
        sortTimeline(report.timeline).map(({ entry }, index) => timelineRow(entry, index)),
      ),
    ),
  );

  lines.push('## Artifacts', '');
  lines.push(
    ...table(
      ['artifact', 'path (relative to the output directory)'],
      [
        ['ledger', codeOrText(report.artifacts.ledger)],
        ['sandbox', codeOrText(report.artifacts.sandbox)],
      ],
    ),
  );

  return `${lines.join('\n')}\n`;
}

function receiptRow(receipt: ReportReceipt): readonly string[] {
  return [
    codeOrText(receipt.id),
    text(receipt.provider),
    codeOrText(receipt.operation),
    nullable(shortenEffectKey(receipt.effect), codeOrText),
    receipt.amountMinor === null ? '—' : String(receipt.amountMinor),
    receipt.inLedger ? 'yes' : '**no**',
    text(receipt.createdAt),
  ];
}

function invariantRow(verdict: InvariantVerdict): readonly string[] {
  const shown =
    verdict.verdict === 'pass' ? 'PASS' : verdict.verdict === 'fail' ? '**FAIL**' : 'n/a';
  return [text(verdict.id), text(verdict.name), shown, text(verdict.evidence)];
}

function expectationRow(check: ExpectationCheck): readonly string[] {
  return [
    text(check.name),
    text(check.expected),
    text(check.observed),
    check.passed ? 'PASS' : '**FAIL**',
  ];
}

function proposalRow(proposal: ReportProposal): readonly string[] {
  return [
    codeOrText(proposal.proposal),
    nullable(proposal.actionType, codeOrText),
    nullable(proposal.status, codeOrText),
    nullable(shortenEffectKey(proposal.semanticEffectKey), codeOrText),
    path(proposal.decisionPath),
  ];
}

function timelineRow(entry: TimelineEntry, index: number): readonly string[] {
  return [
    String(index + 1),
    text(entry.at),
    entry.source,
    entry.sequence === null ? '—' : String(entry.sequence),
    nullable(entry.proposal, codeOrText),
    codeOrText(entry.type),
    nullable(entry.status, codeOrText),
    entry.detail.trim() === '' ? '' : text(entry.detail),
  ];
}

function factCell(fact: ScenarioKeyFact): string {
  const { value } = fact;
  if (value === null) return '—';
  if (typeof value === 'string') return codeOrText(value);
  if (typeof value === 'number' || typeof value === 'boolean') return `\`${String(value)}\``;
  return path(value);
}

/** A decision path in the arrow form the issue names; the steps are escaped, the arrows are not. */
function path(steps: readonly string[]): string {
  return steps.length === 0 ? '—' : steps.map(text).join(' -> ');
}

function nullable(value: string | null, render: (value: string) => string): string {
  return value === null ? '—' : render(value);
}

function orNone(items: readonly unknown[], none: string, rendered: readonly string[]): string[] {
  return items.length === 0 ? [none, ''] : [...rendered, ''];
}

/** A GFM table; every cell must already be escaped with `text` or `codeOrText`. */
function table(header: readonly string[], rows: readonly (readonly string[])[]): string[] {
  return [
    `| ${header.join(' | ')} |`,
    `|${header.map(() => '---').join('|')}|`,
    ...rows.map((row) => `| ${row.join(' | ')} |`),
  ];
}

/** Values that read well as code and need no escaping inside a code span in a table cell. */
const PLAIN_CODE = /^[A-Za-z0-9_.:@/+=,#…-]+$/;

/** A code span for identifier-like values; anything else falls back to escaped text. */
function codeOrText(value: string): string {
  return PLAIN_CODE.test(value) ? `\`${value}\`` : text(value);
}

/**
 * Escape free text for one line of Markdown, in or out of a table cell: line breaks become
 * spaces (a cell is one line), a backslash-escape goes before every character that could start
 * inline markup, raw HTML or a cell boundary, and entity-like `&…;` keeps its ampersand literal.
 * `_` between letters or digits cannot open emphasis, so `commit_started` stays readable.
 */
function text(value: string): string {
  const flat = value.replace(/\r\n|[\r\n\u2028\u2029]/g, ' ');
  let out = '';
  for (let i = 0; i < flat.length; i++) {
    const ch = flat[i]!;
    if ('\\`*[]<>|~'.includes(ch)) {
      out += `\\${ch}`;
    } else if (ch === '_') {
      const intraword =
        /[A-Za-z0-9]/.test(flat[i - 1] ?? '') && /[A-Za-z0-9]/.test(flat[i + 1] ?? '');
      out += intraword ? ch : '\\_';
    } else if (
      ch === '&' &&
      /^&(#[0-9]+|#[xX][0-9A-Fa-f]+|[A-Za-z][A-Za-z0-9]*);/.test(flat.slice(i))
    ) {
      out += '\\&';
    } else {
      out += ch;
    }
  }
  return out;
}
