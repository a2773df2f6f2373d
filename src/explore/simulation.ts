/**
 * Runs one schedule: builds the world over the real guard and a real store, lets the workload's
 * actors run under the seeded scheduler with faults, crashes and clock jumps (the fault phase),
 * heals the faults and settles (the liveness phase), and collects the evidence.
 */
import { Breakage } from '../core/breakages.js';
import type { JsonValue } from '../core/canonical-json.js';
import { createGuardCore, type Guard } from '../core/guard.js';
import type { AuthorityEvidenceRecord, GuardStore, ProposalRecord } from '../core/store.js';
import { createMemoryStore } from '../stores/memory/memory-store.js';
import { activateTraps, deactivateTraps, installAmbientTraps } from './ambient-traps.js';
import type { ChoiceTape } from './choice-tape.js';
import { ExplorerBreakage, type StepEvent } from './explore-vocabulary.js';
import { isSettled, settle } from './liveness-phase.js';
import type { ScheduleEvidence } from './schedule-evidence.js';
import {
  type GuardBreakageSwitch,
  KEY_RING,
  ScheduleWorld,
  scheduleIds,
  scheduleRandomBytes,
} from './schedule-world.js';
import { type Actor, Scheduler } from './scheduler.js';
import { applyStoreBreakages } from './store-breakages.js';
import { StoreLog } from './store-probe.js';
import { createVirtualClock, type VirtualClock } from './virtual-clock.js';
import { BUILTIN_WORKLOADS, MIX_ORDER } from './workloads/builtin-workloads.js';
import type { WorkloadDefinition } from './workloads/workload-kit.js';
import type { World } from './world.js';

export type { GuardBreakageSwitch } from './schedule-world.js';

/** How to run one schedule. */
export interface ScheduleOptions {
  /** A built-in workload name (`mix` draws one) or a user's workload. @default 'mix' */
  readonly workload?: string | WorkloadDefinition;
  /**
   * Breakages to switch on (test-only): the explorer's own (`ExplorerBreakage`: store, harness and
   * host breakages) and the core's (`Breakage` in `src/core/breakages.ts`).
   */
  readonly breakages?: readonly string[];
  /** Opens a fresh durable store for the schedule. @default a new memory store */
  readonly openStore?: () => GuardStore;
  /** At most this many crashes per schedule. @default 2 */
  readonly maxCrashes?: number;
  /** Adds guard-level breakages to the core's config (see `guard-breakages.ts`). */
  readonly guardBreakages?: GuardBreakageSwitch;
  /**
   * Fault triggers to leave out (`FaultTrigger`: `clock_before_claim`, `odd_receipt`), for the
   * triggers of open findings (`open-findings.ts`) or to hunt one defect class. @default none
   */
  readonly avoid?: readonly string[];
  /** When set, every scheduler decision is appended here (for the readable timeline). */
  readonly trace?: TraceEntry[];
}

/** One scheduler decision, for the readable timeline. */
export interface TraceEntry {
  readonly step: number;
  readonly atMs: number;
  readonly what: string;
}

/** What one schedule produced. */
export interface ScheduleRun {
  readonly evidence: ScheduleEvidence;
  /** The choices drawn (replays the schedule exactly). */
  readonly choices: readonly number[];
  readonly workload: string;
  /** Coverage cells hit: `fault|phase|actor`. */
  readonly cells: readonly string[];
}

const STEP_EVENTS: readonly StepEvent[] = [
  'none',
  'clock_tick',
  'clock_to_deadline',
  'clock_past_lease',
  'clock_past_ttl',
  'crash',
];
const STEP_WEIGHTS = [86, 5, 4, 3, 1, 1];
const MAX_FAULT_STEPS = 4_000;
const MAX_LIVENESS_STEPS = 20_000;
const NONE: readonly string[] = [];
const NO_TRIGGERS: ReadonlySet<string> = new Set();
/** What most schedules run with: one pair of empty sets, not two new ones per schedule. */
const NO_BREAKAGES = { core: new Set<Breakage>(), explorer: new Set<string>() } as const;

function resolveWorkload(
  tape: ChoiceTape,
  workload: ScheduleOptions['workload'],
): WorkloadDefinition {
  if (typeof workload === 'object') return workload;
  const name = workload ?? 'mix';
  if (name === 'mix') {
    return BUILTIN_WORKLOADS[MIX_ORDER[tape.choose(MIX_ORDER.length)] ?? 'refund'];
  }
  const found = (BUILTIN_WORKLOADS as Record<string, WorkloadDefinition>)[name];
  if (found === undefined) {
    throw new RangeError(
      `unknown workload ${JSON.stringify(name)}; known: ${[...Object.keys(BUILTIN_WORKLOADS), 'mix'].join(', ')}`,
    );
  }
  return found;
}

const EXPLORER_BREAKAGES: ReadonlySet<string> = new Set(Object.values(ExplorerBreakage));
const CORE_BREAKAGES: ReadonlySet<string> = new Set(Object.values(Breakage));

/** Every breakage name a schedule accepts: the explorer's, then the core's. */
export const KNOWN_BREAKAGES: readonly string[] = [...EXPLORER_BREAKAGES, ...CORE_BREAKAGES];

/**
 * Splits breakage names into the core's (passed to `createGuardCore`) and the explorer's.
 * @throws RangeError naming an unknown breakage and listing the known ones.
 */
export function splitBreakages(names: readonly string[]): {
  readonly core: ReadonlySet<Breakage>;
  readonly explorer: ReadonlySet<string>;
} {
  if (names.length === 0) return NO_BREAKAGES;
  const core = new Set<Breakage>();
  const explorer = new Set<string>();
  for (const name of names) {
    if (CORE_BREAKAGES.has(name)) core.add(name as Breakage);
    else if (EXPLORER_BREAKAGES.has(name)) explorer.add(name);
    else {
      throw new RangeError(
        `unknown breakage ${JSON.stringify(name)}; known: ${KNOWN_BREAKAGES.join(', ')}`,
      );
    }
  }
  return { core, explorer };
}

/** Runs one schedule from `tape`. Never throws for what the guard does; that is evidence. */
export async function runSchedule(
  tape: ChoiceTape,
  options: ScheduleOptions = {},
): Promise<ScheduleRun> {
  installAmbientTraps();
  const { core: coreBreakages, explorer: breakages } = splitBreakages(options.breakages ?? NONE);
  const clock = createVirtualClock();
  const scheduler = new Scheduler();
  scheduler.keepParkedOnCrash = breakages.has('crash_keeps_parked');
  const log = new StoreLog();
  const workload = resolveWorkload(tape, options.workload);
  const trace = options.trace;
  const world = new ScheduleWorld({
    tape,
    clock,
    scheduler,
    log,
    breakages,
    coreBreakages,
    guardBreakages: options.guardBreakages,
    avoid: options.avoid === undefined ? NO_TRIGGERS : new Set(options.avoid),
    maxCrashes: options.maxCrashes ?? 2,
    trace,
  });
  const base = (options.openStore ?? createMemoryStore)();
  const stores = applyStoreBreakages(base, breakages, scheduler, log);
  world.useStores(stores.forProcess);

  workload.setup(world);
  let faultPhaseFinished = false;
  let escapes: readonly string[] = [];
  activateTraps();
  try {
    faultPhaseFinished = await new FaultPhase(world, trace).drive();
    // Liveness: faults healed, first-come order, no more choices drawn.
    world.faultsEnabled = false;
    if (!faultPhaseFinished) scheduler.parked.length = 0;
    world.spawn('liveness', 'operator', 'worker', (guard, actor: Actor) =>
      settle(world, guard, actor),
    );
    await new LivenessPhase(scheduler, clock, trace).drive();
  } finally {
    escapes = [...deactivateTraps()];
  }
  return {
    evidence: await collectEvidence(world, stores.durable, {
      workload: workload.name,
      escapes,
      faultPhaseFinished,
      zombies: scheduler.zombies,
      steps: scheduler.step,
    }),
    choices: tape.choices,
    workload: workload.name,
    cells: world.cells,
  };
}

/*
 * The two phases are step machines driven by the scheduler's `whenQuiescent`: each step runs as
 * one promise job, in the same order an awaiting loop would run it, without an async frame saved
 * and restored per step (every schedule takes some 33 steps).
 */

/**
 * One phase's steps: `step` runs each; the phase ends when a step returns a value, or after
 * `maxSteps`.
 */
abstract class PhaseDriver<T> {
  #steps = 0;
  #resolve: (value: T) => void = () => undefined;
  #reject: (error: unknown) => void = () => undefined;
  readonly #onQuiescent = (): void => this.#run();

  constructor(
    protected readonly scheduler: Scheduler,
    private readonly maxSteps: number,
    private readonly unfinished: T,
  ) {}

  /** Runs the phase to its end; rejects with what a step threw. */
  drive(): Promise<T> {
    const promise = new Promise<T>((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
    this.#next();
    return promise;
  }

  /** One step, with no actor running; returns a value to end the phase, or undefined. */
  protected abstract step(): T | undefined;

  #run(): void {
    let ended: T | undefined;
    try {
      ended = this.step();
    } catch (error) {
      this.#reject(error);
      return;
    }
    if (ended !== undefined) this.#resolve(ended);
    else {
      this.#steps += 1;
      this.#next();
    }
  }

  #next(): void {
    if (this.#steps < this.maxSteps) this.scheduler.whenQuiescent(this.#onQuiescent);
    else this.#resolve(this.unfinished);
  }
}

/** The fault phase; ends true when nothing is left parked within its bound of steps. */
class FaultPhase extends PhaseDriver<boolean> {
  constructor(
    private readonly world: ScheduleWorld,
    private readonly trace: TraceEntry[] | undefined,
  ) {
    super(world.scheduler, MAX_FAULT_STEPS, false);
  }

  protected step(): boolean | undefined {
    const { world, scheduler, trace } = this;
    const { tape, clock } = world;
    if (scheduler.parked.length === 0) return true;
    const event = STEP_EVENTS[tape.weighted(STEP_WEIGHTS)] ?? 'none';
    if (event !== 'none') {
      world.stepEvent(event);
      trace?.push({ step: scheduler.step, atMs: clock.now(), what: `fault: ${event}` });
      if (scheduler.parked.length === 0) return undefined;
    }
    const operation = scheduler.runAt(tape.choose(scheduler.parked.length));
    trace?.push({
      step: scheduler.step,
      atMs: clock.now(),
      what: `${operation.owner} ${operation.label}`,
    });
    if (event !== 'none' && event !== 'crash') {
      world.cover(event, operation.phase, operation.actor?.kind);
    }
    return undefined;
  }
}

/** The liveness phase: first-come order until nothing is parked, within its bound of steps. */
class LivenessPhase extends PhaseDriver<true> {
  constructor(
    scheduler: Scheduler,
    private readonly clock: VirtualClock,
    private readonly trace: TraceEntry[] | undefined,
  ) {
    super(scheduler, MAX_LIVENESS_STEPS, true);
  }

  protected step(): true | undefined {
    const { scheduler } = this;
    if (scheduler.parked.length === 0) return true;
    const operation = scheduler.runAt(0);
    this.trace?.push({
      step: scheduler.step,
      atMs: this.clock.now(),
      what: `liveness: ${operation.label}`,
    });
    return undefined;
  }
}

async function collectEvidence(
  world: World,
  durable: GuardStore,
  extra: Pick<
    ScheduleEvidence,
    'workload' | 'escapes' | 'faultPhaseFinished' | 'zombies' | 'steps'
  >,
): Promise<ScheduleEvidence> {
  const { tenant } = world;
  const records: ProposalRecord[] = [];
  const evidence = new Map<string, readonly AuthorityEvidenceRecord[]>();
  for (const id of world.log.records.keys()) {
    const record = await durable.getProposal(tenant, id);
    if (record === undefined) continue;
    records.push(record);
    if (record.policy.decision === 'require_approval') {
      evidence.set(id, await durable.listEvidence(tenant, id));
    }
  }

  // Made when first needed: a schedule's checks often read no committed input.
  let auditorGuard: Guard | undefined;
  const auditor = (): Guard =>
    (auditorGuard ??= createGuardCore({
      store: durable,
      keyRing: KEY_RING,
      clock: world.clock,
      ids: scheduleIds(),
      randomBytes: scheduleRandomBytes(),
    }));
  const byId = new Map(records.map((record) => [record.proposal, record]));
  // Effects no result named (the call threw): label them by matching the committed input.
  for (const record of records) {
    if (world.labels.has(record.semanticEffectKey) || record.snapshot === null) continue;
    const action = world.actions.get(record.actionType);
    if (action === undefined) continue;
    const view = await auditor().read(action, {
      tenant,
      proposal: record.proposal,
      reader: record.principal,
    });
    const input = (view.input ?? {}) as Record<string, unknown>;
    const request = world.requests.find((candidate) =>
      action.protectedFields.every((field) => candidate.input[field] === input[field]),
    );
    if (request !== undefined) world.labels.set(record.semanticEffectKey, request.label);
  }
  const inputs = new Map<string, Promise<JsonValue | undefined>>();
  const unsettled = records
    .filter(
      (record) =>
        !isSettled(
          record.status,
          world.actions.get(record.actionType)?.config.compensate !== undefined,
        ),
    )
    .map((record) => ({ proposal: record.proposal, status: record.status }));
  const events = await durable.readLedger({ tenant });
  const head = await durable.ledgerHead(tenant);
  // Every field named, no `...extra`: V8 defines each property that follows a spread in a literal
  // through the runtime, which cost more than the rest of this function.
  return {
    workload: extra.workload,
    escapes: extra.escapes,
    faultPhaseFinished: extra.faultPhaseFinished,
    zombies: extra.zombies,
    steps: extra.steps,
    tenant,
    honoursKeys: world.provider.honoursKeys,
    events,
    head,
    records,
    evidence,
    inputOf: (proposal) => {
      let input = inputs.get(proposal);
      if (input === undefined) {
        const record = byId.get(proposal);
        const action = record === undefined ? undefined : world.actions.get(record.actionType);
        input =
          record === undefined || action === undefined || record.snapshot === null
            ? Promise.resolve(undefined)
            : auditor()
                .read(action, { tenant, proposal, reader: record.principal })
                .then((view) => view.input as JsonValue | undefined);
        inputs.set(proposal, input);
      }
      return input;
    },
    writes: world.provider.writes,
    requests: world.provider.requests,
    objects: [...world.provider.objects.values()],
    commits: world.log.commits,
    lateDurableSteps: world.log.lateDurableSteps,
    inputBindings: world.inputBindings,
    failures: world.failures,
    sinkEvents: world.sinkEvents,
    labels: world.labels,
    privateValues: world.privateValues,
    actions: world.actions,
    unsettled,
  };
}
