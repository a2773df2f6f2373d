/**
 * The world of one running schedule, as a class: its state (tape, clock, scheduler, provider,
 * log, one guard per live process incarnation, what the harness learns from results) and what
 * the fault phase does to it (coverage, step events, crashes). A class rather than a literal of
 * closures: one is made per schedule, and every closure would be made, and compiled lazily on
 * its first call, per schedule (decisions 134, 136).
 */
import type { Breakage } from '../core/breakages.js';
import { createGuardCore, type Guard, type GuardEvent, type Ids } from '../core/guard.js';
import { createDevelopmentKeyRing } from '../core/key-ring.js';
import type { GuardStore } from '../core/store.js';
import { type ChoiceTape, createSeededGenerator } from './choice-tape.js';
import type { ActorKind, Phase, ProcessName, StepEvent } from './explore-vocabulary.js';
import { ProviderModel } from './provider-model.js';
import type { Actor, Scheduler } from './scheduler.js';
import { createStoreProbe, type StoreLog } from './store-probe.js';
import type { VirtualClock } from './virtual-clock.js';
import { runOptions } from './workloads/workload-kit.js';
import type { AgentRequest, GuardCallFailure, World } from './world.js';

/** The key ring of every schedule (deterministic, development only). */
export const KEY_RING = createDevelopmentKeyRing('sideguard-explore');

/** What `createGuardCore` takes, with `breakages` settable after the literal. */
export type GuardCoreConfig = { -readonly [K in keyof CoreConfig]: CoreConfig[K] };
type CoreConfig = Parameters<typeof createGuardCore>[0];

/** A guard-level breakage switch, passed to the core when it supports one. */
export type GuardBreakageSwitch = (config: GuardCoreConfig) => GuardCoreConfig;

/** Deterministic ids, shared by every incarnation (real ids never collide across restarts). */
export function scheduleIds(): Ids {
  let proposals = 0;
  let leases = 0;
  return {
    proposal: () => `prop_${String(++proposals).padStart(4, '0')}`,
    lease: () => `lease_${String(++leases).padStart(4, '0')}`,
  };
}

/**
 * Deterministic random bytes, shared by every incarnation: four bytes per draw (little-endian),
 * the rest one byte per draw. The guard's envelopes take 56 bytes each, so one draw per byte was
 * most of the generator's draws in a schedule.
 */
export function scheduleRandomBytes(): (size: number) => Uint8Array {
  const next = createSeededGenerator(0x5eed);
  return (size) => {
    const bytes = new Uint8Array(size);
    let index = 0;
    for (; index + 4 <= size; index += 4) {
      const word = next();
      bytes[index] = word & 0xff;
      bytes[index + 1] = (word >>> 8) & 0xff;
      bytes[index + 2] = (word >>> 16) & 0xff;
      bytes[index + 3] = word >>> 24;
    }
    for (; index < size; index++) bytes[index] = next() & 0xff;
    return bytes;
  };
}

const LEASE_MS = 10_000;
const TTL_MS = 30 * 60_000;

/** What a schedule's world is made from. */
export interface WorldSetup {
  readonly tape: ChoiceTape;
  readonly clock: VirtualClock;
  readonly scheduler: Scheduler;
  readonly log: StoreLog;
  /** The explorer's breakages switched on (store, harness and host ones). */
  readonly breakages: ReadonlySet<string>;
  readonly coreBreakages: ReadonlySet<Breakage>;
  readonly guardBreakages: GuardBreakageSwitch | undefined;
  /** Fault triggers to leave out (`clock_before_claim`, `odd_receipt`). */
  readonly avoid: ReadonlySet<string>;
  readonly maxCrashes: number;
  /** Scheduler decisions, for the readable timeline (crashes are written here). */
  readonly trace:
    | { push(entry: { step: number; atMs: number; what: string }): unknown }
    | undefined;
}

/** One schedule's world. Create it after the workload is drawn: it draws the provider's mode. */
export class ScheduleWorld implements World {
  readonly tape: ChoiceTape;
  readonly clock: VirtualClock;
  readonly scheduler: Scheduler;
  readonly provider: ProviderModel;
  readonly log: StoreLog;
  readonly keyRing = KEY_RING;
  readonly tenant = 'explore';
  readonly breakages: ReadonlySet<string>;
  readonly requests: AgentRequest[] = [];
  readonly labels = new Map<string, string>();
  readonly privateValues: string[] = [];
  readonly failures: GuardCallFailure[] = [];
  readonly sinkEvents: GuardEvent[] = [];
  readonly actions: World['actions'] = new Map();
  readonly inputBindings: World['inputBindings'] = new Map();
  faultsEnabled = true;
  /** Coverage cells hit, in the order first hit: `fault|phase|actor`. */
  readonly cells: string[] = [];
  crashes = 0;

  readonly #setup: WorldSetup;
  /** fault → phase → actor kinds seen: a hit cell costs lookups, not a new key string. */
  readonly #seen = new Map<string, Map<Phase, Set<ActorKind | 'provider'>>>();
  readonly #ids = scheduleIds();
  readonly #randomBytes = scheduleRandomBytes();
  #storeOf: (process: ProcessName) => GuardStore = () => {
    throw new Error('schedule world: stores not set (harness defect)');
  };
  #app: Guard | undefined;
  #worker: Guard | undefined;
  readonly #sink = (event: GuardEvent): void => {
    this.sinkEvents.push(event);
  };

  constructor(setup: WorldSetup) {
    this.#setup = setup;
    this.tape = setup.tape;
    this.clock = setup.clock;
    this.scheduler = setup.scheduler;
    this.log = setup.log;
    this.breakages = setup.breakages;
    this.provider = new ProviderModel(
      {
        scheduler: setup.scheduler,
        clock: setup.clock,
        tape: setup.tape,
        faultsEnabled: () => this.faultsEnabled,
        onFault: (fault, phase, actor) => this.cover(fault, phase, actor?.kind),
        avoid: setup.avoid,
      },
      { honoursKeys: !setup.tape.chance(40) },
    );
  }

  /** Sets the store each process sees, then starts both processes' guards. */
  useStores(forProcess: (process: ProcessName) => GuardStore): void {
    this.#storeOf = forProcess;
    this.#app = this.#makeGuard('app');
    this.#worker = this.#makeGuard('worker');
  }

  #makeGuard(process: ProcessName): Guard {
    const { clock, scheduler, log, coreBreakages, guardBreakages } = this.#setup;
    const config: GuardCoreConfig = {
      store: createStoreProbe(this.#storeOf(process), scheduler, clock, log),
      keyRing: KEY_RING,
      clock,
      ids: this.#ids,
      randomBytes: this.#randomBytes,
      events: this.#sink,
    };
    // Assigned, not spread into the literal (V8's slow path for what follows a spread).
    if (coreBreakages.size > 0) config.breakages = coreBreakages;
    return createGuardCore(guardBreakages?.(config) ?? config);
  }

  guardOf(process: ProcessName): Guard {
    const guard = process === 'app' ? this.#app : this.#worker;
    if (guard === undefined) throw new Error('schedule world: no guard yet (harness defect)');
    return guard;
  }

  spawn(
    kind: ActorKind,
    name: string,
    process: ProcessName,
    body: (guard: Guard, actor: Actor) => Promise<void>,
  ): void {
    // Bound, not an arrow: the body is called once, and a fresh arrow's first call goes
    // through V8's lazy-compile stub (decision 134).
    this.scheduler.spawn(kind, name, process, body.bind(undefined, this.guardOf(process)));
  }

  call<T>(
    actor: Actor,
    name: string,
    proposal: string | null,
    run: () => Promise<T>,
  ): Promise<T | undefined> {
    actor.call = name;
    // A promise chain rather than an async function: one frame fewer on every guard call.
    try {
      return run().then(undefined, (error: unknown) => this.#failed(actor, name, proposal, error));
    } catch (error) {
      return Promise.resolve(this.#failed(actor, name, proposal, error));
    }
  }

  #failed(actor: Actor, name: string, proposal: string | null, error: unknown): undefined {
    const { code, message } = error as { code?: unknown; message?: unknown };
    this.failures.push({
      actor: actor.name,
      process: actor.process,
      call: name,
      proposal,
      step: this.scheduler.step,
      code: typeof code === 'string' ? code : 'thrown',
      message: String(message ?? error),
    });
    return undefined;
  }

  remember(result: Parameters<World['remember']>[0], request: AgentRequest | undefined): void {
    if (result?.semanticEffectKey !== undefined && request !== undefined) {
      this.labels.set(result.semanticEffectKey, request.label);
    }
  }

  addRequest(request: AgentRequest): void {
    this.requests.push(request);
  }

  /** Coverage: `fault` hit an actor of `kind` (or the provider) in `phase`. */
  cover(fault: string, phase: Phase, kind: ActorKind | undefined): void {
    let phases = this.#seen.get(fault);
    if (phases === undefined) {
      phases = new Map();
      this.#seen.set(fault, phases);
    }
    let kinds = phases.get(phase);
    if (kinds === undefined) {
      kinds = new Set();
      phases.set(phase, kinds);
    }
    const actor = kind ?? 'provider';
    if (kinds.has(actor)) return;
    kinds.add(actor);
    this.cells.push(`${fault}|${phase}|${actor}`);
  }

  /** Applies a drawn step event other than `none` (the fault phase skips the call for `none`). */
  stepEvent(event: StepEvent): void {
    const { clock, tape } = this;
    if (event !== 'crash' && this.#setup.avoid.has('clock_before_claim') && this.#claimPending()) {
      return;
    }
    const now = clock.now();
    switch (event) {
      case 'none':
        return;
      case 'clock_tick':
        clock.advance(1 + tape.choose(500));
        return;
      case 'clock_to_deadline':
        clock.advanceTo((this.log.nextDeadlineAfter(now) ?? now) + 1);
        return;
      case 'clock_past_lease':
        clock.advance(LEASE_MS + 1);
        return;
      case 'clock_past_ttl':
        clock.advance(TTL_MS + 1);
        return;
      case 'crash':
        if (this.crashes < this.#setup.maxCrashes) this.#crash(tape.chance(50) ? 'worker' : 'app');
        return;
    }
  }

  /** An execute call is between its last check and its claim (a store read or the claim itself). */
  #claimPending(): boolean {
    return this.scheduler.parked.some(
      (operation) =>
        operation.phase === 'claim' ||
        (operation.phase === 'store_read' &&
          /^(run|execute|settle:authorized)$/.test(operation.actor?.call ?? '')),
    );
  }

  /** Crashes `process`: drops what it had in flight, starts a new guard, spawns its recovery. */
  #crash(process: ProcessName): void {
    const { scheduler, clock } = this;
    this.crashes += 1;
    this.#setup.trace?.push({
      step: scheduler.step,
      atMs: clock.now(),
      what: `crash: ${process} restarts`,
    });
    for (const operation of scheduler.crash(process))
      this.cover('crash', operation.phase, operation.actor?.kind);
    clock.advance(2_000);
    if (process === 'app') {
      this.#app = this.#makeGuard('app');
      for (const [index, request] of this.requests.entries()) {
        this.spawn('recovery', `retry${index + 1}`, 'app', (guard, actor) =>
          this.#retryAfterCrash(guard, actor, request),
        );
      }
    } else {
      this.#worker = this.#makeGuard('worker');
      this.spawn('recovery', 'sweeper-restarted', 'worker', async (guard, actor) => {
        for (const action of this.actions.values()) {
          await this.call(actor, 'sweep', null, () => guard.sweep(action, { tenant: this.tenant }));
        }
      });
    }
  }

  /** The agent retries `request` after the app restarted (named by the crashes so far). */
  async #retryAfterCrash(guard: Guard, actor: Actor, request: AgentRequest): Promise<void> {
    const facts = request.facts === undefined ? undefined : await request.facts();
    const result = await this.call(actor, 'run', null, () =>
      guard.run(
        request.action,
        runOptions(this.tenant, request, `retry-after-crash-${this.crashes}`, facts),
      ),
    );
    this.remember(result, request);
  }
}
