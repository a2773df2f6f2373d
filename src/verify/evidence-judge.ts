/**
 * The judge: computes a scenario's verdict only from evidence on disk — the exported ledger
 * (JSONL), the sandbox's export (its own receipts, requests and fault trace), the store records
 * and the run manifest (ids only) — never from anything the runner kept in memory. The
 * invariants live one per module in `invariants/`; this file adds the scenario's expectations
 * and assembles the report.
 */
import type { ProposalReplay } from '../core/ledger.js';
import type { ScenarioEvidence } from './evidence-files.js';
import { buildEvidenceModel, WRITE_METHODS } from './evidence-model.js';
import { judgeInvariants } from './invariants/judge-invariants.js';
import { buildTimeline } from './report-timeline.js';
import type { ReportProposal, ReportReceipt, ScenarioReport } from './report-types.js';
import { scenarioArtifactPaths } from './scenario-artifacts.js';
import { checkExpectations } from './scenario-expectations.js';
import type { ActionPlan, Scenario, SupportCase } from './scenario-fixtures.js';
import { labelOf } from './scenario-label.js';

export { readScenarioEvidence, type ScenarioEvidence } from './evidence-files.js';

const BLOCKING: ReadonlySet<string> = new Set([
  'blocked',
  'denied',
  'stale',
  'expired',
  'awaiting_authority',
  'superseded',
]);

/** Values of the case and plan that must never reach the ledger (six characters or more). */
export function privateValuesOf(supportCase: SupportCase, plan: ActionPlan): string[] {
  return [
    ...Object.values(supportCase.private),
    ...plan.steps.flatMap((step) =>
      'args' in step && typeof step.args.note === 'string' ? [step.args.note] : [],
    ),
  ].filter((value) => value.length >= 6);
}

/** Judges one scenario from its evidence. */
export function judgeScenario(
  scenario: Scenario,
  supportCase: SupportCase,
  plan: ActionPlan,
  evidence: ScenarioEvidence,
): ScenarioReport {
  const { events, manifest, sandbox } = evidence;
  const model = buildEvidenceModel(evidence, privateValuesOf(supportCase, plan));
  const { replays } = model;
  const receipts = model.writes;
  const requests = model.requests;
  // The primary proposal: the plan's primary ref, followed through supersession to the owner.
  let primaryId: string | undefined = manifest.refs[manifest.primaryRef];
  for (let hops = 0; primaryId !== undefined && hops < 5; hops++) {
    const superseded = replays.get(primaryId)?.events.find((e) => e.type === 'superseded');
    const owner = superseded?.data.owner;
    if (typeof owner !== 'string') break;
    primaryId = owner;
  }
  const primary: ProposalReplay | undefined =
    primaryId === undefined ? undefined : replays.get(primaryId);
  const primaryEffect = primary === undefined ? null : model.effectOf(primary);
  const related = [...replays.values()].filter(
    (r) => primaryEffect !== null && model.effectOf(r) === primaryEffect,
  );
  const writes = receipts.filter((r) =>
    primaryEffect === null ? r.effectKey !== null : r.effectKey === primaryEffect,
  ).length;
  const verdicts = judgeInvariants(model);

  // Expectations of the fixture.
  const label = labelOf(primary, related, events);
  const checks = checkExpectations(scenario, {
    label,
    primary,
    related,
    events,
    writes,
    manifest,
    droppedEntryCount: sandbox.observations.droppedEntryCount,
  });

  const reportReceipts: ReportReceipt[] = receipts.map((r) => ({
    id: r.objectId,
    provider: r.provider,
    operation: r.operation,
    effect: r.effectKey,
    amountMinor: r.amountMinor ?? null,
    createdAt: r.committedAt,
    inLedger: model.claimed.has(`${r.provider}:${r.objectId}`),
  }));
  const proposals: ReportProposal[] = [...replays.values()].map((r) => ({
    proposal: r.proposal,
    actionType: r.actionType,
    status: r.status,
    semanticEffectKey: model.effectOf(r),
    decisionPath: [...r.decisionPath],
  }));
  const passed = verdicts.every((v) => v.verdict !== 'fail') && checks.every((c) => c.passed);
  const paths = scenarioArtifactPaths(scenario.name);
  const retryCount =
    events.filter((e) => e.type === 'retry_resolved' && e.data.semanticEffectKey === primaryEffect)
      .length + related.filter((r) => r.status === 'superseded').length;
  // A duplicate was attempted when one operation was tried more than once for the effect (a
  // refund and the ticket update of one effect are two operations, not a duplicate).
  const attemptsPerOperation = new Map<string, number>();
  for (const request of requests) {
    if (request.effectKey !== primaryEffect || !WRITE_METHODS.has(request.method)) continue;
    const key = `${request.provider}.${request.operation}`;
    attemptsPerOperation.set(key, (attemptsPerOperation.get(key) ?? 0) + 1);
  }
  const repeatedAttempt = [...attemptsPerOperation.values()].some((count) => count > 1);
  return {
    schema: 'sideguard.scenario-report/v1',
    scenario: scenario.name,
    description: scenario.description,
    label,
    expected_label: scenario.expect.label,
    passed,
    action_status: primary?.status ?? null,
    external_write_count: writes,
    duplicate_prevented:
      (retryCount > 0 || repeatedAttempt) &&
      verdicts.find((v) => v.id === 'I1')?.verdict === 'pass',
    unsafe_action_blocked:
      writes === 0 &&
      (BLOCKING.has(primary?.status ?? '') ||
        (primary?.decisionPath.includes('contract_rejected') ?? false)),
    compensation_required: primary?.decisionPath.includes('compensation_required') ?? false,
    decision_path: [...(primary?.decisionPath ?? [])],
    proposals,
    receipts: reportReceipts,
    invariants: verdicts,
    expectations: checks,
    timeline: buildTimeline(events, requests, receipts),
    ledger: {
      entries: evidence.chain.entries,
      chain: evidence.chain.valid ? 'valid' : 'invalid',
      detail: evidence.chain.detail,
    },
    artifacts: { ledger: paths.ledger, sandbox: paths.sandbox },
  };
}
