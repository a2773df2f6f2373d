/**
 * The regression corpus: every kept seed replays exactly. A seed whose fix is pending (or a
 * canary, or one with a breakage switched on) must still fail with the same invariant on the same
 * effect; a plain seed must pass. When a pending fix lands its seed flips here: drop its
 * `pendingFix` (and its entry in `src/explore/pending-fixes.ts`).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { expectedOutcome, parseReplayFile, replayRecorded } from 'sideguard/explore';
import { describe, expect, it } from 'vitest';

const directory = new URL('./corpus/', import.meta.url);
const files = readdirSync(directory).filter((name) => name.endsWith('.replay.json'));

describe('the explorer regression corpus', () => {
  it('holds a canary and a seed for every pending window', () => {
    const parsed = files.map((name) =>
      parseReplayFile(readFileSync(new URL(name, directory), 'utf8')),
    );
    expect(parsed.some((file) => file.canary === true)).toBe(true);
    expect(parsed.filter((file) => file.pendingFix !== undefined).length).toBeGreaterThanOrEqual(4);
  });

  for (const name of files) {
    const file = parseReplayFile(readFileSync(new URL(name, directory), 'utf8'), name);
    const expected = expectedOutcome(file);
    const label = file.pendingFix ?? (file.canary ? 'canary' : 'plain seed');
    it(`${name} (${label}) ${expected === 'pass' ? 'shows no violation' : `still fails ${file.violation?.invariant}`}`, async () => {
      const { violations } = await replayRecorded(file);
      const found = violations.map((violation) => `${violation.invariant} ${violation.effect}`);
      if (expected === 'pass') {
        expect(found).toEqual([]);
      } else {
        expect(file.violation).toBeDefined();
        expect(found).toContain(`${file.violation?.invariant} ${file.violation?.effect}`);
      }
    });
  }
});
