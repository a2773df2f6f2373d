/**
 * I2/I9 authority first, bound: every provider write of a proposal follows a durable
 * `commit_started` (or `compensation_started`) of that proposal; at that moment the proposal had
 * not expired and held its authority (a policy allow, or enough distinct declared approvals valid
 * at that instant, bound to this proposal's commitment, and no veto); and the write carries
 * exactly the input the proposal committed to. And every approval or veto the guard recorded was
 * valid when it recorded it: issued, not yet expired, for a proposal whose time to live had not
 * ended (the gate's judge reads I9 the same way).
 */
import type { JsonValue } from '../../core/canonical-json.js';
import type { LedgerEvent } from '../../core/ledger.js';
import type { AuthorityEvidenceRecord, ProposalRecord } from '../../core/store.js';
import type { AppliedWrite } from '../provider-model.js';
import type { Violation } from '../schedule-evidence.js';
import type { EvidenceIndex } from './evidence-index.js';

const INVARIANT = 'authority_before_write';

/** The start event the write belongs to: the last one durable before it. */
function startOf(index: EvidenceIndex, write: AppliedWrite): LedgerEvent | undefined {
  const compensation = write.effect?.endsWith(':compensation') ?? false;
  const type = compensation ? 'compensation_started' : 'commit_started';
  if (!compensation && write.idempotencyKey !== null) {
    const started = index.startedByKey.get(write.idempotencyKey);
    return started !== undefined && index.stepOf(started) <= write.step ? started : undefined;
  }
  let found: LedgerEvent | undefined;
  for (const event of index.eventsByProposal.get(write.proposal ?? '') ?? []) {
    if (event.type === type && index.stepOf(event) <= write.step) found = event;
  }
  return found;
}

/** Why the authority was not in force at `atMs`, or undefined when it was. */
export function authorityProblem(
  index: EvidenceIndex,
  record: ProposalRecord,
  atMs: number,
): string | undefined {
  if (atMs >= record.expiresAtMs) {
    return `it started at ${new Date(atMs).toISOString()}, after the proposal expired (${new Date(record.expiresAtMs).toISOString()})`;
  }
  if (record.policy.decision === 'allow') return undefined;
  if (record.policy.decision === 'block') return 'the policy blocked it';
  const rule = index.evidence.actions.get(record.actionType)?.approval;
  if (rule === undefined) return 'the action declares no approval rule';
  const declared = new Set(rule.authorities.map((authority) => authority.id));
  const stored: readonly AuthorityEvidenceRecord[] =
    index.evidence.evidence.get(record.proposal) ?? [];
  const approvers = new Set<string>();
  for (const item of stored) {
    if (!declared.has(item.authority) || item.recordedAtMs > atMs) continue;
    if (item.decision === 'reject') return `${item.authority} had vetoed it`;
    const bound = item.evidence as { proposal?: unknown; proposalCommitment?: { value?: unknown } };
    if (
      bound.proposal !== record.proposal ||
      bound.proposalCommitment?.value !== record.commitment.value
    ) {
      return `approval by ${item.authority} is bound to other content (commitment mismatch) but was counted`;
    }
    if (item.issuedAtMs <= atMs && atMs < item.expiresAtMs) approvers.add(item.authority);
  }
  return approvers.size >= rule.required
    ? undefined
    : `only ${approvers.size} of ${rule.required} approvals were valid at that instant`;
}

/** Every `authority_recorded` event: recorded within the evidence's window and the proposal's. */
function checkRecordedInWindow(index: EvidenceIndex, violations: Violation[]): void {
  for (const event of index.evidence.events) {
    if (event.type !== 'authority_recorded' || event.proposal === null) continue;
    const atMs = Date.parse(event.at);
    const expiresAt = String(event.data.expiresAt);
    const record = index.records.get(event.proposal);
    let problem: string | undefined;
    if (!(Date.parse(expiresAt) > atMs)) problem = `after the evidence expired (${expiresAt})`;
    else if (record !== undefined && atMs >= record.expiresAtMs) {
      problem = `after the proposal expired (${new Date(record.expiresAtMs).toISOString()})`;
    }
    if (problem !== undefined) {
      violations.push(
        index.about(
          INVARIANT,
          event.proposal,
          `${String(event.data.authority)}'s ${String(event.data.decision)} was recorded at ${event.at}, ${problem}`,
        ),
      );
    }
  }
}

export async function checkAuthorityBeforeWrite(index: EvidenceIndex): Promise<Violation[]> {
  const violations: Violation[] = [];
  checkRecordedInWindow(index, violations);
  const checked = new Set<string>();
  for (const write of index.evidence.writes) {
    if (write.proposal === null) continue;
    const record = index.records.get(write.proposal);
    if (record === undefined) {
      violations.push(
        index.about(
          INVARIANT,
          write.proposal,
          `write ${write.objectId} names a proposal the store does not hold`,
        ),
      );
      continue;
    }
    const started = startOf(index, write);
    if (started === undefined) {
      violations.push(
        index.about(
          INVARIANT,
          write.proposal,
          `write ${write.objectId} (${write.operation}) has no durable start event before it`,
        ),
      );
      continue;
    }
    const startKey = `${started.sequence}`;
    if (!checked.has(startKey) && started.type === 'commit_started') {
      checked.add(startKey);
      const problem = authorityProblem(index, record, Date.parse(started.at));
      if (problem !== undefined) {
        violations.push(
          index.about(
            INVARIANT,
            write.proposal,
            `write ${write.objectId} executed without authority: ${problem}`,
          ),
        );
      }
    }
    const binding = index.evidence.inputBindings.get(write.operation);
    if (binding !== undefined) {
      const input = await index.evidence.inputOf(write.proposal);
      if (input !== undefined && !binding(write, input as Readonly<Record<string, JsonValue>>)) {
        violations.push(
          index.about(
            INVARIANT,
            write.proposal,
            `write ${write.objectId} does not carry the input its proposal committed to`,
          ),
        );
      }
    }
  }
  return violations;
}
