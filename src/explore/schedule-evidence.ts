/**
 * What one schedule leaves behind, and all the invariants read: the durable ledger and records,
 * the provider's own truth, the store probe's log of acknowledged commits, and the harness's
 * trace (guard calls that threw, zombie operations, escapes from the tape).
 */
import type { ActionDefinition } from '../core/action.js';
import type { JsonValue } from '../core/canonical-json.js';
import type { GuardEvent } from '../core/guard.js';
import type { LedgerEvent, LedgerHead } from '../core/ledger.js';
import type { AuthorityEvidenceRecord, ProposalRecord } from '../core/store.js';
import type { AppliedWrite, ModelObject, RequestRecord } from './provider-model.js';
import type { ZombieRun } from './scheduler.js';
import type { CommitObservation } from './store-probe.js';
import type { GuardCallFailure } from './world.js';

/** Whether a provider write carries exactly the input its proposal committed to. */
export type InputBinding = (
  write: AppliedWrite,
  input: Readonly<Record<string, JsonValue>>,
) => boolean;

/** Everything the invariants read about one schedule. */
export interface ScheduleEvidence {
  readonly tenant: string;
  readonly workload: string;
  readonly honoursKeys: boolean;
  /** The tenant's sealed ledger, read from the durable store after the schedule. */
  readonly events: readonly LedgerEvent[];
  /** The store's own chain head. */
  readonly head: LedgerHead | undefined;
  /** Every proposal's final durable record. */
  readonly records: readonly ProposalRecord[];
  /** Stored authority evidence per proposal. */
  readonly evidence: ReadonlyMap<string, readonly AuthorityEvidenceRecord[]>;
  /** The proposal's committed input, opened from its snapshot (undefined once erased). */
  readonly inputOf: (proposal: string) => Promise<JsonValue | undefined>;
  readonly writes: readonly AppliedWrite[];
  readonly requests: readonly RequestRecord[];
  readonly objects: readonly ModelObject[];
  readonly commits: readonly CommitObservation[];
  /**
   * The scheduler step at which ledger events became durable apart from the commit that wrote
   * them (a store breakage appends them later); every other event became durable with its
   * commit in `commits`. Read both through `stepsOfSequences` (invariants/evidence-index.ts).
   */
  readonly lateDurableSteps: ReadonlyMap<number, number>;
  /** Per write operation: does a write carry exactly its proposal's committed input? */
  readonly inputBindings: ReadonlyMap<string, InputBinding>;
  readonly failures: readonly GuardCallFailure[];
  readonly zombies: readonly ZombieRun[];
  /** Ambient time, randomness or timers the simulated code reached. */
  readonly escapes: readonly string[];
  readonly sinkEvents: readonly GuardEvent[];
  /** Semantic effect key → stable label. */
  readonly labels: ReadonlyMap<string, string>;
  readonly privateValues: readonly string[];
  readonly actions: ReadonlyMap<string, ActionDefinition>;
  /** Proposals the liveness phase could not settle, with their status. */
  readonly unsettled: readonly { readonly proposal: string; readonly status: string }[];
  /** Whether the fault phase ended by itself within its step bound. */
  readonly faultPhaseFinished: boolean;
  readonly steps: number;
}

/** A broken invariant, named so shrinking can insist on the same one on the same effect. */
export interface Violation {
  readonly invariant: string;
  /** The effect's stable label (`refund:ord_1001:25.00`), a proposal, or `-`. */
  readonly effect: string;
  readonly message: string;
}

/** The stable label of an effect key (or the key itself when no workload named it). */
export function labelOf(evidence: Pick<ScheduleEvidence, 'labels'>, effect: string | null): string {
  if (effect === null) return '-';
  const base = effect.replace(/:compensation$/, '');
  const label = evidence.labels.get(base);
  if (label === undefined) return effect.slice(0, 24);
  return base === effect ? label : `${label}:compensation`;
}
