/**
 * The world of one schedule: the tape, the virtual clock, the scheduler, the provider model,
 * the shared store log, one guard per live process incarnation, and what the harness learns
 * from guard results (effect labels, proposals, failures). Workloads act only through it.
 */
import type { ActionDefinition } from '../core/action.js';
import type { Guard, GuardEvent, GuardResult } from '../core/guard.js';
import type { KeyRing } from '../core/key-ring.js';
import type { ChoiceTape } from './choice-tape.js';
import type { ActorKind, ProcessName } from './explore-vocabulary.js';
import type { ProviderModel } from './provider-model.js';
import type { InputBinding } from './schedule-evidence.js';
import type { Actor, Scheduler } from './scheduler.js';
import type { StoreLog } from './store-probe.js';
import type { VirtualClock } from './virtual-clock.js';

/** A guard call that threw (the guard must return outcomes, not throw). */
export interface GuardCallFailure {
  readonly actor: string;
  readonly process: ProcessName;
  readonly call: string;
  readonly proposal: string | null;
  readonly step: number;
  readonly code: string;
  readonly message: string;
}

/** What an agent asked for: replayed by recovery and liveness as "the agent retries". */
export interface AgentRequest {
  readonly action: ActionDefinition;
  /** The input without retry metadata (`requestId` is added per attempt). */
  readonly input: Readonly<Record<string, unknown>>;
  readonly principal: string;
  /** Stable across shrinking: names the effect in violations (`refund:order_2:25.00`). */
  readonly label: string;
  /** Reads the policy's facts from the provider (a provider call), or none. */
  readonly facts?: () => Promise<unknown>;
}

/** The schedule's state as workloads and the harness see it. */
export interface World {
  readonly tape: ChoiceTape;
  readonly clock: VirtualClock;
  readonly scheduler: Scheduler;
  readonly provider: ProviderModel;
  readonly log: StoreLog;
  readonly keyRing: KeyRing;
  readonly tenant: string;
  /** The breakages switched on for this schedule (test-only; workloads read the host ones). */
  readonly breakages: ReadonlySet<string>;
  /** The guard of a process's live incarnation. */
  guardOf(process: ProcessName): Guard;
  /** Spawns an actor bound to its process's current guard. */
  spawn(
    kind: ActorKind,
    name: string,
    process: ProcessName,
    body: (guard: Guard, actor: Actor) => Promise<void>,
  ): void;
  /**
   * Calls the guard on behalf of an actor: a throw is recorded as evidence and answered with
   * undefined, so the actor goes on like a host that logs and continues.
   */
  call<T>(
    actor: Actor,
    name: string,
    proposal: string | null,
    run: () => Promise<T>,
  ): Promise<T | undefined>;
  /** Remembers what a result says about effects (labels) and proposals. */
  remember(result: GuardResult | undefined, request: AgentRequest | undefined): void;
  /** Registers an agent's request (so recovery and liveness retry it). */
  addRequest(request: AgentRequest): void;
  readonly requests: readonly AgentRequest[];
  /** Semantic effect key → stable label. */
  readonly labels: Map<string, string>;
  /** Values that must never appear in the ledger or events. */
  readonly privateValues: string[];
  readonly failures: GuardCallFailure[];
  /** Every event the guards' sinks received. */
  readonly sinkEvents: GuardEvent[];
  /** Every action of the workload, by type name. */
  readonly actions: Map<string, ActionDefinition>;
  /** Per write operation: how a write is bound to its proposal's input (checked by I2/I9). */
  readonly inputBindings: Map<string, InputBinding>;
  /** False once the liveness phase begins. */
  faultsEnabled: boolean;
}
