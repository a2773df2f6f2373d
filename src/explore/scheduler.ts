/**
 * The deterministic scheduler: actors run one at a time, each until it reaches a scheduling
 * point (a store operation, a provider call) where it parks; the scheduler then picks the next
 * parked operation with a choice from the tape. Everything runs on promise jobs, so a schedule
 * is a pure function of its tape. A crash drops every operation of one process.
 *
 * An actor may fork: the guard awaits two store reads at once (`Promise.all`), so the second read
 * parks while the first is already parked, in the same synchronous run. Each parked read is then
 * a branch of the actor; a branch that ends without parking again (it merges into the
 * `Promise.all`) is noticed when the promise jobs have drained (see {@link Scheduler.whenQuiescent}).
 */
import { realTimers } from './ambient-traps.js';
import type { ActorKind, Phase, ProcessName } from './explore-vocabulary.js';

/** One actor of a schedule: an agent, a sweeper, an approver… living in one process. */
export interface Actor {
  readonly id: number;
  readonly kind: ActorKind;
  readonly name: string;
  readonly process: ProcessName;
  /** The incarnation of its process it belongs to; a crash ends that incarnation. */
  readonly incarnation: number;
  /** What it is doing now, for messages and coverage (e.g. `execute`). */
  call: string;
  phase: Phase;
  /** Branches alive (1, or more while a fork's reads are parked or running). */
  branches: number;
}

/** An operation waiting for the scheduler. */
export interface ParkedOperation {
  /** The actor it resumes, or undefined for a provider-side task (an apply that lands late). */
  readonly actor: Actor | undefined;
  /** The process whose crash drops it; `provider` tasks survive crashes. */
  readonly owner: ProcessName | 'provider';
  readonly label: string;
  readonly phase: Phase;
  /** How `runAt` resumes it (data, not a closure per operation: see `Resumption`). */
  readonly resumption: Resumption;
  /** For a point or a resumption: settles the promise the actor awaits. */
  readonly resolve: ((value: unknown) => void) | undefined;
  /** For `pointThen`: rejects the promise the actor awaits when `work` throws. */
  readonly reject: ((error: unknown) => void) | undefined;
  /**
   * For a task: what runs; for `pointThen`: the work that runs in the actor; for a resumption:
   * what it resumes with; for an actor's start: its body.
   */
  readonly work: ((actor: Actor) => unknown) | undefined;
}

/**
 * What running a parked operation does. Kept as data on the operation rather than as a closure
 * made per scheduling point: a fresh closure's first call goes through V8's lazy-compile stub,
 * and every store operation of every schedule is a scheduling point.
 */
export type Resumption = 0 | 1 | 2 | 3 | 4;
/** Runs `work` (a provider-side task). */
const RUN = 0;
/** Enters the actor and runs its body (`work`). */
const START = 1;
/** Enters the actor and resolves its point. */
const POINT = 2;
/** Enters the actor, runs `work` in it and settles its point with `work`'s promise. */
const POINT_THEN = 3;
/** Enters the actor and resolves its suspension with what `work` produces. */
const RESUME = 4;

/** The resolve and reject functions of the promise just made with {@link capture}. */
let capturedResolve: (value: unknown) => void = () => undefined;
let capturedReject: (error: unknown) => void = () => undefined;
/** A promise executor shared by every point (no closure per promise). */
function capture(resolve: (value: unknown) => void, reject: (error: unknown) => void): void {
  capturedResolve = resolve;
  capturedReject = reject;
}

/** An error an actor threw, kept as evidence (the guard must return outcomes, not throw). */
export interface ActorFailure {
  readonly actor: Actor;
  readonly call: string;
  readonly step: number;
  readonly error: unknown;
}

/** Something a crashed incarnation did after its crash (the harness must make this impossible). */
export interface ZombieRun {
  readonly actor: Actor;
  readonly label: string;
  readonly step: number;
}

const RESOLVED = Promise.resolve();

/** Runs actors under one seeded order. Create one per schedule. */
export class Scheduler {
  readonly parked: ParkedOperation[] = [];
  readonly failures: ActorFailure[] = [];
  readonly zombies: ZombieRun[] = [];
  /** Steps taken so far: the schedule's logical time, used to order evidence. */
  step = 0;
  /** The actor running right now, if any (at most one runs at a time). */
  current: Actor | undefined;
  /** Whether a crash keeps the crashed process's parked operations (a harness breakage). */
  keepParkedOnCrash = false;

  #running = 0;
  /** What runs (as a promise job) once no actor is running; set by `whenQuiescent`. */
  #wake: (() => void) | undefined;
  /** Counts `whenQuiescent` waits, so a late branch check knows whether its wait is still on. */
  #waits = 0;
  /** The actor whose synchronous run just parked: a point reached before anything else runs forks it. */
  #justLeft: Actor | undefined;
  /** The actor the last `runAt` resumed. */
  #resumed: Actor | undefined;
  /** Ends an actor whose body returned (one function per scheduler, not one per actor). */
  readonly #bodyEnded = (): void => this.#leave();
  #actors = 0;
  // Two fields rather than a record indexed by the process name: a keyed load with a string key
  // is megamorphic in V8, and every resumption checks its actor's incarnation.
  #appIncarnation = 1;
  #workerIncarnation = 1;

  /** The live incarnation of a process. */
  incarnation(process: ProcessName): number {
    return process === 'app' ? this.#appIncarnation : this.#workerIncarnation;
  }

  /** Whether `actor` belongs to a process incarnation that has crashed. */
  isDead(actor: Actor): boolean {
    return actor.incarnation !== this.incarnation(actor.process);
  }

  /** Adds an actor; it starts when the scheduler picks its start operation. */
  spawn(
    kind: ActorKind,
    name: string,
    process: ProcessName,
    body: (actor: Actor) => Promise<void>,
  ): Actor {
    const actor: Actor = {
      id: ++this.#actors,
      kind,
      name,
      process,
      incarnation: this.incarnation(process),
      call: 'start',
      phase: 'start',
      branches: 1,
    };
    this.#push(actor, process, `${name}: start`, 'start', START, undefined, undefined, body);
    return actor;
  }

  /** Parks the current actor until the scheduler picks this operation. */
  point(label: string, phase: Phase): Promise<void> {
    const forked = this.#forking();
    const actor = forked ?? this.#requireCurrent(label);
    actor.phase = phase;
    const promise = new Promise<unknown>(capture) as Promise<void>;
    this.#push(actor, actor.process, label, phase, POINT, capturedResolve);
    if (forked === undefined) this.#leave();
    return promise;
  }

  /**
   * Parks the current actor like {@link point}; when the scheduler picks the operation, runs
   * `work` in the actor and resolves with its result (one promise and no extra async frame for a
   * store read).
   */
  pointThen<T>(label: string, phase: Phase, work: () => Promise<T>): Promise<T> {
    const forked = this.#forking();
    const actor = forked ?? this.#requireCurrent(label);
    actor.phase = phase;
    const promise = new Promise<unknown>(capture) as Promise<T>;
    this.#push(
      actor,
      actor.process,
      label,
      phase,
      POINT_THEN,
      capturedResolve,
      capturedReject,
      work,
    );
    if (forked === undefined) this.#leave();
    return promise;
  }

  /**
   * Parks the current actor like {@link point}; when the scheduler picks the operation, resumes
   * it with what `produce` returns then (a provider read served at that moment). The same as
   * `suspend` followed at once by `resumeWith`, without the suspension object.
   */
  pointValue<T>(label: string, phase: Phase, produce: () => T): Promise<T> {
    const forked = this.#forking();
    const actor = forked ?? this.#requireCurrent(label);
    actor.phase = phase;
    const promise = new Promise<unknown>(capture) as Promise<T>;
    this.#push(actor, actor.process, label, phase, RESUME, capturedResolve, undefined, produce);
    if (forked === undefined) this.#leave();
    return promise;
  }

  /**
   * Suspends the current actor until someone enqueues its resumption with a value (a provider
   * reply). Resumptions for a crashed incarnation are dropped.
   */
  suspend<T>(phase: Phase): {
    readonly actor: Actor;
    readonly promise: Promise<T>;
    readonly resumeWith: (label: string, produce: () => T) => void;
  } {
    const forked = this.#forking();
    const actor = forked ?? this.#requireCurrent('suspend');
    actor.phase = phase;
    const promise = new Promise<unknown>(capture) as Promise<T>;
    const resolveValue = capturedResolve;
    if (forked === undefined) this.#leave();
    return {
      actor,
      promise,
      resumeWith: (label, produce) => {
        if (this.isDead(actor) && !this.keepParkedOnCrash) return;
        this.#push(actor, actor.process, label, phase, RESUME, resolveValue, undefined, produce);
      },
    };
  }

  /**
   * Enqueues a task that resumes no actor: a provider-side one (survives crashes), e.g. a write
   * that lands late, or one a process owns (dropped when it crashes).
   */
  task(
    label: string,
    phase: Phase,
    run: () => void,
    owner: ProcessName | 'provider' = 'provider',
  ): void {
    this.#push(undefined, owner, label, phase, RUN, undefined, undefined, run);
  }

  /**
   * Calls `next` in a promise job once no actor is running (all parked, suspended or done): at
   * once if none is, else when the last one leaves. After resuming a branch of a forked actor, it
   * also calls it once every promise job has run (a macrotask later): the branch ended without
   * parking, so nothing runs any more. A callback rather than a promise the phases await: every
   * step of every schedule waits here, and an awaiting async frame is saved and restored per step.
   */
  whenQuiescent(next: () => void): void {
    if (this.#running === 0) {
      void RESOLVED.then(next);
      return;
    }
    this.#wake = next;
    const wait = ++this.#waits;
    const resumed = this.#resumed;
    if (resumed !== undefined && resumed.branches >= 2) {
      realTimers.setImmediate(() => {
        if (this.#wake === undefined || this.#waits !== wait) return;
        // The promise jobs drained with the resumed branch still counted: it merged and ended.
        resumed.branches -= 1;
        this.#running = 1;
        this.#leave();
      });
    }
  }

  /** Runs the parked operation at `index`. */
  runAt(index: number): ParkedOperation {
    const parked = this.parked;
    const operation = parked[index];
    if (operation === undefined) throw new RangeError(`no parked operation at ${index}`);
    // Removed in place, order kept (cheaper than `splice`, which builds an array of the removed;
    // `pop` rather than writing `length`, which V8 does in the runtime).
    for (let at = index + 1; at < parked.length; at++)
      parked[at - 1] = parked[at] as ParkedOperation;
    parked.pop();
    this.step += 1;
    this.#justLeft = undefined;
    const actor = operation.actor;
    this.#resumed = actor;
    switch (operation.resumption) {
      case RUN:
        (operation.work as () => void)();
        break;
      case START:
        this.#enter(actor as Actor, operation.label);
        (operation.work as (actor: Actor) => Promise<void>)(actor as Actor).then(
          this.#bodyEnded,
          (error: unknown) => {
            this.failures.push({
              actor: actor as Actor,
              call: (actor as Actor).call,
              step: this.step,
              error,
            });
            this.#leave();
          },
        );
        break;
      case POINT:
        this.#enter(actor as Actor, operation.label);
        (operation.resolve as (value: unknown) => void)(undefined);
        break;
      case POINT_THEN:
        this.#enter(actor as Actor, operation.label);
        this.#settleWith(operation);
        break;
      case RESUME:
        this.#enter(actor as Actor, operation.label);
        (operation.resolve as (value: unknown) => void)((operation.work as () => unknown)());
        break;
    }
    return operation;
  }

  /**
   * Runs a `pointThen` operation's work and settles its point from the work's own promise:
   * resolving with a promise would cost a thenable job (two extra promise jobs per store read).
   */
  #settleWith(operation: ParkedOperation): void {
    const resolve = operation.resolve as (value: unknown) => void;
    const reject = operation.reject as (error: unknown) => void;
    let pending: Promise<unknown>;
    try {
      pending = (operation.work as () => Promise<unknown>)();
    } catch (error) {
      reject(error);
      return;
    }
    pending.then(resolve, reject);
  }

  /**
   * Crashes a process: drops its parked operations (unless the harness breakage keeps them) and
   * starts a new incarnation. Suspended actors of the old one never resume. Returns what it hit.
   */
  crash(process: ProcessName): readonly ParkedOperation[] {
    if (process === 'app') this.#appIncarnation += 1;
    else this.#workerIncarnation += 1;
    const dropped = this.parked.filter((operation) => operation.owner === process);
    if (!this.keepParkedOnCrash) {
      for (let index = this.parked.length - 1; index >= 0; index--) {
        if (this.parked[index]?.owner === process) this.parked.splice(index, 1);
      }
    }
    return dropped;
  }

  #requireCurrent(label: string): Actor {
    const actor = this.current;
    if (actor === undefined) {
      throw new Error(`scheduler: ${label} reached outside an actor (harness defect)`);
    }
    return actor;
  }

  #push(
    actor: Actor | undefined,
    owner: ProcessName | 'provider',
    label: string,
    phase: Phase,
    resumption: Resumption,
    resolve?: (value: unknown) => void,
    reject?: (error: unknown) => void,
    work?: (actor: Actor) => unknown,
  ): void {
    this.parked.push({ actor, owner, label, phase, resumption, resolve, reject, work });
  }

  /**
   * The actor a point forks: reached with no actor running, right after `#justLeft` parked in the
   * same synchronous run (nothing else can have run in between).
   */
  #forking(): Actor | undefined {
    if (this.current !== undefined || this.#justLeft === undefined) return undefined;
    const actor = this.#justLeft;
    actor.branches += 1;
    return actor;
  }

  #enter(actor: Actor, label: string): void {
    if (this.isDead(actor)) this.zombies.push({ actor, label, step: this.step });
    this.#running += 1;
    this.current = actor;
    this.#justLeft = undefined;
  }

  #leave(): void {
    this.#running -= 1;
    this.#justLeft = this.current;
    this.current = undefined;
    if (this.#running === 0 && this.#wake !== undefined) {
      const wake = this.#wake;
      this.#wake = undefined;
      // A job, as resolving an awaited promise would queue: the waiting phase runs after what
      // the leaving actor does next in this synchronous run (a fork parks its second read).
      void RESOLVED.then(wake);
    }
  }
}
