/**
 * Simulation mode: while a schedule runs, ambient time, randomness and timers throw, so nothing
 * the guard, a store or a workload does can escape the choice tape. The traps are installed once
 * per process and switched by a flag; the harness suspends them around the few things it does
 * itself (opening a SQLite file, waiting on a real store).
 */
import { createRequire, syncBuiltinESMExports } from 'node:module';
import { SideguardError } from '../core/errors.js';

/** Thrown when simulated code reads the clock, randomness or a timer. */
export class AmbientAccessError extends SideguardError {
  constructor(what: string) {
    super(
      'explore_ambient_access',
      `Simulation escaped the choice tape: ${what} was called while a schedule ran. Inject time, ids and randomness instead (the guard's Clock, Ids and randomBytes).`,
      { data: { what } },
    );
  }
}

let active = false;
let installed = false;
/** What was called while active, for the `tape_only` invariant. */
let escapes: string[] = [];

/** Real timers for the harness itself, captured before the traps. */
export const realTimers = {
  setImmediate: globalThis.setImmediate,
  setTimeout: globalThis.setTimeout,
  clearTimeout: globalThis.clearTimeout,
  now: Date.now,
  performanceNow: performance.now.bind(performance),
};

const trap = (what: string): void => {
  if (!active) return;
  escapes.push(what);
  throw new AmbientAccessError(what);
};

function wrapMethod(owner: object, name: string, label: string): void {
  const target = owner as Record<string, unknown>;
  const original = target[name];
  if (typeof original !== 'function') return;
  const wrapped = function (this: unknown, ...args: unknown[]) {
    trap(label);
    return (original as (...a: unknown[]) => unknown).apply(this, args);
  };
  Object.defineProperty(wrapped, 'name', { value: name });
  // Node's timers carry extra properties (promisify.custom): keep them.
  Object.assign(wrapped, original);
  target[name] = wrapped;
}

/** Installs the traps (idempotent). They stay inert until {@link activateTraps}. */
export function installAmbientTraps(): void {
  if (installed) return;
  installed = true;
  const OriginalDate = Date;
  // A plain function rather than a Proxy: a Proxy's construct trap cannot be optimised and every
  // ledger timestamp goes through `new Date(ms)`. Only the ambient forms (`Date()`, `new Date()`)
  // trap; the prototype is Date's own, so `instanceof Date` holds for dates made either way.
  // `arguments` rather than a rest parameter: no array for the common `new Date(ms)`.
  const TrappedDate = function (this: unknown, value?: unknown) {
    if (new.target === undefined) {
      trap('Date()');
      return OriginalDate();
    }
    // biome-ignore lint/complexity/noArguments: a rest parameter allocates an array per timestamp
    const count = arguments.length;
    if (count === 0) trap('new Date()');
    return new.target === TrappedDate && count === 1
      ? new OriginalDate(value as number)
      : // biome-ignore lint/complexity/noArguments: the rare forms only (`new Date(y, m, d)`)
        Reflect.construct(OriginalDate, Array.prototype.slice.call(arguments), new.target);
  } as unknown as DateConstructor;
  Object.defineProperty(TrappedDate, 'prototype', { value: OriginalDate.prototype });
  Object.defineProperty(TrappedDate, 'length', { value: OriginalDate.length });
  Object.defineProperty(TrappedDate, 'name', { value: 'Date' });
  // Statics (`Date.UTC`, `Date.parse`, the wrapped `Date.now`) are inherited from Date itself.
  Object.setPrototypeOf(TrappedDate, OriginalDate);
  globalThis.Date = TrappedDate;
  wrapMethod(OriginalDate, 'now', 'Date.now');
  wrapMethod(Math, 'random', 'Math.random');
  wrapMethod(performance, 'now', 'performance.now');
  wrapMethod(process, 'hrtime', 'process.hrtime');
  for (const name of ['setTimeout', 'setInterval', 'setImmediate']) {
    wrapMethod(globalThis, name, name);
  }
  if (globalThis.crypto !== undefined) {
    wrapMethod(globalThis.crypto, 'getRandomValues', 'crypto.getRandomValues');
    wrapMethod(globalThis.crypto, 'randomUUID', 'crypto.randomUUID');
  }
  const require = createRequire(import.meta.url);
  const nodeCrypto = require('node:crypto') as object;
  for (const name of ['randomBytes', 'randomUUID', 'randomInt', 'randomFillSync', 'randomFill']) {
    wrapMethod(nodeCrypto, name, `crypto.${name}`);
  }
  syncBuiltinESMExports();
}

/** Arms the traps for simulated code; returns what escaped since the last call. */
export function activateTraps(): void {
  escapes = [];
  active = true;
}

/** Disarms the traps; returns what simulated code tried to reach while they were armed. */
export function deactivateTraps(): readonly string[] {
  active = false;
  return escapes;
}

/** Runs `work` with the traps disarmed (harness work inside a schedule), then re-arms them. */
export function withoutTraps<T>(work: () => T): T {
  const was = active;
  active = false;
  try {
    return work();
  } finally {
    active = was;
  }
}

/** Whether the traps are armed right now. */
export function trapsActive(): boolean {
  return active;
}

/** Escapes recorded while armed (even those the simulated code caught and swallowed). */
export function recordedEscapes(): readonly string[] {
  return escapes;
}

/** Disarms the traps around an awaited harness operation (e.g. a real store's group commit). */
export async function awaitWithoutTraps<T>(work: () => Promise<T>): Promise<T> {
  const was = active;
  active = false;
  try {
    return await work();
  } finally {
    active = was;
  }
}
