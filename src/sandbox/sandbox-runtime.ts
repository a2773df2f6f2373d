/**
 * The mutable heart of one running sandbox, shared by its data and control planes: providers,
 * state, keys, the fault plan with its per-operation request counters, held requests and logs.
 */

import {
  checkFaultPlanTargets,
  decideFault,
  type FaultDecision,
  type FaultPlan,
} from './fault-plan.js';
import type { KeyTable } from './identity.js';
import { ObservationLog, type SandboxObservations } from './observations.js';
import type { ProviderDefinition } from './sandbox-types.js';
import { hashToken } from './seeded-random.js';
import type { FileStateStore, ProvidersState } from './state-store.js';

/** Collection where a provider keeps its saved idempotent responses (bookkeeping, not objects). */
export const idempotencyCollection = 'idempotency_keys';

/** Whether a provider deduplicates writes by idempotency key. */
export const IdempotencyMode = { honour: 'honour', ignore: 'ignore' } as const;
export type IdempotencyMode = (typeof IdempotencyMode)[keyof typeof IdempotencyMode];

/** A request waiting on a `hold` fault. */
export interface HeldRequest {
  readonly holdId: string;
  readonly requestId: string;
  readonly provider: string;
  readonly operation: string;
  readonly requestIndex: number;
  /** ISO-8601 time the hold began. */
  readonly heldAt: string;
  readonly idempotencyKey: string | null;
  readonly effectKey: string | null;
}

/** How a hold ended: released through the control plane, or aborted by reset/close. */
export type HoldOutcome = 'released' | 'aborted';

/** The export document: state, observations and trace, everything a verifier reads. */
export interface SandboxExport {
  readonly format: 'sideguard-sandbox-export';
  readonly version: 1;
  readonly seed: number;
  readonly exportedAt: string;
  /** SHA-256 of provider objects in `state` (saved idempotent responses excluded). */
  readonly digest: string;
  readonly faultPlan: FaultPlan | null;
  readonly state: ProvidersState;
  readonly observations: SandboxObservations;
}

/** Construction inputs of {@link SandboxRuntime}. */
export interface SandboxRuntimeConfig {
  readonly providers: readonly ProviderDefinition[];
  readonly store: FileStateStore;
  readonly keys: KeyTable;
  readonly faultPlan: FaultPlan | null;
  readonly idempotency: Readonly<Record<string, IdempotencyMode>>;
  readonly bodyLimitBytes: number;
  readonly nowMs: () => number;
}

/** One running sandbox's shared state. */
export class SandboxRuntime {
  readonly providers: ReadonlyMap<string, ProviderDefinition>;
  readonly log = new ObservationLog();
  /** Idempotency records currently executing (`provider:scope:key`). */
  readonly inFlight = new Set<string>();
  private readonly prefixOrder: readonly ProviderDefinition[];
  private faultPlan: FaultPlan | null;
  private requestIndices = new Map<string, number>();
  private readonly held = new Map<
    string,
    { readonly entry: HeldRequest; readonly finish: (outcome: HoldOutcome) => void }
  >();
  private readonly timers = new Set<NodeJS.Timeout>();
  private requestSequence = 0;
  private holdSequence = 0;

  constructor(readonly config: SandboxRuntimeConfig) {
    this.providers = new Map(config.providers.map((provider) => [provider.name, provider]));
    this.prefixOrder = [...config.providers].sort(
      (a, b) => b.pathPrefix.length - a.pathPrefix.length,
    );
    this.faultPlan = null;
    this.setFaultPlan(config.faultPlan);
  }

  get store(): FileStateStore {
    return this.config.store;
  }

  get seed(): number {
    return this.config.store.seed;
  }

  /** The provider owning `pathname` by prefix, or `undefined`. */
  providerForPath(pathname: string): ProviderDefinition | undefined {
    return this.prefixOrder.find((provider) => pathname.startsWith(provider.pathPrefix));
  }

  /** Whether `provider` deduplicates by idempotency key in this sandbox. */
  honoursIdempotency(provider: ProviderDefinition): boolean {
    return (
      provider.idempotency !== undefined &&
      this.config.idempotency[provider.name] !== IdempotencyMode.ignore
    );
  }

  /**
   * The next request sequence number (restarting at 1 after a reset) and a token for its id,
   * deterministic per run and never repeated: it also counts opens of the state and resets.
   */
  nextRequest(): { readonly sequence: number; readonly token: string } {
    this.requestSequence += 1;
    const token = hashToken(
      14,
      this.seed,
      this.store.generation,
      'request',
      this.resetEpoch,
      this.requestSequence,
    );
    return { sequence: this.requestSequence, token };
  }

  /** The index of this request among those to `provider.operation`, and the fault it gets. */
  decideFault(
    provider: string,
    operation: string,
  ): FaultDecision & { readonly requestIndex: number } {
    const key = `${provider}.${operation}`;
    const requestIndex = this.requestIndices.get(key) ?? 0;
    this.requestIndices.set(key, requestIndex + 1);
    if (this.faultPlan === null) return { fault: null, ruleIndex: null, requestIndex };
    return {
      ...decideFault(this.faultPlan, this.seed, provider, operation, requestIndex),
      requestIndex,
    };
  }

  /** The current fault plan, or `null`. */
  currentFaultPlan(): FaultPlan | null {
    return this.faultPlan;
  }

  /** Replaces (or clears, with `null`) the fault plan; request indices restart at 0. */
  setFaultPlan(plan: FaultPlan | null): void {
    if (plan !== null) checkFaultPlanTargets(plan, [...this.providers.values()]);
    this.faultPlan = plan;
    this.requestIndices = new Map();
  }

  /** Parks a request until {@link release} (→ `released`) or reset/close (→ `aborted`). */
  hold(entry: Omit<HeldRequest, 'holdId' | 'heldAt'>): {
    readonly holdId: string;
    readonly outcome: Promise<HoldOutcome>;
  } {
    this.holdSequence += 1;
    const holdId = `hold_${this.holdSequence}`;
    const outcome = new Promise<HoldOutcome>((resolve) => {
      this.held.set(holdId, {
        entry: { ...entry, holdId, heldAt: new Date(this.config.nowMs()).toISOString() },
        finish: (result) => {
          this.held.delete(holdId);
          resolve(result);
        },
      });
    });
    return { holdId, outcome };
  }

  /** Requests currently held, oldest first. */
  heldRequests(): HeldRequest[] {
    return [...this.held.values()].map((held) => held.entry);
  }

  /** Releases one held request; `false` when no such hold is waiting. */
  release(holdId: string): boolean {
    const held = this.held.get(holdId);
    if (held === undefined) return false;
    held.finish('released');
    return true;
  }

  /** Releases every held request; returns how many were released. */
  releaseAll(): number {
    const holds = [...this.held.values()];
    for (const held of holds) held.finish('released');
    return holds.length;
  }

  /**
   * Counts resets. A request remembers the epoch it arrived in; once a reset moved past it, the
   * request neither executes nor appears in the new observations (it belongs to the old world).
   */
  get epoch(): number {
    return this.resetEpoch;
  }
  private resetEpoch = 0;
  private readonly sleepers = new Set<() => void>();

  /** Waits `delayMs` (a latency or hang fault); ends early at reset, and at close. */
  sleep(delayMs: number): Promise<void> {
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        this.timers.delete(timer);
        this.sleepers.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, delayMs);
      this.timers.add(timer);
      this.sleepers.add(wake);
    });
  }

  /** Returns state to the seed, clears observations, idempotency in-flight marks and holds. */
  async reset(initialPlan: FaultPlan | null): Promise<void> {
    this.resetEpoch += 1;
    // Hung and delayed requests of the old world end now (their connections are dropped).
    for (const wake of [...this.sleepers]) wake();
    for (const held of [...this.held.values()]) held.finish('aborted');
    this.log.clear();
    this.requestSequence = 0;
    this.setFaultPlan(initialPlan);
    await this.store.reset();
  }

  /** Digest of provider objects; saved idempotent responses are bookkeeping and excluded. */
  digest(): string {
    return this.store.digest([idempotencyCollection]);
  }

  /** The observations document. */
  observations(): SandboxObservations {
    return this.log.snapshot(this.store.receipts());
  }

  /** State, observations and trace in one document. */
  export(): SandboxExport {
    const state = this.store.exportProviders();
    return {
      format: 'sideguard-sandbox-export',
      version: 1,
      seed: this.seed,
      exportedAt: new Date(this.config.nowMs()).toISOString(),
      digest: this.digest(),
      faultPlan: this.faultPlan,
      state,
      observations: this.observations(),
    };
  }

  /** Aborts holds and cancels timers; the servers are closed by their owner. */
  shutdown(): void {
    for (const held of [...this.held.values()]) held.finish('aborted');
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
  }
}
