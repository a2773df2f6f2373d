/**
 * One linear pass over a schedule's evidence that every invariant shares: events per proposal,
 * records by id, the receipts the ledger claims, and who started which provider key.
 */
import type { LedgerEvent } from '../../core/ledger.js';
import type { ProposalRecord } from '../../core/store.js';
import { labelOf, type ScheduleEvidence, type Violation } from '../schedule-evidence.js';

/** Event types whose data may carry receipts the ledger claims. */
const RECEIPT_EVENTS = new Set([
  'committed',
  'verification_observed',
  'partial_commit',
  'late_result_observed',
  'compensated',
  'compensation_required',
]);

/** Indexes over one schedule's evidence. */
export interface EvidenceIndex {
  readonly evidence: ScheduleEvidence;
  readonly eventsByProposal: ReadonlyMap<string, readonly LedgerEvent[]>;
  readonly records: ReadonlyMap<string, ProposalRecord>;
  /** `provider:id` of every receipt the ledger claims. */
  readonly claimedReceipts: ReadonlySet<string>;
  /** commit_started events by the provider idempotency key they announced. */
  readonly startedByKey: ReadonlyMap<string, LedgerEvent>;
  /** The step at which a ledger event became durable (Infinity if never acknowledged). */
  stepOf(event: LedgerEvent): number;
  /** A violation about a proposal (named by its effect's label). */
  about(invariant: string, proposal: string | null, message: string): Violation;
}

function collectReceipts(value: unknown, into: Set<string>): void {
  if (Array.isArray(value)) {
    for (const item of value) collectReceipts(item, into);
  } else if (typeof value === 'object' && value !== null) {
    const record = value as Record<string, unknown>;
    if (typeof record.id === 'string' && typeof record.provider === 'string') {
      into.add(`${record.provider}:${record.id}`);
    }
    for (const nested of Object.values(record)) collectReceipts(nested, into);
  }
}

/**
 * The scheduler step at which each ledger sequence became durable: its commit's step, or the
 * later step at which a breakage appended it apart from its commit.
 */
export function stepsOfSequences(
  evidence: Pick<ScheduleEvidence, 'commits' | 'lateDurableSteps'>,
): ReadonlyMap<number, number> {
  const steps = new Map<number, number>();
  for (const commit of evidence.commits) {
    for (const event of commit.events) steps.set(event.sequence, commit.step);
  }
  for (const [sequence, step] of evidence.lateDurableSteps) steps.set(sequence, step);
  return steps;
}

/** Builds the shared indexes (linear in the evidence). */
export function indexEvidence(evidence: ScheduleEvidence): EvidenceIndex {
  const stepOfSequence = stepsOfSequences(evidence);
  const eventsByProposal = new Map<string, LedgerEvent[]>();
  const claimedReceipts = new Set<string>();
  const startedByKey = new Map<string, LedgerEvent>();
  for (const event of evidence.events) {
    if (event.proposal !== null) {
      const list = eventsByProposal.get(event.proposal);
      if (list === undefined) eventsByProposal.set(event.proposal, [event]);
      else list.push(event);
    }
    if (RECEIPT_EVENTS.has(event.type)) collectReceipts(event.data, claimedReceipts);
    if (event.type === 'commit_started' && typeof event.data.providerIdempotencyKey === 'string') {
      startedByKey.set(event.data.providerIdempotencyKey, event);
    }
  }
  const records = new Map(evidence.records.map((record) => [record.proposal, record]));
  return {
    evidence,
    eventsByProposal,
    records,
    claimedReceipts,
    startedByKey,
    stepOf: (event) => stepOfSequence.get(event.sequence) ?? Number.POSITIVE_INFINITY,
    about(invariant, proposal, message) {
      const record = proposal === null ? undefined : records.get(proposal);
      const effect =
        record !== undefined ? labelOf(evidence, record.semanticEffectKey) : (proposal ?? '-');
      return { invariant, effect, message };
    },
  };
}
