/**
 * The short exploration tier of `npm test`: every built-in workload, a fixed range of seeds, every
 * fault trigger on except those of open core findings (`OPEN_FINDINGS`, each kept as a failing seed
 * in the corpus). Seeds are fixed, so a count (not a duration) bounds it and the result does not
 * depend on the machine's speed. `npm run explore` runs the long tier.
 */
import {
  BREAKAGE_CATALOGUE,
  ChoiceTape,
  explore,
  KNOWN_BREAKAGES,
  NOT_CAUGHT_ALONE,
  openTriggers,
  replayRecorded,
  runAndCheck,
  runSchedule,
  type ScheduleOptions,
} from 'sideguard/explore';
import { describe, expect, it } from 'vitest';

const WORKLOADS = [
  'refund',
  'refund-no-drift-check',
  'refund-and-close',
  'approvals',
  'compensation',
] as const;

describe('explore, short tier', () => {
  for (const workload of WORKLOADS) {
    it(`finds no violation in 80 ${workload} schedules (open findings' triggers left out)`, async () => {
      const report = await explore({
        workload,
        schedules: 80,
        seed: 1,
        shrink: false,
        scheduleOptions: { avoid: openTriggers() },
      });
      expect(report.failure?.violation).toBeUndefined();
      expect(report.schedules).toBe(80);
      expect(report.determinismChecks).toBe(1);
      expect(report.cells.length).toBeGreaterThan(10);
    }, 120_000);
  }

  it("takes run's insert-without-listing path when the action has no drift check", async () => {
    const listings = async (workload: string) => {
      let count = 0;
      for (let seed = 1; seed <= 40; seed += 1) {
        const trace: NonNullable<ScheduleOptions['trace']> = [];
        await runSchedule(ChoiceTape.fromSeed(seed), { workload, trace });
        count += trace.filter((entry) => entry.what.includes('listProposalsByEffect')).length;
      }
      return count;
    };
    const withCheck = await listings('refund');
    const without = await listings('refund-no-drift-check');
    // The same shapes of work: without a drift check a new effect is inserted without a listing
    // (decision 126), so only duplicates, retries and sweeps list.
    expect(without).toBeLessThan(withCheck / 2);
  }, 120_000);

  it('replays a recorded tape to the same evidence (determinism)', async () => {
    const first = await runAndCheck(ChoiceTape.fromSeed(7), { workload: 'mix' });
    const again = await replayRecorded({
      workload: 'mix',
      breakages: [],
      choices: [...first.run.choices],
    });
    expect(again.evidence.head).toEqual(first.run.evidence.head);
    expect(again.evidence.writes).toEqual(first.run.evidence.writes);
    expect(again.violations).toEqual(first.violations);
  });
});

describe('shrinking', () => {
  it('shrinks a caught breakage to a simpler tape that fails the same invariant on the same effect', async () => {
    const report = await explore({
      workload: 'refund',
      schedules: 50,
      seed: 1,
      breakages: ['retrying_transport'],
      shrinkBudget: 60,
    });
    const failure = report.failure;
    expect(failure?.shrunk).toBeDefined();
    const original = await runAndCheck(ChoiceTape.fromSeed(failure?.seed ?? 0), {
      workload: 'refund',
      breakages: ['retrying_transport'],
    });
    // Simpler: shorter, or as long with smaller choices (zero is the simplest decision).
    const weight = (choices: readonly number[]) => choices.reduce((sum, value) => sum + value, 0);
    const shrunk = failure?.replay.choices ?? [];
    expect(
      shrunk.length < original.run.choices.length || weight(shrunk) < weight(original.run.choices),
    ).toBe(true);
    expect(shrunk.length).toBeLessThanOrEqual(original.run.choices.length);
    const replayed = await replayRecorded(failure!.replay);
    expect(replayed.violations.map((found) => `${found.invariant} ${found.effect}`)).toContain(
      `${failure?.violation.invariant} ${failure?.violation.effect}`,
    );
  }, 60_000);
});

describe('the breakage catalogue', () => {
  it('names every breakage it does not catch alone, with the reason', () => {
    const catalogued = new Set(BREAKAGE_CATALOGUE.map((entry) => entry.breakage));
    for (const breakage of KNOWN_BREAKAGES) {
      if (!catalogued.has(breakage as never)) {
        expect(NOT_CAUGHT_ALONE[breakage as keyof typeof NOT_CAUGHT_ALONE]).toBeTypeOf('string');
      }
    }
  });

  // Each from seed 1 of the mix, open findings' triggers left out; differential, so a violation
  // the intact guard shows on the same tape does not count as catching the breakage.
  for (const { breakage, layer } of BREAKAGE_CATALOGUE) {
    it(`catches ${breakage} (${layer}) within 400 mix schedules`, async () => {
      const report = await explore({
        workload: 'mix',
        schedules: 400,
        seed: 1,
        breakages: [breakage],
        shrink: false,
        scheduleOptions: { avoid: openTriggers() },
      });
      expect(report.failure?.violation.invariant).toBeDefined();
    }, 120_000);
  }

  it('an unknown breakage is refused with the known ones listed', async () => {
    await expect(explore({ schedules: 1, breakages: ['no_such_breakage'] })).rejects.toThrow(
      /unknown breakage "no_such_breakage"; known: .*claims_never_block.*effect_claim_skipped/,
    );
  });
});
