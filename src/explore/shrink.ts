/**
 * Shrinking a failing schedule to a minimal replayable tape. Because every decision (workload
 * shape first, then faults and order) is a choice on the tape and zero is always the simplest,
 * shrinking the tape drops actors, retries and faults too: cut the tail, delete spans, zero
 * choices, lower numbers — keeping a candidate only if the *same* invariant fails on the *same*
 * effect.
 */
import type { Violation } from './schedule-evidence.js';

/** What must keep failing. */
export interface ShrinkTarget {
  readonly invariant: string;
  readonly effect: string;
}

/** Replays candidate choices; returns what was drawn and what failed. */
export type ShrinkReplay = (
  choices: readonly number[],
) => Promise<{ readonly choices: readonly number[]; readonly violations: readonly Violation[] }>;

/** The outcome of shrinking. */
export interface ShrinkResult {
  readonly choices: readonly number[];
  readonly violation: Violation;
  readonly replays: number;
}

/** Shorter first, then smaller numbers: the order shrinking descends. */
function simpler(a: readonly number[], b: readonly number[]): boolean {
  if (a.length !== b.length) return a.length < b.length;
  for (let index = 0; index < a.length; index++) {
    if (a[index] !== b[index]) return (a[index] ?? 0) < (b[index] ?? 0);
  }
  return false;
}

/**
 * Shrinks `start` (which fails with `target`) within `budget` replays.
 * @param budget At most this many replays. @default 2000
 */
export async function shrinkChoices(
  start: readonly number[],
  violation: Violation,
  replay: ShrinkReplay,
  budget = 800,
): Promise<ShrinkResult> {
  let best = [...start];
  let bestViolation = violation;
  let replays = 0;
  const attempt = async (candidate: readonly number[]): Promise<boolean> => {
    if (replays >= budget || !simpler(candidate, best)) return false;
    replays += 1;
    const result = await replay(candidate);
    const same = result.violations.find(
      (found) => found.invariant === violation.invariant && found.effect === violation.effect,
    );
    if (same === undefined || !simpler(result.choices, best)) return false;
    best = [...result.choices];
    bestViolation = same;
    return true;
  };

  let progress = true;
  while (progress && replays < budget) {
    progress = false;
    // 1. The shortest failing prefix (later choices replay as zero).
    let low = 0;
    let high = best.length;
    while (low < high && replays < budget) {
      const middle = (low + high) >> 1;
      if (await attempt(best.slice(0, middle))) {
        high = Math.min(middle, best.length);
        progress = true;
      } else {
        low = middle + 1;
      }
    }
    // 2. Delete spans, largest first.
    for (const size of [16, 8, 4, 2, 1]) {
      for (let at = best.length - size; at >= 0 && replays < budget; at--) {
        if (await attempt([...best.slice(0, at), ...best.slice(at + size)])) progress = true;
      }
    }
    // 3. Zero choices, then 4. lower the rest.
    for (let at = 0; at < best.length && replays < budget; at++) {
      const value = best[at] ?? 0;
      if (value === 0) continue;
      for (const lower of [0, value >> 1, value - 1]) {
        if (lower >= value) continue;
        const candidate = [...best];
        candidate[at] = lower;
        if (await attempt(candidate)) {
          progress = true;
          break;
        }
      }
    }
  }
  return { choices: best, violation: bestViolation, replays };
}
