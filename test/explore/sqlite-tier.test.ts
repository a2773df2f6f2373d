/**
 * The SQLite tier: the explorer's schedules over the real SQLite adapter. The same tape must give
 * the same ledger, byte for byte, on the memory store and on SQLite (the adapter behaves like the
 * reference under every interleaving and fault the explorer draws), a catalogued breakage must be
 * caught there too, its replay file must name the tier, and the tier must leave no file behind.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import {
  ChoiceTape,
  createSqliteTier,
  explore,
  replayRecorded,
  runSchedule,
} from 'sideguard/explore';
import { describe, expect, it } from 'vitest';

describe('explore, SQLite tier', () => {
  it('gives the same ledger head, writes and tape on SQLite as on the memory store, seed by seed', async () => {
    const tier = await createSqliteTier();
    try {
      for (let seed = 1; seed <= 24; seed += 1) {
        const memory = await runSchedule(ChoiceTape.fromSeed(seed), { workload: 'mix' });
        const sqlite = await runSchedule(ChoiceTape.fromSeed(seed), {
          workload: 'mix',
          openStore: tier.openStore,
        });
        expect({ seed, head: sqlite.evidence.head }).toEqual({ seed, head: memory.evidence.head });
        expect(sqlite.evidence.writes.length).toBe(memory.evidence.writes.length);
        expect(sqlite.choices).toEqual(memory.choices);
      }
    } finally {
      await tier.close();
    }
  }, 120_000);

  it('explores on SQLite without a violation, and names the tier in the report', async () => {
    const report = await explore({ store: 'sqlite', workload: 'mix', schedules: 20, seed: 101 });
    expect(report.failure?.violation).toBeUndefined();
    expect(report.store).toBe('sqlite');
    expect(report.schedules).toBe(20);
  }, 120_000);

  it('catches a catalogued breakage on SQLite; the replay file names the tier and replays the violation', async () => {
    const report = await explore({
      store: 'sqlite',
      workload: 'refund',
      breakages: ['resend_without_verification'],
      schedules: 60,
      seed: 1,
      shrink: false,
    });
    expect(report.failure?.violation.invariant).toBe('no_blind_resend');
    const replay = report.failure?.replay;
    expect(replay?.store).toBe('sqlite');
    if (replay === undefined) return;
    const again = await replayRecorded(replay);
    expect(again.violations.map((violation) => violation.invariant)).toContain('no_blind_resend');
  }, 120_000);

  it('deletes each schedule’s file when the next opens, and everything on close', async () => {
    const tier = await createSqliteTier();
    tier.openStore();
    const first = join(tier.directory, 'schedule-0.db');
    expect(existsSync(first)).toBe(true);
    tier.openStore();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(existsSync(first)).toBe(false);
    expect(existsSync(join(tier.directory, 'schedule-1.db'))).toBe(true);
    await tier.close();
    expect(existsSync(tier.directory)).toBe(false);
  });
});
