/**
 * The regression corpus: every kept seed replays exactly. A canary (or a seed recorded with a
 * breakage switched on) must still fail with the same invariant on the same effect; a plain seed
 * must pass. A regression seed for a fixed defect (`failsWith`) passes as it stands, and fails
 * with its recorded violation when the breakage that puts the defect back is switched on — so it
 * proves both that the fix holds and that the explorer still reaches the defect.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { expectedOutcome, parseReplayFile, replayRecorded } from 'sideguard/explore';
import { describe, expect, it } from 'vitest';

const directory = new URL('./corpus/', import.meta.url);
const files = readdirSync(directory).filter((name) => name.endsWith('.replay.json'));
const parsed = files.map((name) => ({
  name,
  file: parseReplayFile(readFileSync(new URL(name, directory), 'utf8'), name),
}));

const found = (violations: readonly { invariant: string; effect: string }[]) =>
  violations.map((violation) => `${violation.invariant} ${violation.effect}`);

describe('the explorer regression corpus', () => {
  it('holds a canary and a regression seed for each of issue 8 windows 1–4', () => {
    expect(parsed.some(({ file }) => file.canary === true)).toBe(true);
    for (const window of [1, 2, 3, 4]) {
      expect(parsed.map(({ name }) => name)).toContainEqual(
        expect.stringMatching(new RegExp(`^window-${window}-`)),
      );
    }
  });

  for (const { name, file } of parsed) {
    const expected = expectedOutcome(file);
    const label = file.canary ? 'canary' : file.failsWith !== undefined ? 'regression' : 'seed';
    it(`${name} (${label}) ${expected === 'pass' ? 'shows no violation' : `still fails ${file.violation?.invariant}`}`, async () => {
      const { violations } = await replayRecorded(file);
      if (expected === 'pass') {
        expect(found(violations)).toEqual([]);
      } else {
        expect(file.violation).toBeDefined();
        expect(found(violations)).toContain(
          `${file.violation?.invariant} ${file.violation?.effect}`,
        );
      }
    });

    const failsWith = file.failsWith;
    if (failsWith !== undefined) {
      it(`${name} fails ${failsWith.violation.invariant} again with ${failsWith.breakages.join(' + ')} (${failsWith.defect})`, async () => {
        const { violations } = await replayRecorded({ ...file, breakages: failsWith.breakages });
        expect(found(violations)).toContain(
          `${failsWith.violation.invariant} ${failsWith.violation.effect}`,
        );
      });
    }
  }
});
