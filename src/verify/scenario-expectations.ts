/**
 * A scenario's expectations (label, final status, write count, events, rejections, a fresh
 * proposal after drift), checked against what the evidence shows, plus the runner's own health:
 * no step threw and the sandbox kept every request.
 */
import type { LedgerEvent, ProposalReplay } from '../core/ledger.js';
import type { ExpectationCheck } from './report-types.js';
import type { ScenarioManifest } from './scenario-artifacts.js';
import type { Scenario } from './scenario-fixtures.js';

/** What the expectations are checked against. */
export interface ObservedOutcome {
  readonly label: string;
  readonly primary: ProposalReplay | undefined;
  /** Proposals of the primary's effect. */
  readonly related: readonly ProposalReplay[];
  readonly events: readonly LedgerEvent[];
  /** Provider writes carrying the primary's effect. */
  readonly writes: number;
  readonly manifest: ScenarioManifest;
  readonly droppedEntryCount: number;
}

/** One check per expectation of the fixture, in a stable order. */
export function checkExpectations(
  scenario: Scenario,
  observed: ObservedOutcome,
): ExpectationCheck[] {
  const { label, primary, related, events, writes, manifest } = observed;
  const checks: ExpectationCheck[] = [];
  const expect = (name: string, expected: string, observed: string) =>
    checks.push({ name, expected, observed, passed: expected === observed });
  expect('label', scenario.expect.label, label);
  expect('status', String(scenario.expect.status), String(primary?.status ?? null));
  expect('writes', String(scenario.expect.writes), String(writes));
  for (const type of scenario.expect.events ?? []) {
    const seen =
      related.some((r) => r.decisionPath.includes(type as never)) ||
      (primary?.decisionPath.includes(type as never) ?? false);
    expect(`event ${type}`, 'present', seen ? 'present' : 'absent');
  }
  for (const code of scenario.expect.rejections ?? []) {
    const seen = events.some((e) => e.type === 'authority_rejected' && e.data.reasonCode === code);
    expect(`rejection ${code}`, 'present', seen ? 'present' : 'absent');
  }
  if (scenario.expect.freshProposal !== undefined) {
    const drift = primary?.events.find((e) => e.type === 'drift_detected');
    const fresh = typeof drift?.data.freshProposal === 'string' ? drift.data.freshProposal : null;
    const exists =
      fresh !== null &&
      events.some((e) => e.proposal === fresh && e.data.supersedes === primary?.proposal);
    expect('fresh proposal offered', String(scenario.expect.freshProposal), String(exists));
  }
  expect(
    'runner completed every step',
    '0 step errors',
    `${manifest.stepErrors.length} step errors`,
  );
  if (manifest.stepErrors.length > 0) {
    checks.push({
      name: 'first step error',
      expected: 'none',
      observed: `step ${manifest.stepErrors[0]?.step} (${manifest.stepErrors[0]?.do}): ${manifest.stepErrors[0]?.message}`,
      passed: false,
    });
  }
  expect('sandbox kept every request', '0 dropped', `${observed.droppedEntryCount} dropped`);
  return checks;
}
