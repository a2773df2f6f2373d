/**
 * The deterministic scheduler: actors run one at a time, each until it reaches a scheduling
 * point (a store operation, a provider call) where it parks; the scheduler then picks the next
 * parked operation with a choice from the tape. Everything runs on promise jobs, so a schedule
 * is a pure function of its tape. A crash drops every operation of one process.
 */
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
}

/** An operation waiting for the scheduler. */
export interface ParkedOperation {
  readonly sequence: number;
  /** The actor it resumes, or undefined for a provider-side task (an apply that lands late). */
  readonly actor: Actor | undefined;
  /** The process whose crash drops it; `provider` tasks survive crashes. */
  readonly owner: ProcessName | 'provider';
  readonly label: string;
  readonly phase: Phase;
  readonly run: () => void;
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
  #wake: (() => void) | undefined;
  #sequence = 0;
  #actors = 0;
  readonly #incarnations: Record<ProcessName, number> = { app: 1, worker: 1 };

  /** The live incarnation of a process. */
  incarnation(process: ProcessName): number {
    return this.#incarnations[process];
  }

  /** Whether `actor` belongs to a process incarnation that has crashed. */
  isDead(actor: Actor): boolean {
    return actor.incarnation !== this.#incarnations[actor.process];
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
      incarnation: this.#incarnations[process],
      call: 'start',
      phase: 'start',
    };
    this.#push(actor, process, `${name}: start`, 'start', () => {
      this.#enter(actor, `${name}: start`);
      body(actor).then(
        () => this.#leave(),
        (error: unknown) => {
          this.failures.push({ actor, call: actor.call, step: this.step, error });
          this.#leave();
        },
      );
    });
    return actor;
  }

  /** Parks the current actor until the scheduler picks this operation. */
  point(label: string, phase: Phase): Promise<void> {
    const actor = this.#requireCurrent(label);
    actor.phase = phase;
    return new Promise<void>((resolve) => {
      this.#push(actor, actor.process, label, phase, () => {
        this.#enter(actor, label);
        resolve();
      });
      this.#leave();
    });
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
    const actor = this.#requireCurrent('suspend');
    actor.phase = phase;
    let resolveValue: (value: T) => void = () => undefined;
    const promise = new Promise<T>((resolve) => {
      resolveValue = resolve;
    });
    this.#leave();
    return {
      actor,
      promise,
      resumeWith: (label, produce) => {
        if (this.isDead(actor) && !this.keepParkedOnCrash) return;
        this.#push(actor, actor.process, label, phase, () => {
          this.#enter(actor, label);
          resolveValue(produce());
        });
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
    this.#push(undefined, owner, label, phase, run);
  }

  /** Resolves when no actor is running (all parked, suspended or done). */
  quiescent(): Promise<void> {
    if (this.#running === 0) return RESOLVED;
    return new Promise<void>((resolve) => {
      this.#wake = resolve;
    });
  }

  /** Runs the parked operation at `index`. */
  runAt(index: number): ParkedOperation {
    const [operation] = this.parked.splice(index, 1);
    if (operation === undefined) throw new RangeError(`no parked operation at ${index}`);
    this.step += 1;
    operation.run();
    return operation;
  }

  /**
   * Crashes a process: drops its parked operations (unless the harness breakage keeps them) and
   * starts a new incarnation. Suspended actors of the old one never resume. Returns what it hit.
   */
  crash(process: ProcessName): readonly ParkedOperation[] {
    this.#incarnations[process] += 1;
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
    run: () => void,
  ): void {
    this.parked.push({ sequence: ++this.#sequence, actor, owner, label, phase, run });
  }

  #enter(actor: Actor, label: string): void {
    if (this.isDead(actor)) this.zombies.push({ actor, label, step: this.step });
    this.#running += 1;
    this.current = actor;
  }

  #leave(): void {
    this.#running -= 1;
    this.current = undefined;
    if (this.#running === 0 && this.#wake !== undefined) {
      const wake = this.#wake;
      this.#wake = undefined;
      wake();
    }
  }
}
