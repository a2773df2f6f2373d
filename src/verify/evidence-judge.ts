/**
 * The judge: computes a scenario's verdict only from evidence on disk — the exported ledger
 * (JSONL), the sandbox's export (its own receipts, requests and fault trace), the store records
 * and the run manifest (ids only) — never from anything the runner kept in memory.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  createLedgerChainVerifier,
  type LedgerEvent,
  type ProposalReplay,
  parseLedgerEvent,
  replayProposal,
} from '../core/ledger.js';
import {
  type ExpectationCheck,
  INVARIANT_NAMES,
  type InvariantId,
  type InvariantVerdict,
  type ReportProposal,
  type ReportReceipt,
  type ScenarioReport,
  type TimelineEntry,
} from './report-types.js';
import type { ActionPlan, Scenario, SupportCase } from './scenario-fixtures.js';
import { type ScenarioManifest, scenarioArtifactPaths } from './scenario-runner.js';
import { VerifierInputError } from './verifier-errors.js';

interface SandboxReceiptEvidence {
  readonly receiptId: string;
  readonly provider: string;
  readonly operation: string;
  readonly objectId: string;
  readonly effectKey: string | null;
  readonly amountMinor?: number;
  readonly idempotencyKey: string | null;
  readonly committedAt: string;
}

interface SandboxRequestEvidence {
  readonly sequence: number;
  readonly receivedAt: string;
  readonly provider: string | null;
  readonly operation: string | null;
  readonly method: string;
  readonly status: number | null;
  readonly delivery: string;
  readonly fault: string | null;
  readonly writeOutcome: string;
  readonly idempotencyKey: string | null;
  readonly effectKey: string | null;
  readonly receiptId: string | null;
}

interface SandboxEvidence {
  /** Provider → collection → `[id, record]` pairs: the provider's objects themselves. */
  readonly state?: Readonly<
    Record<string, Readonly<Record<string, readonly (readonly [string, unknown])[]>>>
  >;
  readonly observations: {
    readonly receipts: readonly SandboxReceiptEvidence[];
    readonly requests: readonly SandboxRequestEvidence[];
    readonly droppedEntryCount: number;
  };
}

interface StoreRecordEvidence {
  readonly ref: string;
  readonly proposal: string;
  readonly status: string | null;
  readonly snapshotPresent: boolean | null;
}

/** Everything the judge reads, parsed. */
export interface ScenarioEvidence {
  readonly manifest: ScenarioManifest;
  readonly events: readonly LedgerEvent[];
  readonly chain: { readonly valid: boolean; readonly detail: string; readonly entries: number };
  readonly sandbox: SandboxEvidence;
  readonly records: readonly StoreRecordEvidence[];
}

async function readText(outputDir: string, relative: string, what: string): Promise<string> {
  try {
    return await readFile(join(outputDir, relative), 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new VerifierInputError(
      `cannot read the ${what} ${join(outputDir, relative)} (${code ?? String(error)}); run the scenario first (sideguard run --case NAME)`,
    );
  }
}

function parseJson<T>(text: string, file: string): T {
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new VerifierInputError(`${file} is not valid JSON`);
  }
}

/** Reads a scenario's evidence files from the output directory. */
export async function readScenarioEvidence(
  outputDir: string,
  scenario: string,
): Promise<ScenarioEvidence> {
  const paths = scenarioArtifactPaths(scenario);
  const manifest = parseJson<ScenarioManifest>(
    await readText(outputDir, paths.manifest, 'run manifest'),
    paths.manifest,
  );
  if (manifest.schema !== 'sideguard.scenario-manifest/v1' || manifest.scenario !== scenario) {
    throw new VerifierInputError(
      `${join(outputDir, paths.manifest)} is not the manifest of scenario ${scenario}`,
    );
  }
  const ledgerText = await readText(outputDir, paths.ledger, 'ledger export');
  const verifier = createLedgerChainVerifier();
  const events: LedgerEvent[] = [];
  let detail = '';
  let valid = true;
  for (const [index, line] of ledgerText.split('\n').entries()) {
    if (line.trim() === '') continue;
    let raw: unknown;
    try {
      raw = JSON.parse(line);
    } catch {
      valid = false;
      detail = `line ${index + 1} is not valid JSON`;
      break;
    }
    const failure = verifier.push(raw);
    if (failure !== undefined) {
      valid = false;
      detail = `line ${index + 1}: ${failure.reason}: ${failure.message}`;
      break;
    }
    const event = parseLedgerEvent(raw);
    if (typeof event !== 'string') events.push(event);
  }
  const verdict = verifier.result();
  // The chain proves only what the file holds; its end must be the head the store had.
  const head = verdict.kind === 'valid' ? verdict.head : undefined;
  const anchor = manifest.ledgerHead;
  if (
    valid &&
    anchor !== null &&
    (head?.sequence !== anchor.sequence || head?.hash !== anchor.hash)
  ) {
    valid = false;
    detail = `the file ends at sequence ${head?.sequence ?? 0}, but the store's head at export was sequence ${anchor.sequence} (entries were removed from the end, or the file is from another run)`;
  }
  if (valid) {
    detail =
      verdict.kind === 'valid'
        ? `${verdict.count} entries, head sequence ${verdict.head?.sequence ?? 0} (${verdict.head?.hash.slice(0, 16) ?? '-'}…)`
        : verdict.message;
  }
  const sandbox = parseJson<SandboxEvidence>(
    await readText(outputDir, paths.sandbox, 'sandbox export'),
    paths.sandbox,
  );
  if (
    !Array.isArray(sandbox?.observations?.receipts) ||
    !Array.isArray(sandbox.observations.requests)
  ) {
    throw new VerifierInputError(`${join(outputDir, paths.sandbox)} is not a sandbox export`);
  }
  const records = parseJson<StoreRecordEvidence[]>(
    await readText(outputDir, paths.records, 'store records'),
    paths.records,
  );
  return { manifest, events, chain: { valid, detail, entries: events.length }, sandbox, records };
}

const WRITE_METHODS = new Set(['POST', 'PATCH', 'PUT', 'DELETE']);
const SETTLED_WITH_WRITE = new Set([
  'verified',
  'compensation_required',
  'compensated',
  'partially_succeeded',
  'erased',
]);
const BLOCKING = new Set([
  'blocked',
  'denied',
  'stale',
  'expired',
  'awaiting_authority',
  'superseded',
]);

const effectOf = (replay: ProposalReplay): string | null => {
  for (const event of replay.events) {
    const key = event.data.semanticEffectKey;
    if (typeof key === 'string') return key;
  }
  return null;
};

const short = (value: string, length = 14): string =>
  value.length > length ? `${value.slice(0, length)}…` : value;

/** Receipt ids the ledger claims, as `provider:id`. */
function ledgerReceipts(events: readonly LedgerEvent[]): Set<string> {
  const claimed = new Set<string>();
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) {
      for (const item of value) visit(item);
    } else if (typeof value === 'object' && value !== null) {
      const record = value as Record<string, unknown>;
      if (typeof record.id === 'string' && typeof record.provider === 'string') {
        claimed.add(`${record.provider}:${record.id}`);
      }
      for (const nested of Object.values(record)) visit(nested);
    }
  };
  for (const event of events) {
    if (
      [
        'committed',
        'verification_observed',
        'partial_commit',
        'late_result_observed',
        'compensated',
        'compensation_required',
      ].includes(event.type)
    ) {
      visit(event.data);
    }
  }
  return claimed;
}

function labelOf(
  primary: ProposalReplay | undefined,
  related: readonly ProposalReplay[],
  events: readonly LedgerEvent[],
): string {
  if (primary === undefined) return 'no_evidence';
  const path = primary.decisionPath;
  const status = primary.status;
  if (path.includes('contract_rejected')) return 'rejected_before_execution';
  if (path.includes('dry_run_predicted')) return 'dry_run_predicted';
  if (status === 'awaiting_authority' && path.includes('authority_lapsed'))
    return 'authority_lapsed';
  if (status === 'awaiting_authority' && path.includes('authority_rejected'))
    return 'authority_rejected';
  if (status === 'awaiting_authority') return 'authority_pending';
  if (status !== 'verified' && status !== null) return status;
  if (status === 'verified') {
    const effect = effectOf(primary);
    const retried =
      related.length > 1 ||
      events.some((e) => e.type === 'retry_resolved' && e.data.semanticEffectKey === effect);
    if (retried) return 'retry_resolved';
    if (path.includes('resend_allowed')) return 'verified_after_resend';
    if (path.includes('commit_outcome_unknown') || path.includes('lease_expired'))
      return 'verified_after_unknown';
    return 'committed';
  }
  return 'no_status';
}

/** Judges one scenario from its evidence. */
export function judgeScenario(
  scenario: Scenario,
  supportCase: SupportCase,
  plan: ActionPlan,
  evidence: ScenarioEvidence,
): ScenarioReport {
  const { events, manifest, sandbox } = evidence;
  const receipts = sandbox.observations.receipts;
  const requests = sandbox.observations.requests;
  const proposalIds = [
    ...new Set(events.map((e) => e.proposal).filter((p): p is string => p !== null)),
  ];
  const replays = new Map<string, ProposalReplay>();
  for (const id of proposalIds) {
    const replay = replayProposal(events, id);
    if (replay !== undefined) replays.set(id, replay);
  }
  // The primary proposal: the plan's primary ref, followed through supersession to the owner.
  let primaryId: string | undefined = manifest.refs[manifest.primaryRef];
  for (let hops = 0; primaryId !== undefined && hops < 5; hops++) {
    const superseded = replays.get(primaryId)?.events.find((e) => e.type === 'superseded');
    const owner = superseded?.data.owner;
    if (typeof owner !== 'string') break;
    primaryId = owner;
  }
  const primary = primaryId === undefined ? undefined : replays.get(primaryId);
  const primaryEffect = primary === undefined ? null : effectOf(primary);
  const related = [...replays.values()].filter(
    (r) => primaryEffect !== null && effectOf(r) === primaryEffect,
  );
  const effectReceipts = receipts.filter((r) =>
    primaryEffect === null ? r.effectKey !== null : r.effectKey === primaryEffect,
  );
  const writes = effectReceipts.length;
  const claimed = ledgerReceipts(events);

  const verdicts: InvariantVerdict[] = [];
  const verdict = (id: InvariantId, result: InvariantVerdict['verdict'], text: string) =>
    verdicts.push({ id, name: INVARIANT_NAMES[id], verdict: result, evidence: text });

  // The export must agree with itself: every refund object in the provider's state that carries
  // an effect has a receipt, and every refund receipt names an object that exists. An edited
  // receipt list cannot hide a second refund that the state still holds.
  const exportProblems: string[] = [];
  {
    const refundsInState = (sandbox.state?.payments?.refunds ?? []).flatMap(([id, value]) => {
      const effect = (value as { metadata?: Record<string, unknown> } | null)?.metadata
        ?.sideguard_effect;
      return typeof effect === 'string' ? [{ id, effect }] : [];
    });
    const refundReceipts = receipts.filter(
      (r) => r.provider === 'payments' && r.operation === 'create_refund',
    );
    const receiptIds = new Set(refundReceipts.map((r) => r.objectId));
    const stateIds = new Set((sandbox.state?.payments?.refunds ?? []).map(([id]) => id));
    for (const refund of refundsInState) {
      if (!receiptIds.has(refund.id))
        exportProblems.push(
          `refund ${refund.id} exists in the provider's state but has no receipt`,
        );
    }
    for (const receipt of refundReceipts) {
      if (sandbox.state !== undefined && !stateIds.has(receipt.objectId)) {
        exportProblems.push(`receipt ${receipt.objectId} names no refund in the provider's state`);
      }
    }
  }
  if (exportProblems.length > 0) {
    verdict(
      'I1',
      'fail',
      `the sandbox export contradicts itself: ${exportProblems.slice(0, 2).join('; ')}`,
    );
  } else {
    const counts = new Map<string, number>();
    for (const receipt of receipts) {
      if (receipt.effectKey === null) continue;
      const key = `${receipt.effectKey}|${receipt.provider}.${receipt.operation}`;
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
    const over = [...counts].filter(([, count]) => count > 1);
    const unattributed = receipts.filter((r) => r.effectKey === null).length;
    if (over.length > 0) {
      const [key, count] = over[0]!;
      const [effect, operation] = key.split('|');
      verdict(
        'I1',
        'fail',
        `the sandbox committed ${count} ${operation} writes for effect ${short(effect ?? '')}`,
      );
    } else {
      verdict(
        'I1',
        'pass',
        `${counts.size} (effect, operation) pair(s), each written at most once per the sandbox's receipts (which agree with its state)${unattributed > 0 ? `; ${unattributed} write(s) by other actors carry no effect` : ''}`,
      );
    }
  }

  const startedByEffect = new Map<string, LedgerEvent[]>();
  for (const replay of replays.values()) {
    const effect = effectOf(replay);
    if (effect === null) continue;
    for (const event of replay.events) {
      if (event.type === 'commit_started')
        startedByEffect.set(effect, [...(startedByEffect.get(effect) ?? []), event]);
    }
  }
  const baseEffect = (effect: string) => effect.replace(/:compensation$/, '');

  // I2 authority first: every write traces to a commit_started preceded by an authority decision.
  {
    const problems: string[] = [];
    for (const receipt of receipts) {
      if (receipt.effectKey === null) continue;
      const effect = baseEffect(receipt.effectKey);
      const owners = [...replays.values()].filter((r) => effectOf(r) === effect);
      const authorized = owners.some((replay) => {
        const started = replay.events.findIndex((e) => e.type === 'commit_started');
        if (started < 0) return false;
        return replay.events
          .slice(0, started)
          .some(
            (e) =>
              e.type === 'authority_satisfied' ||
              (e.type === 'policy_decided' && e.data.decision === 'allow'),
          );
      });
      if (!authorized)
        problems.push(`${receipt.objectId} (${receipt.provider}.${receipt.operation})`);
    }
    verdict(
      'I2',
      problems.length > 0
        ? 'fail'
        : receipts.some((r) => r.effectKey !== null)
          ? 'pass'
          : 'not_applicable',
      problems.length > 0
        ? `write(s) without a recorded authority decision before commit_started: ${problems.join(', ')}`
        : `every attributable write follows a durable policy allow or authority_satisfied and a commit_started`,
    );
  }

  // I3 evidence: every attributable write is claimed by the ledger, and every claim is real.
  {
    const unclaimed = receipts.filter(
      (r) => r.effectKey !== null && !claimed.has(`${r.provider}:${r.objectId}`),
    );
    const real = new Set(receipts.map((r) => `${r.provider}:${r.objectId}`));
    const phantom = [...claimed].filter((id) => !real.has(id));
    const orphanCommitted = [...replays.values()].filter(
      (replay) =>
        replay.decisionPath.includes('committed') &&
        replay.decisionPath.indexOf('commit_started') > replay.decisionPath.indexOf('committed'),
    );
    const problems = [
      ...unclaimed.map((r) => `write ${r.objectId} is not in the ledger`),
      ...phantom.map((id) => `the ledger claims ${id}, which the provider never issued`),
      ...orphanCommitted.map((r) => `${r.proposal} recorded committed without commit_started`),
    ];
    verdict(
      'I3',
      problems.length > 0
        ? 'fail'
        : claimed.size > 0 || receipts.length > 0
          ? 'pass'
          : 'not_applicable',
      problems.length > 0
        ? problems.slice(0, 3).join('; ')
        : `${claimed.size} receipt(s) claimed by the ledger, all issued by the provider; every attributable write is claimed`,
    );
  }

  // I4 dry run is dry.
  {
    const dryRuns = events.filter((e) => e.type === 'dry_run_predicted');
    if (dryRuns.length === 0) {
      verdict('I4', 'not_applicable', 'no dry run in this scenario');
    } else {
      const problems: string[] = [];
      for (const dry of dryRuns) {
        const effect =
          typeof dry.data.semanticEffectKey === 'string' ? dry.data.semanticEffectKey : null;
        if (events.some((e) => e.proposal === dry.proposal && e.type !== 'dry_run_predicted')) {
          problems.push(`dry run ${dry.proposal} has other ledger events`);
        }
        const committedElsewhere =
          effect !== null && (startedByEffect.get(effect)?.length ?? 0) > 0;
        if (!committedElsewhere && receipts.some((r) => r.effectKey === effect)) {
          problems.push(`the provider holds a write for dry-run effect ${short(effect ?? '')}`);
        }
      }
      verdict(
        'I4',
        problems.length > 0 ? 'fail' : 'pass',
        problems.length > 0
          ? problems.join('; ')
          : `${dryRuns.length} dry run(s): no claim, no other event, no provider write`,
      );
    }
  }

  // I5 no blind resend: provider write attempts per effect never exceed the guard's commit_started.
  {
    const problems: string[] = [];
    const attempts = new Map<string, number>();
    for (const request of requests) {
      if (
        request.effectKey === null ||
        !WRITE_METHODS.has(request.method) ||
        request.operation === null
      )
        continue;
      if (request.effectKey.endsWith(':compensation')) continue;
      const key = `${request.effectKey}|${request.provider}.${request.operation}`;
      attempts.set(key, (attempts.get(key) ?? 0) + 1);
    }
    for (const [key, count] of attempts) {
      const [effect, operation] = key.split('|');
      const started = startedByEffect.get(effect ?? '')?.length ?? 0;
      if (count > started) {
        problems.push(
          `the provider saw ${count} ${operation} attempt(s) for effect ${short(effect ?? '')} but the ledger started ${started}`,
        );
      }
    }
    for (const replay of replays.values()) {
      const starts = replay.decisionPath.filter((t) => t === 'commit_started').length;
      const resends = replay.decisionPath.filter((t) => t === 'resend_allowed').length;
      if (starts > 1 + resends)
        problems.push(
          `${replay.proposal} started ${starts} commits with ${resends} allowed resend(s)`,
        );
      for (const [index, event] of replay.events.entries()) {
        if (event.type !== 'resend_allowed') continue;
        const observed = replay.events
          .slice(0, index)
          .reverse()
          .find((e) => e.type === 'verification_observed');
        if (observed?.data.result !== 'absent' || observed.data.final !== true) {
          problems.push(`${replay.proposal} resent without a final absence from the provider`);
        }
      }
    }
    const unknowns = events.filter(
      (e) => e.type === 'commit_outcome_unknown' || e.type === 'lease_expired',
    ).length;
    verdict(
      'I5',
      problems.length > 0 ? 'fail' : 'pass',
      problems.length > 0
        ? problems.slice(0, 3).join('; ')
        : `${[...attempts.values()].reduce((a, b) => a + b, 0)} provider write attempt(s), none beyond the ledger's commit_started; ${unknowns} unknown outcome(s) went to verification`,
    );
  }

  // I6 no silent partial failure.
  {
    const problems: string[] = [];
    let checked = 0;
    for (const replay of replays.values()) {
      const effect = effectOf(replay);
      if (effect === null || !replay.decisionPath.includes('commit_started')) continue;
      const written = receipts.filter((r) => r.effectKey === effect);
      if (written.length === 0) continue;
      checked += 1;
      if (!SETTLED_WITH_WRITE.has(replay.status ?? '')) {
        problems.push(
          `${replay.proposal} ends ${replay.status ?? 'without status'} although the provider committed ${written.map((r) => r.objectId).join(', ')}`,
        );
      }
      const partial = replay.events.find((e) => e.type === 'partial_commit');
      const failedStep =
        Array.isArray(partial?.data.items) &&
        (partial.data.items as { outcome?: string }[]).some((i) => i.outcome !== 'committed');
      if (
        failedStep &&
        !['compensation_required', 'compensated', 'partially_succeeded'].includes(
          replay.status ?? '',
        )
      ) {
        problems.push(`${replay.proposal} had a failed step but ends ${replay.status}`);
      }
      if (failedStep && replay.status === 'compensation_required') {
        const event = replay.events.find((e) => e.type === 'compensation_required');
        const listed = JSON.stringify(event?.data.receipts ?? []);
        for (const receipt of written.filter((r) => r.provider === 'payments')) {
          if (!listed.includes(receipt.objectId))
            problems.push(
              `compensation_required for ${replay.proposal} does not name receipt ${receipt.objectId}`,
            );
        }
      }
    }
    verdict(
      'I6',
      problems.length > 0 ? 'fail' : checked > 0 ? 'pass' : 'not_applicable',
      problems.length > 0
        ? problems.slice(0, 3).join('; ')
        : checked > 0
          ? `${checked} proposal(s) with committed writes all end in a status that owns them (${[
              ...replays.values(),
            ]
              .filter((r) => r.decisionPath.includes('commit_started'))
              .map((r) => r.status)
              .join(', ')})`
          : 'no committed write in this scenario',
    );
  }

  // I7 tamper-evident ledger.
  verdict(
    'I7',
    evidence.chain.valid ? 'pass' : 'fail',
    `hash chain ${evidence.chain.valid ? 'intact' : 'broken'}: ${evidence.chain.detail}`,
  );

  // I8 private stays private.
  {
    const secrets = [
      ...Object.values(supportCase.private),
      ...plan.steps.flatMap((step) =>
        'args' in step && typeof step.args.note === 'string' ? [step.args.note] : [],
      ),
    ].filter((value) => value.length >= 6);
    const ledgerText = JSON.stringify(events);
    const leaked = secrets.filter((secret) => ledgerText.includes(secret));
    const erasedIds = events.filter((e) => e.type === 'erased').map((e) => e.proposal);
    const notGone = evidence.records.filter(
      (r) => erasedIds.includes(r.proposal) && r.snapshotPresent !== false,
    );
    const problems = [
      ...leaked.map(() => 'a private value of the case appears in the ledger'),
      ...notGone.map((r) => `erased proposal ${r.proposal} still has its private snapshot`),
    ];
    verdict(
      'I8',
      problems.length > 0 ? 'fail' : 'pass',
      problems.length > 0
        ? problems.join('; ')
        : `none of ${secrets.length} private value(s) appears in the ledger${erasedIds.length > 0 ? `; ${erasedIds.length} erased proposal(s) keep no snapshot and leave a tombstone` : ''}`,
    );
  }

  // I9 bound authority.
  {
    const needing = [...replays.values()].filter((r) =>
      r.events.some((e) => e.type === 'policy_decided' && e.data.decision === 'require_approval'),
    );
    const rejected = events.filter((e) => e.type === 'authority_rejected');
    if (needing.length === 0 && rejected.length === 0) {
      verdict('I9', 'not_applicable', 'no approval was required or presented');
    } else {
      const problems: string[] = [];
      let executedWithApproval = 0;
      for (const replay of needing) {
        const started = replay.events.findIndex((e) => e.type === 'commit_started');
        if (started < 0) continue;
        executedWithApproval += 1;
        const before = replay.events.slice(0, started);
        const satisfied = before.filter((e) => e.type === 'authority_satisfied').at(-1);
        const approvers = Array.isArray(satisfied?.data.approvers)
          ? (satisfied.data.approvers as string[])
          : [];
        const required =
          before
            .filter((e) => e.type === 'authority_recorded')
            .map((e) => Number(e.data.required))
            .at(-1) ?? 0;
        const recorded = new Set(
          before
            .filter((e) => e.type === 'authority_recorded' && e.data.decision === 'approve')
            .map((e) => String(e.data.authority)),
        );
        if (satisfied === undefined)
          problems.push(`${replay.proposal} executed without authority_satisfied`);
        else if (new Set(approvers).size < required || approvers.some((a) => !recorded.has(a))) {
          problems.push(
            `${replay.proposal} executed with ${new Set(approvers).size} of ${required} distinct recorded approvals`,
          );
        }
      }
      const codes = [...new Set(rejected.map((e) => String(e.data.reasonCode)))];
      verdict(
        'I9',
        problems.length > 0 ? 'fail' : 'pass',
        problems.length > 0
          ? problems.join('; ')
          : `${executedWithApproval} approval-bound execution(s) each had the required distinct recorded approvals${rejected.length > 0 ? `; ${rejected.length} mismatched evidence rejected (${codes.join(', ')})` : ''}`,
      );
    }
  }

  // Expectations of the fixture.
  const label = labelOf(primary, related, events);
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
  expect(
    'sandbox kept every request',
    '0 dropped',
    `${sandbox.observations.droppedEntryCount} dropped`,
  );

  const reportReceipts: ReportReceipt[] = receipts.map((r) => ({
    id: r.objectId,
    provider: r.provider,
    operation: r.operation,
    effect: r.effectKey,
    amountMinor: r.amountMinor ?? null,
    createdAt: r.committedAt,
    inLedger: claimed.has(`${r.provider}:${r.objectId}`),
  }));
  const proposals: ReportProposal[] = [...replays.values()].map((r) => ({
    proposal: r.proposal,
    actionType: r.actionType,
    status: r.status,
    semanticEffectKey: effectOf(r),
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

/**
 * The ledger is the backbone (sequence order); each provider write request is placed right after
 * the `commit_started` whose idempotency key it carried; other requests (reads, other actors,
 * bypasses) are placed by time.
 */
function buildTimeline(
  events: readonly LedgerEvent[],
  requests: readonly SandboxRequestEvidence[],
  receipts: readonly SandboxReceiptEvidence[],
): TimelineEntry[] {
  const byReceipt = new Map(receipts.map((r) => [r.receiptId, r]));
  const requestEntries = (request: SandboxRequestEvidence): TimelineEntry[] => {
    const entries: TimelineEntry[] = [
      {
        at: request.receivedAt,
        source: 'sandbox',
        sequence: null,
        proposal: null,
        type:
          request.fault === null
            ? `request:${request.operation ?? request.method}`
            : `fault:${request.fault}`,
        status: request.status === null ? null : String(request.status),
        detail: `${request.method} ${request.operation ?? ''} → ${request.writeOutcome}, ${request.delivery}${request.fault ? ` (${request.fault})` : ''}`,
      },
    ];
    const receipt = request.receiptId === null ? undefined : byReceipt.get(request.receiptId);
    if (receipt !== undefined) {
      entries.push({
        at: receipt.committedAt,
        source: 'sandbox',
        sequence: null,
        proposal: null,
        type: `write:${receipt.operation}`,
        status: null,
        detail: `${receipt.objectId}${receipt.amountMinor === undefined ? '' : ` ${receipt.amountMinor}`}${receipt.effectKey === null ? ' (no effect: another actor)' : ''}`,
      });
    }
    return entries;
  };
  const writes = requests.filter((r) => WRITE_METHODS.has(r.method));
  const placed = new Set<number>();
  const timeline: TimelineEntry[] = [];
  const flushBefore = (at: string) => {
    for (const request of writes) {
      if (!placed.has(request.sequence) && request.receivedAt < at) {
        placed.add(request.sequence);
        timeline.push(...requestEntries(request));
      }
    }
  };
  for (const event of events) {
    if (event.type !== 'commit_started') flushBefore(event.at);
    const reason = event.data.reasonCode;
    const receipt = (event.data.receipt as { id?: string } | undefined)?.id;
    timeline.push({
      at: event.at,
      source: 'ledger',
      sequence: event.sequence,
      proposal: event.proposal,
      type: event.type,
      status: event.status,
      detail:
        [typeof reason === 'string' ? reason : undefined, receipt].filter(Boolean).join(' ') || '',
    });
    if (event.type === 'commit_started') {
      const key = event.data.providerIdempotencyKey;
      for (const request of writes) {
        if (!placed.has(request.sequence) && request.idempotencyKey === key) {
          placed.add(request.sequence);
          timeline.push(...requestEntries(request));
        }
      }
    }
  }
  flushBefore('\uffff');
  return timeline;
}
