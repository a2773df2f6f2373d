/**
 * Runs one schedule: builds the world over the real guard and a real store, lets the workload's
 * actors run under the seeded scheduler with faults, crashes and clock jumps (the fault phase),
 * heals the faults and settles (the liveness phase), and collects the evidence.
 */
import { Breakage } from '../core/breakages.js';
import type { JsonValue } from '../core/canonical-json.js';
import { createGuardCore, type Guard, type GuardEvent, type Ids } from '../core/guard.js';
import { createDevelopmentKeyRing } from '../core/key-ring.js';
import type { AuthorityEvidenceRecord, GuardStore, ProposalRecord } from '../core/store.js';
import { createMemoryStore } from '../stores/memory/memory-store.js';
import { activateTraps, deactivateTraps, installAmbientTraps } from './ambient-traps.js';
import { type ChoiceTape, createSeededGenerator } from './choice-tape.js';
import {
  type ActorKind,
  ExplorerBreakage,
  type Phase,
  type ProcessName,
  type StepEvent,
} from './explore-vocabulary.js';
import { isSettled, settle } from './liveness-phase.js';
import { ProviderModel } from './provider-model.js';
import type { ScheduleEvidence } from './schedule-evidence.js';
import { type Actor, Scheduler } from './scheduler.js';
import { applyStoreBreakages } from './store-breakages.js';
import { createStoreProbe, StoreLog } from './store-probe.js';
import { createVirtualClock, type VirtualClock } from './virtual-clock.js';
import { BUILTIN_WORKLOADS, MIX_ORDER } from './workloads/builtin-workloads.js';
import { runOptions, type WorkloadDefinition } from './workloads/workload-kit.js';
import type { AgentRequest, GuardCallFailure, World } from './world.js';

/** The key ring of every schedule (deterministic, development only). */
const KEY_RING = createDevelopmentKeyRing('sideguard-explore');

/** A guard-level breakage switch, passed to the core when it supports one. */
export type GuardBreakageSwitch = (config: GuardCoreConfig) => GuardCoreConfig;

/** What `createGuardCore` takes, with `breakages` settable after the literal. */
type GuardCoreConfig = { -readonly [K in keyof CoreConfig]: CoreConfig[K] };
type CoreConfig = Parameters<typeof createGuardCore>[0];

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
const LEASE_MS = 10_000;
const TTL_MS = 30 * 60_000;

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

/** Deterministic ids, shared by every incarnation (real ids never collide across restarts). */
function scheduleIds(): Ids {
  let proposals = 0;
  let leases = 0;
  return {
    proposal: () => `prop_${String(++proposals).padStart(4, '0')}`,
    lease: () => `lease_${String(++leases).padStart(4, '0')}`,
  };
}

function scheduleRandomBytes(): (size: number) => Uint8Array {
  const next = createSeededGenerator(0x5eed);
  return (size) => {
    const bytes = new Uint8Array(size);
    for (let index = 0; index < size; index++) bytes[index] = next() & 0xff;
    return bytes;
  };
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
  const { core: coreBreakages, explorer: breakages } = splitBreakages(options.breakages ?? []);
  const avoid = new Set(options.avoid ?? []);
  const clock = createVirtualClock();
  const scheduler = new Scheduler();
  scheduler.keepParkedOnCrash = breakages.has('crash_keeps_parked');
  const log = new StoreLog();
  const cells: string[] = [];
  // fault → phase → actor kinds seen: a hit cell costs lookups, not a new key string.
  const seen = new Map<string, Map<Phase, Set<ActorKind | 'provider'>>>();
  const cover = (fault: string, phase: Phase, kind: ActorKind | undefined) => {
    let phases = seen.get(fault);
    if (phases === undefined) {
      phases = new Map();
      seen.set(fault, phases);
    }
    let kinds = phases.get(phase);
    if (kinds === undefined) {
      kinds = new Set();
      phases.set(phase, kinds);
    }
    const actor = kind ?? 'provider';
    if (kinds.has(actor)) return;
    kinds.add(actor);
    cells.push(`${fault}|${phase}|${actor}`);
  };
  const tenant = 'explore';
  const workload = resolveWorkload(tape, options.workload);
  const provider = new ProviderModel(
    {
      scheduler,
      clock,
      tape,
      faultsEnabled: () => world.faultsEnabled,
      onFault: (fault, phase, actor) => cover(fault, phase, actor?.kind),
      avoid,
    },
    { honoursKeys: !tape.chance(40) },
  );
  const base = (options.openStore ?? createMemoryStore)();
  const stores = applyStoreBreakages(base, breakages, scheduler, log);
  const ids = scheduleIds();
  const randomBytes = scheduleRandomBytes();
  const sinkEvents: GuardEvent[] = [];
  const failures: GuardCallFailure[] = [];
  const makeGuard = (process: ProcessName): Guard => {
    const config: GuardCoreConfig = {
      store: createStoreProbe(stores.forProcess(process), scheduler, clock, log),
      keyRing: KEY_RING,
      clock,
      ids,
      randomBytes,
      events: (event: GuardEvent) => {
        sinkEvents.push(event);
      },
    };
    // Assigned, not spread into the literal (V8's slow path for what follows a spread).
    if (coreBreakages.size > 0) config.breakages = coreBreakages;
    return createGuardCore(options.guardBreakages?.(config) ?? config);
  };
  const guards: Record<ProcessName, Guard> = { app: makeGuard('app'), worker: makeGuard('worker') };
  const requests: AgentRequest[] = [];
  const world: World = {
    tape,
    clock,
    scheduler,
    provider,
    log,
    keyRing: KEY_RING,
    tenant,
    breakages,
    guardOf: (process) => guards[process],
    spawn(kind, name, process, body) {
      // Bound, not an arrow: the body is called once, and a fresh arrow's first call goes
      // through V8's lazy-compile stub (decision 134).
      scheduler.spawn(kind, name, process, body.bind(undefined, guards[process]));
    },
    call<T>(
      actor: Actor,
      name: string,
      proposal: string | null,
      run: () => Promise<T>,
    ): Promise<T | undefined> {
      actor.call = name;
      const failed = (error: unknown): undefined => {
        const { code, message } = error as { code?: unknown; message?: unknown };
        failures.push({
          actor: actor.name,
          process: actor.process,
          call: name,
          proposal,
          step: scheduler.step,
          code: typeof code === 'string' ? code : 'thrown',
          message: String(message ?? error),
        });
        return undefined;
      };
      // A promise chain rather than an async function: one frame fewer on every guard call.
      try {
        return run().then(undefined, failed);
      } catch (error) {
        return Promise.resolve(failed(error));
      }
    },
    remember(result, request) {
      if (result?.semanticEffectKey !== undefined && request !== undefined) {
        world.labels.set(result.semanticEffectKey, request.label);
      }
    },
    addRequest: (request) => requests.push(request),
    requests,
    labels: new Map(),
    privateValues: [],
    failures,
    sinkEvents,
    actions: new Map(),
    inputBindings: new Map(),
    // A data property, not an accessor pair: accessors in a literal are defined the slow way on
    // every schedule.
    faultsEnabled: true,
  };

  let crashes = 0;
  const maxCrashes = options.maxCrashes ?? 2;
  const crash = (process: ProcessName) => {
    crashes += 1;
    options.trace?.push({
      step: scheduler.step,
      atMs: clock.now(),
      what: `crash: ${process} restarts`,
    });
    for (const operation of scheduler.crash(process))
      cover('crash', operation.phase, operation.actor?.kind);
    clock.advance(2_000);
    guards[process] = makeGuard(process);
    if (process === 'app') {
      for (const [index, request] of requests.entries()) {
        world.spawn('recovery', `retry${index + 1}`, 'app', async (guard, actor) => {
          const facts = request.facts === undefined ? undefined : await request.facts();
          const result = await world.call(actor, 'run', null, () =>
            guard.run(
              request.action,
              runOptions(tenant, request, `retry-after-crash-${crashes}`, facts),
            ),
          );
          world.remember(result, request);
        });
      }
    } else {
      world.spawn('recovery', 'sweeper-restarted', 'worker', async (guard, actor) => {
        for (const action of world.actions.values()) {
          await world.call(actor, 'sweep', null, () => guard.sweep(action, { tenant }));
        }
      });
    }
  };

  /** An execute call is between its last check and its claim (a store read or the claim itself). */
  const claimPending = () =>
    scheduler.parked.some(
      (operation) =>
        operation.phase === 'claim' ||
        (operation.phase === 'store_read' &&
          /^(run|execute|settle:authorized)$/.test(operation.actor?.call ?? '')),
    );
  const stepEvent = (event: StepEvent): void => {
    const now = clock.now();
    if (event.startsWith('clock') && avoid.has('clock_before_claim') && claimPending()) return;
    switch (event) {
      case 'none':
        return;
      case 'clock_tick':
        clock.advance(1 + tape.choose(500));
        return;
      case 'clock_to_deadline':
        clock.advanceTo((log.nextDeadlineAfter(now) ?? now) + 1);
        return;
      case 'clock_past_lease':
        clock.advance(LEASE_MS + 1);
        return;
      case 'clock_past_ttl':
        clock.advance(TTL_MS + 1);
        return;
      case 'crash':
        if (crashes < maxCrashes) crash(tape.chance(50) ? 'worker' : 'app');
        return;
    }
  };

  const trace = options.trace;
  workload.setup(world);
  let faultPhaseFinished = false;
  let escapes: readonly string[] = [];
  activateTraps();
  try {
    faultPhaseFinished = await runFaultPhase(scheduler, tape, clock, stepEvent, cover, trace);
    // Liveness: faults healed, first-come order, no more choices drawn.
    world.faultsEnabled = false;
    if (!faultPhaseFinished) scheduler.parked.length = 0;
    world.spawn('liveness', 'operator', 'worker', (guard, actor: Actor) =>
      settle(world, guard, actor),
    );
    await runLivenessPhase(scheduler, clock, trace);
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
    cells,
  };
}

/*
 * The two phases' step loops are functions of their own, with few locals: an `await` in an async
 * function saves and restores its whole register file, and `runSchedule`'s is large.
 */

/** The fault phase; resolves true when nothing is left parked within its bound of steps. */
async function runFaultPhase(
  scheduler: Scheduler,
  tape: ChoiceTape,
  clock: VirtualClock,
  stepEvent: (event: StepEvent) => void,
  cover: (fault: string, phase: Phase, kind: ActorKind | undefined) => void,
  trace: TraceEntry[] | undefined,
): Promise<boolean> {
  for (let steps = 0; steps < MAX_FAULT_STEPS; steps++) {
    await scheduler.quiescent();
    if (scheduler.parked.length === 0) return true;
    const event = STEP_EVENTS[tape.weighted(STEP_WEIGHTS)] ?? 'none';
    stepEvent(event);
    if (event !== 'none')
      trace?.push({ step: scheduler.step, atMs: clock.now(), what: `fault: ${event}` });
    if (scheduler.parked.length === 0) continue;
    const operation = scheduler.runAt(tape.choose(scheduler.parked.length));
    trace?.push({
      step: scheduler.step,
      atMs: clock.now(),
      what: `${operation.owner} ${operation.label}`,
    });
    if (event !== 'none' && event !== 'crash') cover(event, operation.phase, operation.actor?.kind);
  }
  return false;
}

/** The liveness phase: first-come order until nothing is parked, within its bound of steps. */
async function runLivenessPhase(
  scheduler: Scheduler,
  clock: VirtualClock,
  trace: TraceEntry[] | undefined,
): Promise<void> {
  for (let steps = 0; steps < MAX_LIVENESS_STEPS; steps++) {
    await scheduler.quiescent();
    if (scheduler.parked.length === 0) return;
    const operation = scheduler.runAt(0);
    trace?.push({ step: scheduler.step, atMs: clock.now(), what: `liveness: ${operation.label}` });
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

  const auditor = createGuardCore({
    store: durable,
    keyRing: KEY_RING,
    clock: world.clock,
    ids: scheduleIds(),
    randomBytes: scheduleRandomBytes(),
  });
  const byId = new Map(records.map((record) => [record.proposal, record]));
  // Effects no result named (the call threw): label them by matching the committed input.
  for (const record of records) {
    if (world.labels.has(record.semanticEffectKey) || record.snapshot === null) continue;
    const action = world.actions.get(record.actionType);
    if (action === undefined) continue;
    const view = await auditor.read(action, {
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
            : auditor
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
    stepOfSequence: world.log.stepOfSequence,
    inputBindings: world.inputBindings,
    failures: world.failures,
    sinkEvents: world.sinkEvents,
    labels: world.labels,
    privateValues: world.privateValues,
    actions: world.actions,
    unsettled,
  };
}
