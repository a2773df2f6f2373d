/**
 * Replay files: a seed's workload, breakages and recorded choices, plus the violation it showed,
 * as a small JSON document that replays the schedule exactly. Failing seeds are kept as a corpus
 * (`test/explore/corpus/`) that `npm test` replays.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { z } from 'zod';
import { SideguardError } from '../core/errors.js';
import type { Violation } from './schedule-evidence.js';

/** The schema name of a replay file. */
export const REPLAY_FILE_SCHEMA = 'sideguard.explore-replay/v1';

const violationSchema = z.strictObject({
  invariant: z.string().min(1),
  effect: z.string(),
  message: z.string(),
});

/** A replay file, validated. */
export const replayFileSchema = z.strictObject({
  schema: z.literal(REPLAY_FILE_SCHEMA),
  /** A built-in workload name. */
  workload: z.string().min(1),
  breakages: z.array(z.string()).default([]),
  /** Fault triggers the schedule left out (see `open-findings.ts`). */
  avoid: z.array(z.string()).default([]),
  /** The store tier it ran on; absent means the memory store (see `sqlite-tier.ts`). */
  store: z.enum(['memory', 'sqlite']).optional(),
  /** The seed the schedule was first drawn from (informative: `choices` replays it). */
  seed: z.int().nonnegative(),
  choices: z.array(z.int().nonnegative()),
  /** What the schedule showed when it was recorded; absent for a passing seed. */
  violation: violationSchema.optional(),
  /** Set while a core finding is open: the seed must still fail the same way. */
  openFinding: z.string().min(1).optional(),
  /**
   * A regression seed for a fixed defect: the same tape with these breakages switched on (the
   * defect put back) must fail with this violation, so the seed proves both that the fix holds
   * and that the explorer still reaches the defect.
   */
  failsWith: z
    .strictObject({
      /** The defect this seed guards (e.g. `issue 8, window 1: time of check after resolve`). */
      defect: z.string().min(1),
      breakages: z.array(z.string()).min(1),
      violation: violationSchema,
    })
    .optional(),
  /** A seed that must fail on every run (it keeps the explorer honest). */
  canary: z.boolean().optional(),
  /** Why the seed is kept. */
  note: z.string().optional(),
});
export type ReplayFile = z.infer<typeof replayFileSchema>;

/** What a replay file expects when replayed. */
export function expectedOutcome(file: ReplayFile): 'violation' | 'pass' {
  return file.openFinding !== undefined || file.canary === true || file.breakages.length > 0
    ? 'violation'
    : 'pass';
}

/** Reads and validates a replay file; says which field is wrong. */
export async function readReplayFile(path: string): Promise<ReplayFile> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new SideguardError(
      'explore_replay_unreadable',
      `Cannot read replay file ${path} (${(error as NodeJS.ErrnoException).code ?? String(error)})`,
      { cause: error },
    );
  }
  return parseReplayFile(text, path);
}

/** Parses replay-file text (JSON). */
export function parseReplayFile(text: string, where = 'replay file'): ReplayFile {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new SideguardError('explore_replay_invalid', `${where} is not valid JSON`);
  }
  const parsed = replayFileSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new SideguardError(
      'explore_replay_invalid',
      `${where} is not a ${REPLAY_FILE_SCHEMA} file: ${issue?.path.join('.') || '(root)'}: ${issue?.message ?? 'invalid'}`,
    );
  }
  return parsed.data;
}

/** Writes a replay file (pretty JSON, choices on one line). */
export async function writeReplayFile(path: string, file: ReplayFile): Promise<void> {
  await writeFile(path, formatReplayFile(file));
}

/** The replay file's text. */
export function formatReplayFile(file: ReplayFile): string {
  const { choices, ...rest } = file;
  const head = JSON.stringify(rest, null, 2).slice(0, -2);
  return `${head},\n  "choices": ${JSON.stringify(choices)}\n}\n`;
}

/** A replay file for a violation found on `seed`. */
export function replayFileFor(
  workload: string,
  breakages: readonly string[],
  avoid: readonly string[],
  seed: number,
  choices: readonly number[],
  violation: Violation | undefined,
): ReplayFile {
  return {
    schema: REPLAY_FILE_SCHEMA,
    workload,
    breakages: [...breakages],
    avoid: [...avoid],
    seed,
    choices: [...choices],
    ...(violation === undefined ? {} : { violation: { ...violation } }),
  };
}
