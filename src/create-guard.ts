/** The public constructor of the guard: the core runtime with real-world defaults filled in. */
import {
  type Clock,
  createGuardCore,
  type Guard,
  type GuardEventSink,
  type Ids,
} from './core/guard.js';
import type { KeyRing } from './core/key-ring.js';
import type { GuardStore } from './core/store.js';
import { randomIds, systemClock, systemRandomBytes } from './runtime-defaults.js';

/** What `createGuard` needs. */
export interface GuardConfig {
  /** Where proposals, claims, evidence and the ledger live (memory, SQLite, PostgreSQL, …). */
  readonly store: GuardStore;
  /** Commitment, encryption and effect keys. Never use the development key ring in production. */
  readonly keyRing: KeyRing;
  /** @default the system clock */
  readonly clock?: Clock;
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

/** Creates a guard. */
export function createGuard(config: GuardConfig): Guard {
  return createGuardCore({
    store: config.store,
    keyRing: config.keyRing,
    clock: config.clock ?? systemClock,
    ids: config.ids ?? randomIds,
    randomBytes: config.randomBytes ?? systemRandomBytes,
    ...(config.events === undefined ? {} : { events: config.events }),
    ...(config.onEventSinkError === undefined ? {} : { onEventSinkError: config.onEventSinkError }),
    ...(config.audience === undefined ? {} : { audience: config.audience }),
  });
}
