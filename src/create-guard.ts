/** The public constructor of the guard: the core runtime with real-world defaults filled in. */
import {
  type Clock,
  createGuardCore,
  type Guard,
  type GuardEventSink,
  type Ids,
  type Scheduler,
} from './core/guard.js';
import type { KeyRing } from './core/key-ring.js';
import type { GuardStore } from './core/store.js';
import { randomIds, systemClock, systemRandomBytes, timerScheduler } from './runtime-defaults.js';

/** What `createGuard` needs. */
export interface GuardConfig {
  /** Where proposals, claims, evidence and the ledger live (memory, SQLite, PostgreSQL, …). */
  readonly store: GuardStore;
  /** Commitment, encryption and effect keys. Never use the development key ring in production. */
  readonly keyRing: KeyRing;
  /** @default the system clock */
  readonly clock?: Clock;
  /**
   * Ends leases on the clock's time (aborts the `signal` a host function was given).
   * @default the clock itself when it schedules (a `createManualClock`), else real timers
   */
  readonly scheduler?: Scheduler;
  /** @default random UUID-based ids */
  readonly ids?: Ids;
  /** Receives allow-listed metadata after each durable decision; its failures are ignored. */
  readonly events?: GuardEventSink;
  /** Called when the event sink fails. @default ignore */
  readonly onEventSinkError?: (error: unknown) => void;
  /** The audience authority evidence must name. @default 'sideguard' */
  readonly audience?: string;
  /** @default node:crypto randomBytes */
  readonly randomBytes?: (size: number) => Uint8Array;
}

/** The clock when it schedules too (a manual clock), otherwise real timers on it. */
const schedulerFor = (clock: Clock): Scheduler =>
  typeof (clock as Partial<Scheduler>).at === 'function'
    ? (clock as Clock & Scheduler)
    : timerScheduler(clock);

/** Creates a guard. */
export function createGuard(config: GuardConfig): Guard {
  const clock = config.clock ?? systemClock;
  return createGuardCore({
    store: config.store,
    keyRing: config.keyRing,
    clock,
    scheduler: config.scheduler ?? schedulerFor(clock),
    ids: config.ids ?? randomIds,
    randomBytes: config.randomBytes ?? systemRandomBytes,
    ...(config.events === undefined ? {} : { events: config.events }),
    ...(config.onEventSinkError === undefined ? {} : { onEventSinkError: config.onEventSinkError }),
    ...(config.audience === undefined ? {} : { audience: config.audience }),
  });
}
