/** What every invariant module shares: how a verdict is written, and short ids for messages. */
import { INVARIANT_NAMES, type InvariantId, type InvariantVerdict } from '../report-types.js';

/** An invariant judged from an evidence model. */
export type InvariantJudge<Model> = (model: Model) => InvariantVerdict;

/** A verdict with the invariant's name filled in. */
export function verdictOf(
  id: InvariantId,
  verdict: InvariantVerdict['verdict'],
  evidence: string,
): InvariantVerdict {
  return { id, name: INVARIANT_NAMES[id], verdict, evidence };
}

/** `fail` with the first problems, else `pass` (or `not_applicable` when nothing was checked). */
export function verdictFrom(
  id: InvariantId,
  problems: readonly string[],
  applicable: boolean,
  passText: string,
  limit = 3,
): InvariantVerdict {
  if (problems.length > 0) return verdictOf(id, 'fail', problems.slice(0, limit).join('; '));
  return verdictOf(id, applicable ? 'pass' : 'not_applicable', passText);
}

/** The first `length` characters of an id or key, with an ellipsis when cut. */
export const short = (value: string, length = 14): string =>
  value.length > length ? `${value.slice(0, length)}…` : value;
