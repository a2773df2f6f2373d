/**
 * Cross-checks the explorer with the gate's judge (`src/verify/evidence-judge.ts`): a schedule's
 * evidence is presented in the shape the gate writes (ledger, sandbox observations and state,
 * store records) and judged. The judge must fail nothing the explorer passed; what the explorer
 * fails and the judge passes is reported as the judge's blind spot.
 */

import type { JsonValue } from '../core/canonical-json.js';
import { verifyLedgerChain } from '../core/ledger.js';
import type { FaultKind } from '../sandbox/fault-plan.js';
import type { WriteOutcome } from '../sandbox/observations.js';
import { judgeScenario, type ScenarioEvidence } from '../verify/evidence-judge.js';
import { deliveriesSeen, type ModelObject } from './provider-model.js';
import type { ScheduleEvidence, Violation } from './schedule-evidence.js';

/** The sandbox's name for a model fault, so the gate's judge reads it as it reads the sandbox's. */
const SANDBOX_FAULTS: Readonly<Record<string, FaultKind>> = {
  error_before_write: 'error_before_write',
  rate_limited: 'rate_limit',
  lost_before_write: 'drop_before_dispatch',
  lost_after_write: 'drop_after_write',
  error_after_write: 'error_after_write',
  late_write: 'hang_after_write',
};

function sandboxFaultOf(fault: string): FaultKind | null {
  return SANDBOX_FAULTS[fault] ?? null;
}

/** The sandbox's write outcome for a model request outcome. */
function sandboxOutcomeOf(outcome: string): WriteOutcome {
  if (outcome === 'applied') return 'committed';
  if (outcome === 'pending' || outcome === 'died') return 'unknown';
  return 'not_dispatched';
}
/** Which explorer invariant answers for each of the judge's. */
const EXPLORER_INVARIANT: Readonly<Record<string, string>> = {
  I1: 'one_write_per_effect',
  I2: 'authority_before_write',
  I3: 'writes_claimed',
  I4: 'dry_run_is_dry',
  I5: 'no_blind_resend',
  I6: 'no_silent_partial',
  I7: 'ledger_intact',
  I8: 'private_stays_private',
  I9: 'authority_before_write',
};

/** The judge's view of one schedule. */
export interface JudgeComparison {
  /** The judge's failing invariants, e.g. `I1: the sandbox committed 2 …`. */
  readonly judgeFailed: readonly string[];
  /** Judge failures the explorer did not report (a disagreement). */
  readonly disagreements: readonly Violation[];
  /** Explorer violations (with a design invariant) the judge passed. */
  readonly blindSpots: readonly string[];
}

const PROVIDER_OF: Readonly<Record<string, string>> = { refunds: 'payments', tickets: 'crm' };

/** The sandbox provider a model collection stands for (orders, and a user's own, are `orders`). */
const providerOf = (collection: string): string => PROVIDER_OF[collection] ?? 'orders';

/**
 * An object as its provider's export holds it, where the judge looks for its effect: a refund's
 * `metadata.sideguard_effect`, a ticket's `properties.sideguard_effect`; other objects as they are.
 */
function stateRecordOf(provider: string, object: ModelObject): JsonValue {
  if (provider === 'payments') {
    return { metadata: object.effect === null ? {} : { sideguard_effect: object.effect } };
  }
  if (provider === 'crm') return { properties: object.fields };
  return object.fields;
}

function asScenarioEvidence(evidence: ScheduleEvidence): ScenarioEvidence {
  const collectionOf = new Map(evidence.objects.map((object) => [object.id, object.collection]));
  const iso = (ms: number) => new Date(ms).toISOString();
  const receipts = evidence.writes.map((write) => ({
    receiptId: `rcpt_${write.sequence}`,
    provider: providerOf(collectionOf.get(write.objectId) ?? ''),
    operation: write.operation,
    objectId: write.objectId,
    effectKey: write.effect,
    ...(typeof write.fields.amount === 'number' ? { amountMinor: write.fields.amount } : {}),
    idempotencyKey: write.idempotencyKey,
    committedAt: iso(write.atMs),
  }));
  const requests = evidence.requests.flatMap((request) => {
    const seen = deliveriesSeen(request);
    return Array.from({ length: seen }, (_, delivery) => ({
      sequence: request.id * 10 + delivery,
      receivedAt: iso(request.sentAtMs),
      provider: request.operation === 'create_refund' ? 'payments' : 'crm',
      operation: request.operation,
      method: 'POST',
      status: null,
      delivery: 'sent' as const,
      fault: sandboxFaultOf(request.fault),
      writeOutcome: sandboxOutcomeOf(request.outcome),
      idempotencyKey: request.idempotencyKey,
      effectKey: request.effect,
      receiptId: null,
    }));
  });
  // Every object the model holds, under the provider its receipts name: the judge requires each
  // receipt to name an object in the state (a ticket closed or an order a bystander changed too).
  const state: Record<string, Record<string, [string, JsonValue][]>> = {};
  for (const object of evidence.objects) {
    const provider = providerOf(object.collection);
    const collections = state[provider] ?? {};
    state[provider] = collections;
    const records = collections[object.collection] ?? [];
    collections[object.collection] = records;
    records.push([object.id, stateRecordOf(provider, object)]);
  }
  const verdict = verifyLedgerChain(evidence.events);
  const first = evidence.records[0]?.proposal ?? 'none';
  return {
    manifest: {
      schema: 'sideguard.scenario-manifest/v1',
      scenario: 'explore',
      tenant: evidence.tenant,
      runId: 'explore',
      idempotency: evidence.honoursKeys ? 'honour' : 'ignore',
      refs: { primary: first },
      primaryRef: 'primary',
      ledgerHead: evidence.head ?? null,
      stepErrors: [],
    },
    events: evidence.events,
    chain: {
      valid: verdict.kind === 'valid',
      detail: verdict.kind === 'valid' ? `${verdict.count} entries` : verdict.message,
      entries: evidence.events.length,
    },
    sandbox: {
      state,
      observations: { receipts, requests, droppedEntryCount: 0 },
    },
    records: evidence.records.map((record) => ({
      ref: record.proposal,
      proposal: record.proposal,
      status: record.status,
      snapshotPresent: record.snapshot !== null,
    })),
  };
}

/** Judges one schedule with the gate's judge and compares with the explorer's violations. */
export function crossCheckWithJudge(
  evidence: ScheduleEvidence,
  violations: readonly Violation[],
): JudgeComparison {
  const report = judgeScenario(
    {
      name: 'explore',
      description: 'an explored schedule',
      case: 'explore',
      plan: 'explore',
      expect: { label: 'any', status: null, writes: 0 },
    },
    {
      id: 'explore',
      summary: 'explored schedule',
      customerId: 'cus_1001',
      orderId: 'ord_1001',
      chargeId: 'ch_1001',
      ticketId: '5001',
      private: Object.fromEntries(
        evidence.privateValues.map((value, index) => [`private_${index}`, value]),
      ),
    },
    { id: 'explore', primary: 'primary', steps: [{ do: 'execute', ref: 'primary' }] },
    asScenarioEvidence(evidence),
  );
  const explorerFailed = new Set(violations.map((violation) => violation.invariant));
  const judgeFailed = report.invariants.filter((verdict) => verdict.verdict === 'fail');
  const disagreements = judgeFailed
    .filter((verdict) => !explorerFailed.has(EXPLORER_INVARIANT[verdict.id] ?? ''))
    .map((verdict) => ({
      invariant: 'judge_agrees',
      effect: '-',
      message: `the gate's judge fails ${verdict.id} (${verdict.evidence.slice(0, 160)}) but the explorer passed it`,
    }));
  const judgeIds = new Set(judgeFailed.map((verdict) => EXPLORER_INVARIANT[verdict.id]));
  const blindSpots = [...explorerFailed].filter(
    (invariant) =>
      Object.values(EXPLORER_INVARIANT).includes(invariant) && !judgeIds.has(invariant),
  );
  return {
    judgeFailed: judgeFailed.map((verdict) => `${verdict.id}: ${verdict.evidence.slice(0, 160)}`),
    disagreements,
    blindSpots,
  };
}
