/**
 * How the verifier builds the guard it runs scenarios through — and, for tests only, a guard
 * broken on purpose, to prove the gate names the invariant a broken guarantee violates from the
 * evidence alone. Internal: no public entry exports this.
 */
import type { Breakage } from '../core/breakages.js';
import { type Clock, createGuardCore, type Guard } from '../core/guard.js';
import type { KeyRing } from '../core/key-ring.js';
import type { GuardStore } from '../core/store.js';
import { createGuard } from '../create-guard.js';
import { randomIds, systemRandomBytes } from '../runtime-defaults.js';

/**
 * A guard broken on purpose. Test-only: the gate run, its reports and its verdict are otherwise
 * ordinary, which is the point — the gate must fail from the evidence the broken guard leaves.
 */
export interface GuardUnderTest {
  /** Core breakages to switch on (`src/core/breakages.ts`): one guarantee off each. */
  readonly breakages?: ReadonlySet<Breakage>;
  /**
   * Wraps the store the guard uses; the verifier still reads the evidence from the real one. The
   * key ring is given for wrappers that play an attacker who can seal data.
   */
  readonly wrapStore?: (store: GuardStore, keyRing: KeyRing) => GuardStore;
}

/** What a scenario's guard is built from. */
export interface RunGuardConfig {
  readonly store: GuardStore;
  readonly keyRing: KeyRing;
  readonly clock: Clock;
  readonly underTest?: GuardUnderTest | undefined;
}

/** Builds the guard a scenario runs through (the real one unless a test broke it on purpose). */
export function buildRunGuard(config: RunGuardConfig): Guard {
  const store = config.underTest?.wrapStore?.(config.store, config.keyRing) ?? config.store;
  const breakages = config.underTest?.breakages;
  if (breakages === undefined || breakages.size === 0) {
    return createGuard({ store, keyRing: config.keyRing, clock: config.clock });
  }
  // The public createGuard cannot break anything; the core's constructor can, for tests.
  return createGuardCore({
    store,
    keyRing: config.keyRing,
    clock: config.clock,
    ids: randomIds,
    randomBytes: systemRandomBytes,
    breakages,
  });
}
