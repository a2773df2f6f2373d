/**
 * How the verifier builds the guard it runs scenarios through — and, for tests only, a guard
 * broken on purpose, to prove the gate names the invariant a broken guarantee violates from the
 * evidence alone. Internal: no public entry exports this.
 */
import type { Clock, Guard } from '../core/guard.js';
import type { KeyRing } from '../core/key-ring.js';
import type { GuardStore } from '../core/store.js';
import { createGuard } from '../create-guard.js';

/**
 * A guard broken on purpose. Test-only: the gate run, its reports and its verdict are otherwise
 * ordinary, which is the point — the gate must fail from the evidence the broken guard leaves.
 */
export interface GuardUnderTest {
  /**
   * Core breakages to switch on (`Breakage` of `src/core/breakages.ts`, such as
   * `claim_never_blocks`, `resend_without_verification`, `tally_counts_expired`).
   */
  readonly breakages?: ReadonlySet<string>;
  /** Wraps the store the guard uses; the verifier still reads the evidence from the real one. */
  readonly wrapStore?: (store: GuardStore) => GuardStore;
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
  const breakages = config.underTest?.breakages;
  if (breakages !== undefined && breakages.size > 0) {
    // The core's breakage switch (`createGuardCore({ breakages })`) is not on this branch yet;
    // refusing beats running an unbroken guard and calling the test a pass.
    throw new Error(
      `core breakages (${[...breakages].join(', ')}) need src/core/breakages.ts, which this build does not have`,
    );
  }
  const store = config.underTest?.wrapStore?.(config.store) ?? config.store;
  return createGuard({ store, keyRing: config.keyRing, clock: config.clock });
}
