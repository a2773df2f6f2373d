import { describe, expect, it } from 'vitest';
import { renderIndexHtml } from './report-html.js';
import { renderScenarioMarkdown } from './report-markdown.js';
import type {
  GateSummary,
  InvariantVerdict,
  ScenarioReport,
  TimelineEntry,
} from './report-types.js';
import { INVARIANT_NAMES, InvariantId } from './report-types.js';

const EFFECT = 'sek_v1_9f2c4e1a7b3d5f60a1c2e3d4b5a69788';
const T0 = Date.parse('2025-03-14T09:26:53.000Z');

function at(offsetMs: number): string {
  return new Date(T0 + offsetMs).toISOString();
}

function ledger(
  offsetMs: number,
  sequence: number,
  type: string,
  status: string | null,
  detail = '',
  proposal = 'prop_01',
): TimelineEntry {
  return { at: at(offsetMs), source: 'ledger', sequence, proposal, type, status, detail };
}

function sandbox(offsetMs: number, type: string, detail: string): TimelineEntry {
  return {
    at: at(offsetMs),
    source: 'sandbox',
    sequence: null,
    proposal: null,
    type,
    status: null,
    detail,
  };
}

function invariants(failing: Partial<Record<InvariantId, string>>): InvariantVerdict[] {
  return Object.values(InvariantId).map((id) => {
    const failure = failing[id];
    if (failure !== undefined) {
      return { id, name: INVARIANT_NAMES[id], verdict: 'fail', evidence: failure };
    }
    if (id === 'I4' || id === 'I9') {
      return { id, name: INVARIANT_NAMES[id], verdict: 'not_applicable', evidence: 'No dry run.' };
    }
    return { id, name: INVARIANT_NAMES[id], verdict: 'pass', evidence: `${id} held on 7 entries.` };
  });
}

/** A refund whose response was lost after the write; the guard verified instead of resending. */
function lostResponseReport(): ScenarioReport {
  return {
    schema: 'sideguard.scenario-report/v1',
    scenario: 'lost_response_verified',
    description: 'The provider commits the refund, then the connection closes with zero bytes.',
    label: 'verified',
    expected_label: 'verified',
    passed: true,
    action_status: 'verified',
    external_write_count: 1,
    duplicate_prevented: true,
    unsafe_action_blocked: false,
    compensation_required: false,
    decision_path: [
      'contract_validated',
      'policy_decided',
      'idempotency_decided',
      'commit_started',
      'commit_outcome_unknown',
      'verification_started',
      'verification_observed',
    ],
    proposals: [
      {
        proposal: 'prop_01',
        actionType: 'support.refund@1',
        status: 'verified',
        semanticEffectKey: EFFECT,
        decisionPath: [
          'contract_validated',
          'policy_decided',
          'idempotency_decided',
          'commit_started',
          'commit_outcome_unknown',
          'verification_started',
          'verification_observed',
        ],
      },
    ],
    receipts: [
      {
        id: 're_001',
        provider: 'payments',
        operation: 'refunds.create',
        effect: EFFECT,
        amountMinor: 2500,
        createdAt: at(40),
        inLedger: true,
      },
    ],
    invariants: invariants({}),
    expectations: [
      { name: 'status', expected: 'verified', observed: 'verified', passed: true },
      { name: 'writes', expected: '1', observed: '1', passed: true },
    ],
    // Deliberately not in time order: the sandbox export is appended after the ledger.
    timeline: [
      ledger(0, 1, 'contract_validated', null),
      ledger(0, 2, 'policy_decided', 'authorized', 'allow:within_auto_limit'),
      ledger(0, 3, 'idempotency_decided', 'authorized', 'new_effect'),
      ledger(10, 4, 'commit_started', 'executing'),
      sandbox(40, 'write:refunds.create', 're_001'),
      sandbox(40, 'fault:drop_after_write', 'connection closed after the write'),
      ledger(5040, 5, 'commit_outcome_unknown', 'failed_unknown', 'socket closed, zero bytes'),
      ledger(5040, 6, 'verification_started', 'verification_pending'),
      ledger(7040, 7, 'verification_observed', 'verified', 'provider has re_001'),
    ],
    ledger: { entries: 7, chain: 'valid', detail: '7 entries, chain intact' },
    artifacts: {
      ledger: 'ledgers/lost_response_verified.jsonl',
      sandbox: 'sandbox_state/lost_response_verified',
    },
  };
}

/** A runner that resent after an unknown outcome: two writes for one semantic effect. */
function blindResendReport(): ScenarioReport {
  return {
    schema: 'sideguard.scenario-report/v1',
    scenario: 'blind_resend',
    description: 'An unsafe runner resends after the response was lost.',
    label: 'committed',
    expected_label: 'verified',
    passed: false,
    action_status: 'verified',
    external_write_count: 2,
    duplicate_prevented: false,
    unsafe_action_blocked: false,
    compensation_required: false,
    decision_path: [
      'contract_validated',
      'policy_decided',
      'idempotency_decided',
      'commit_started',
      'commit_outcome_unknown',
      'commit_started',
      'committed',
    ],
    proposals: [
      {
        proposal: 'prop_01',
        actionType: 'support.refund@1',
        status: 'verified',
        semanticEffectKey: EFFECT,
        decisionPath: ['contract_validated', 'policy_decided', 'commit_started', 'committed'],
      },
    ],
    receipts: [
      {
        id: 're_001',
        provider: 'payments',
        operation: 'refunds.create',
        effect: EFFECT,
        amountMinor: 2500,
        createdAt: at(40),
        inLedger: false,
      },
      {
        id: 're_002',
        provider: 'payments',
        operation: 'refunds.create',
        effect: EFFECT,
        amountMinor: 2500,
        createdAt: at(5100),
        inLedger: true,
      },
    ],
    invariants: invariants({
      I1: `2 provider writes (re_001, re_002) for semantic effect ${EFFECT}; at most 1 is allowed.`,
      I5: 'commit_started #6 follows commit_outcome_unknown #5 with no verification_observed.',
    }),
    expectations: [
      { name: 'status', expected: 'verified', observed: 'verified', passed: true },
      { name: 'writes', expected: '1', observed: '2', passed: false },
    ],
    timeline: [
      ledger(0, 1, 'contract_validated', null),
      ledger(0, 2, 'policy_decided', 'authorized'),
      ledger(0, 3, 'idempotency_decided', 'authorized'),
      ledger(10, 4, 'commit_started', 'executing'),
      sandbox(40, 'write:refunds.create', 're_001'),
      sandbox(40, 'fault:drop_after_write', 'connection closed after the write'),
      ledger(5040, 5, 'commit_outcome_unknown', 'failed_unknown'),
      ledger(5050, 6, 'commit_started', 'executing', 'resend'),
      sandbox(5100, 'write:refunds.create', 're_002'),
      ledger(5110, 7, 'committed', 'verified', 're_002'),
    ],
    ledger: { entries: 7, chain: 'valid', detail: '7 entries, chain intact' },
    artifacts: { ledger: 'ledgers/blind_resend.jsonl', sandbox: 'sandbox_state/blind_resend' },
  };
}

const XSS = '<script>alert(1)</script>';
const XSS_ESCAPED_HTML = '&lt;script&gt;alert(1)&lt;/script&gt;';
const QUOTES = `x" onmouseover="alert(2)' data-x='`;
const AMP = 'Q&A &amp; more';

/** The failing report with hostile strings in every free-text and identifier field. */
function hostileReport(): ScenarioReport {
  const base = blindResendReport();
  const hostile = `${XSS} ${QUOTES} ${AMP}`;
  return {
    ...base,
    scenario: `evil ${hostile}`,
    description: `# not a heading\n| not | a row |\n${hostile}`,
    label: hostile,
    action_status: hostile,
    decision_path: [...base.decision_path, hostile],
    proposals: base.proposals.map((p) => ({ ...p, proposal: hostile, actionType: hostile })),
    receipts: base.receipts.map((r) => ({ ...r, id: `${r.id}${hostile}`, provider: hostile })),
    invariants: base.invariants.map((v) => ({ ...v, evidence: `${v.evidence} ${hostile}` })),
    expectations: base.expectations.map((e) => ({ ...e, name: hostile, observed: hostile })),
    timeline: base.timeline.map((e) => ({
      ...e,
      type: `${e.type}${e.source === 'ledger' ? hostile : ''}`,
      proposal: e.proposal === null ? null : hostile,
      detail: `${e.detail} ${hostile}`,
    })),
    ledger: { ...base.ledger, detail: hostile },
    artifacts: { ledger: hostile, sandbox: hostile },
  };
}

/** Cells of a GFM table row, split on unescaped pipes as GitHub does (`\|` stays in the cell). */
function cells(row: string): string[] {
  const out: string[] = [];
  let current = '';
  for (let i = 0; i < row.length; i++) {
    const ch = row[i]!;
    if (ch === '\\' && i + 1 < row.length) {
      current += ch + row[i + 1]!;
      i++;
    } else if (ch === '|') {
      out.push(current);
      current = '';
    } else {
      current += ch;
    }
  }
  out.push(current);
  return out.slice(1, -1);
}

/** Every table in a Markdown document, as its lines. */
function tables(markdown: string): string[][] {
  const found: string[][] = [];
  let current: string[] = [];
  for (const line of markdown.split('\n')) {
    if (line.startsWith('|')) {
      current.push(line);
    } else if (current.length > 0) {
      found.push(current);
      current = [];
    }
  }
  if (current.length > 0) found.push(current);
  return found;
}

describe('renderScenarioMarkdown', () => {
  it('titles a passing scenario PASS and lists the key facts the issue names with their values', () => {
    const markdown = renderScenarioMarkdown(lostResponseReport());

    expect(markdown.split('\n')[0]).toBe('# PASS — lost_response_verified');
    expect(markdown).toContain('| action_status | `verified` |');
    expect(markdown).toContain('| external_write_count | `1` |');
    expect(markdown).toContain('| duplicate_prevented | `true` |');
    expect(markdown).toContain('| unsafe_action_blocked | `false` |');
    expect(markdown).toContain('| compensation_required | `false` |');
    expect(markdown).toContain(
      '| decision_path | contract_validated -> policy_decided -> idempotency_decided -> commit_started -> commit_outcome_unknown -> verification_started -> verification_observed |',
    );
  });

  it('lists receipts with a shortened effect, invariants with evidence, expectations, proposals, timeline and artifacts', () => {
    const markdown = renderScenarioMarkdown(lostResponseReport());

    expect(markdown).toContain(
      '| `re_001` | payments | `refunds.create` | `sek_v1_9f2…a69788` | 2500 | yes |',
    );
    expect(markdown).toContain('| I1 | once | PASS | I1 held on 7 entries. |');
    expect(markdown).toContain('| I4 | dry run is dry | n/a |');
    expect(markdown).toContain('| status | verified | verified | PASS |');
    expect(markdown).toContain('| `prop_01` | `support.refund@1` | `verified` |');
    expect(markdown).toContain('| `fault:drop_after_write` |');
    expect(markdown).toContain('| ledger | `ledgers/lost_response_verified.jsonl` |');
    for (const heading of [
      'Receipts',
      'Invariants',
      'Expectations',
      'Proposals',
      'Timeline',
      'Artifacts',
    ]) {
      expect(markdown).toContain(`\n## ${heading}\n`);
    }
  });

  it('titles a failing scenario FAIL and names the violated invariant with its evidence', () => {
    const markdown = renderScenarioMarkdown(blindResendReport());

    expect(markdown.split('\n')[0]).toBe('# FAIL — blind_resend');
    expect(markdown).toContain('Failed checks: I1 once, I5 no blind resend, expectation:writes');
    expect(markdown).toMatch(
      /\| I1 \| once \| \*\*FAIL\*\* \| 2 provider writes \(re_001, re_002\)/,
    );
    expect(markdown).toContain(
      '| `re_001` | payments | `refunds.create` | `sek_v1_9f2…a69788` | 2500 | **no** |',
    );
  });

  it('keeps every table row one row with the header’s cell count when values hold pipes, backslashes and newlines', () => {
    const base = lostResponseReport();
    const report: ScenarioReport = {
      ...base,
      invariants: base.invariants.map((v) => ({
        ...v,
        evidence: `a | b\nc\r\nd \\| e \\`,
      })),
      receipts: base.receipts.map((r) => ({ ...r, id: 're|x\ny', provider: 'pay|ments' })),
      timeline: base.timeline.map((e) => ({ ...e, detail: 'one\ntwo | three\u2028four' })),
    };
    const markdown = renderScenarioMarkdown(report);
    const found = tables(markdown);

    expect(found).toHaveLength(7);
    for (const lines of found) {
      const width = cells(lines[0]!).length;
      for (const line of lines) expect(cells(line)).toHaveLength(width);
    }
    const invariantsTable = found.find((lines) => lines[0]!.startsWith('| id | name |'))!;
    expect(invariantsTable).toHaveLength(2 + report.invariants.length);
    expect(invariantsTable[2]).toContain('a \\| b c d \\\\\\| e \\\\ |');
    const timelineTable = found.find((lines) => lines[0]!.startsWith('| # |'))!;
    expect(timelineTable).toHaveLength(2 + report.timeline.length);
  });

  it('never emits raw HTML or a block structure from report values', () => {
    const markdown = renderScenarioMarkdown(hostileReport());

    expect(markdown).not.toContain(XSS);
    expect(markdown).toContain('\\<script\\>alert(1)\\</script\\>');
    expect(markdown).not.toMatch(/^# not a heading/m);
    expect(markdown).not.toMatch(/^\| not \| a row \|/m);
    expect(markdown.split('\n').filter((line) => line.startsWith('# '))).toHaveLength(1);
  });

  it('says so when a scenario has no receipts, proposals or timeline, and escapes a trailing # in the title', () => {
    const report: ScenarioReport = {
      ...lostResponseReport(),
      scenario: 'dry_run #',
      receipts: [],
      proposals: [],
      timeline: [],
      decision_path: [],
    };
    const markdown = renderScenarioMarkdown(report);

    expect(markdown.split('\n')[0]).toBe('# PASS — dry_run \\#');
    expect(markdown).toContain('| decision_path | — |');
    expect(markdown).toContain('No provider write was observed.');
    expect(markdown).toContain('No proposals.');
    expect(markdown).toContain('No timeline entries.');
    const html = renderIndexHtml([report], undefined);
    expect(html.match(/<svg/g)).toHaveLength(1);
    expect(html).toContain('>No timeline entries.</text>');
  });

  it('renders the same report to the same text every time', () => {
    expect(renderScenarioMarkdown(blindResendReport())).toBe(
      renderScenarioMarkdown(blindResendReport()),
    );
  });
});

describe('renderIndexHtml', () => {
  const summary: GateSummary = {
    schema: 'sideguard.gate/v1',
    passed: false,
    scenarios: [
      {
        scenario: 'lost_response_verified',
        label: 'verified',
        writes: 1,
        passed: true,
        failures: [],
      },
      {
        scenario: 'blind_resend',
        label: 'committed',
        writes: 2,
        passed: false,
        failures: ['I1', 'I5'],
      },
      { scenario: 'only_in_gate', label: 'blocked', writes: 0, passed: true, failures: [] },
    ],
    durationMs: 1234,
    store: 'sqlite',
  };

  it('loads nothing from the network and runs no script', () => {
    const html = renderIndexHtml([lostResponseReport(), blindResendReport()], summary);

    expect(html).not.toMatch(/https?:\/\//);
    expect(html).not.toMatch(/\b(src|href)\s*=\s*["']?\s*(https?:)?\/\//i);
    expect(html).not.toMatch(/@import/i);
    expect(html).not.toMatch(/url\(\s*["']?\s*(https?:)?\/\//i);
    expect(html).not.toMatch(/<script/i);
    expect(html).not.toMatch(/\son[a-z]+\s*=/i);
    expect(html).toContain(
      `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'">`,
    );
  });

  it('draws one inline SVG timeline per scenario, linked from the summary table', () => {
    const html = renderIndexHtml([lostResponseReport(), blindResendReport()], summary);

    expect(html.match(/<svg/g)).toHaveLength(2);
    expect(html).toContain(
      '<a href="#scenario-1-lost-response-verified"><code>lost_response_verified</code></a>',
    );
    expect(html).toContain('<section class="scenario pass" id="scenario-1-lost-response-verified"');
    expect(html).toContain('<section class="scenario fail" id="scenario-2-blind-resend"');
    expect(html).toContain('<code>only_in_gate</code> <span class="muted">(no report)</span>');
    expect(html).toContain('store sqlite');
    expect(html).toContain('gate time 1.23 s');
  });

  it('does not re-sort the timeline by time (guard and provider clocks differ)', () => {
    const base = lostResponseReport();
    const reversed = { ...base, timeline: [...base.timeline].reverse() };
    const svg = renderIndexHtml([reversed], undefined);
    const first = svg.indexOf('#7 verification_observed');
    const last = svg.indexOf('#1 contract_validated');
    expect(first).toBeGreaterThan(0);
    expect(first).toBeLessThan(last);
  });

  it('keeps the report’s causal order on one axis, with the fault, the connector and the final status', () => {
    const html = renderIndexHtml([lostResponseReport()], undefined);
    const svg = html.slice(html.indexOf('<svg'), html.indexOf('</svg>'));

    // The given (causal) order is kept: the write and its fault follow the commit that caused them.
    const order = [
      '#1 contract_validated',
      '#2 policy_decided',
      '#3 idempotency_decided',
      '#4 commit_started',
      're_001 · refunds.create',
      'response lost after write',
      '#5 commit_outcome_unknown',
      '#7 verification_observed',
    ];
    const positions = order.map((label) => svg.indexOf(label));
    expect(positions.every((p) => p >= 0)).toBe(true);
    expect([...positions].sort((a, b) => a - b)).toEqual(positions);
    expect(svg.match(/class="connector" d="M[^"]*" marker-end=/g)).toHaveLength(1);
    expect(svg).toContain('final: verified');
    expect(svg).toContain('PASS ✓');
    expect(svg).toContain('causal order');
    expect(svg).toContain('+5.04 s');
  });

  it('shows FAIL, the violated invariant and the unclaimed write for a failing scenario', () => {
    const html = renderIndexHtml([lostResponseReport(), blindResendReport()], summary);
    const section = html.slice(html.indexOf('id="scenario-2-blind-resend"'));
    const svg = section.slice(section.indexOf('<svg'), section.indexOf('</svg>'));

    expect(html).toContain(
      '<span class="badge fail">FAIL</span> <span>1 of 3 scenarios failed</span>',
    );
    expect(html).toContain('<span class="chip fail">I1 once</span>');
    expect(section).toMatch(
      /<tr class="row-fail"><th scope="row">I1<\/th><td>once<\/td><td><span class="badge fail">FAIL<\/span><\/td><td>2 provider writes/,
    );
    expect(svg.match(/class="connector" d="M[^"]*" marker-end=/g)).toHaveLength(2);
    expect(svg).toContain('re_001 · NOT IN LEDGER');
    expect(svg).toContain('FAIL ✗');
  });

  it('escapes hostile report values in text, attributes and SVG', () => {
    const html = renderIndexHtml([hostileReport()], undefined);
    const svg = html.slice(html.indexOf('<svg'), html.indexOf('</svg>'));

    expect(html).not.toContain(XSS);
    expect(html).not.toMatch(/<script/i);
    expect(html).toContain(XSS_ESCAPED_HTML);
    expect(svg).toContain(XSS_ESCAPED_HTML);
    expect(html).not.toContain('" onmouseover="');
    expect(html).toContain('x&quot; onmouseover=&quot;alert(2)&#39; data-x=&#39;');
    expect(html).toContain('Q&amp;A &amp;amp; more');
    const tags = new Set(
      [...html.matchAll(/<\/?([a-zA-Z][a-zA-Z0-9-]*)/g)].map((m) => m[1]!.toLowerCase()),
    );
    const allowed = [
      'html',
      'head',
      'meta',
      'title',
      'style',
      'body',
      'header',
      'div',
      'p',
      'h1',
      'h2',
      'h3',
      'span',
      'main',
      'section',
      'table',
      'thead',
      'tbody',
      'tr',
      'th',
      'td',
      'a',
      'code',
      'strong',
      'figure',
      'figcaption',
      'svg',
      'desc',
      'defs',
      'marker',
      'path',
      'rect',
      'line',
      'text',
      'g',
      'circle',
      'dl',
      'dt',
      'dd',
      'details',
      'summary',
      'footer',
    ];
    expect([...tags].filter((tag) => !allowed.includes(tag))).toEqual([]);
    expect(html).toContain('id="scenario-1-evil-script-alert-1-script-x-onmouseover-alert-2"');
  });

  it('renders the same input to byte-identical output', () => {
    const render = () =>
      renderIndexHtml([lostResponseReport(), blindResendReport(), hostileReport()], summary);
    expect(render()).toBe(render());
  });

  it('says there is nothing to show when there are no reports', () => {
    const html = renderIndexHtml([], undefined);

    expect(html).toContain('Nothing to show.');
    expect(html).toContain('NO DATA');
    expect(html).not.toContain('<svg');
    expect(html).not.toContain('<table');
  });
});
