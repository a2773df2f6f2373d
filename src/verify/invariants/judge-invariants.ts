/** Runs every invariant, I1 to I9, over one evidence model; each lives in its own module. */
import type { EvidenceModel } from '../evidence-model.js';
import type { InvariantVerdict } from '../report-types.js';
import { judgeOnce } from './i1-once.js';
import { judgeAuthorityFirst } from './i2-authority-first.js';
import { judgeEvidence } from './i3-evidence.js';
import { judgeDryRun } from './i4-dry-run.js';
import { judgeNoBlindResend } from './i5-no-blind-resend.js';
import { judgeNoSilentPartial } from './i6-no-silent-partial.js';
import { judgeTamperEvident } from './i7-tamper-evident.js';
import { judgePrivate } from './i8-private.js';
import { judgeBoundAuthority } from './i9-bound-authority.js';
import type { InvariantJudge } from './invariant-kit.js';

/** The invariants in report order. */
export const INVARIANT_JUDGES: readonly InvariantJudge<EvidenceModel>[] = [
  judgeOnce,
  judgeAuthorityFirst,
  judgeEvidence,
  judgeDryRun,
  judgeNoBlindResend,
  judgeNoSilentPartial,
  judgeTamperEvident,
  judgePrivate,
  judgeBoundAuthority,
];

/** One verdict per invariant, I1 to I9. */
export function judgeInvariants(model: EvidenceModel): InvariantVerdict[] {
  return INVARIANT_JUDGES.map((judge) => judge(model));
}
