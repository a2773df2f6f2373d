/**
 * I5 no blind resend: a resend follows a final absence from the provider after the settling
 * window, and never a receipt or a late result of an earlier attempt; verification attempts are
 * counted and bounded; the provider never sees more write attempts for an effect than the guard
 * started.
 */
import type { LedgerEvent } from '../../core/ledger.js';
import { deliveriesSeen } from '../provider-model.js';
import { labelOf, type Violation } from '../schedule-evidence.js';
import type { EvidenceIndex } from './evidence-index.js';

const INVARIANT = 'no_blind_resend';

function checkProposal(
  index: EvidenceIndex,
  proposal: string,
  events: readonly LedgerEvent[],
): Violation[] {
  const record = index.records.get(proposal);
  const action = record === undefined ? undefined : index.evidence.actions.get(record.actionType);
  const violations: Violation[] = [];
  let startedAtMs: number | undefined;
  let lastObservation: LedgerEvent | undefined;
  let receiptSeen = false;
  let lateResult = false;
  let lastAttempt = 0;
  for (const event of events) {
    switch (event.type) {
      case 'commit_started':
        startedAtMs = Date.parse(event.at);
        lastObservation = undefined;
        lastAttempt = 0;
        break;
      case 'committed':
        receiptSeen = true;
        break;
      case 'late_result_observed':
        // A late answer that carries a receipt proves the earlier attempt wrote.
        if (JSON.stringify(event.data).includes('"receipt"')) lateResult = true;
        break;
      case 'verification_observed': {
        lastObservation = event;
        if (event.data.result === 'present') receiptSeen = true;
        const attempt = Number(event.data.attempt);
        const max = action?.maxVerificationAttempts ?? Number.POSITIVE_INFINITY;
        if (!(attempt > lastAttempt) || attempt > max) {
          violations.push(
            index.about(
              INVARIANT,
              proposal,
              `verification attempt ${attempt} follows attempt ${lastAttempt} (limit ${max}): attempts are not counted`,
            ),
          );
        }
        lastAttempt = attempt;
        break;
      }
      case 'resend_allowed': {
        const absent =
          lastObservation?.data.result === 'absent' && lastObservation.data.final === true;
        const settledAtMs =
          (startedAtMs ?? Number.POSITIVE_INFINITY) + (action?.verificationDelayMs ?? 0);
        if (!absent) {
          violations.push(
            index.about(
              INVARIANT,
              proposal,
              'a resend was allowed without a final absence from the provider',
            ),
          );
        } else if (Date.parse(event.at) < settledAtMs) {
          violations.push(
            index.about(INVARIANT, proposal, 'a resend was allowed inside the settling window'),
          );
        } else if (receiptSeen || lateResult) {
          violations.push(
            index.about(
              INVARIANT,
              proposal,
              `a resend was allowed after ${receiptSeen ? 'a receipt' : 'a late result of an earlier attempt'}`,
            ),
          );
        }
        break;
      }
      default:
    }
  }
  return violations;
}

export function checkNoBlindResend(index: EvidenceIndex): Violation[] {
  const violations: Violation[] = [];
  for (const [proposal, events] of index.eventsByProposal) {
    violations.push(...checkProposal(index, proposal, events));
  }
  // Provider-side: write attempts per effect never exceed the guard's commit_started.
  const started = new Map<string, number>();
  for (const event of index.evidence.events) {
    if (event.type !== 'commit_started' || event.proposal === null) continue;
    const effect = index.records.get(event.proposal)?.semanticEffectKey;
    if (effect !== undefined) started.set(effect, (started.get(effect) ?? 0) + 1);
  }
  const attempts = new Map<string, number>();
  for (const request of index.evidence.requests) {
    if (
      request.effect === null ||
      request.effect.endsWith(':compensation') ||
      request.idempotencyKey === null
    )
      continue;
    const seen = deliveriesSeen(request);
    attempts.set(request.effect, (attempts.get(request.effect) ?? 0) + seen);
  }
  for (const [effect, count] of attempts) {
    const starts = started.get(effect) ?? 0;
    if (count > starts) {
      violations.push({
        invariant: INVARIANT,
        effect: labelOf(index.evidence, effect),
        message: `the provider saw ${count} write attempt(s) for the effect but the guard started ${starts}`,
      });
    }
  }
  return violations;
}
