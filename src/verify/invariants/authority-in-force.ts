/**
 * What authority a proposal had in force when it started a commit, read from the ledger: the
 * approvals the last `authority_satisfied` counted, each with the validity window its
 * `authority_recorded` event (and the evidence the store kept) gives, and the proposal's own time
 * to live. I2 and I9 both judge from this; it judges nothing itself.
 */
import type { LedgerEvent, ProposalReplay } from '../../core/ledger.js';
import type { EvidenceModel } from '../evidence-model.js';

/** An approval's validity window; `issuedAt` is `null` when no evidence says when it was issued. */
export interface ApprovalWindow {
  readonly authority: string;
  readonly issuedAt: string | null;
  readonly expiresAt: string | null;
}

/** The authority one `commit_started` relied on. */
export interface CommitAuthority {
  readonly replay: ProposalReplay;
  readonly commitStarted: LedgerEvent;
  /** Whether the proposal's policy required approval. */
  readonly needsApproval: boolean;
  /** Approvals the rule required (from the last `authority_recorded` before the commit). */
  readonly required: number;
  /** Approvers the last `authority_satisfied` before the commit counted. */
  readonly counted: readonly string[];
  /** Counted approvers with an approval in force at the commit. */
  readonly inForce: readonly string[];
  /** Counted approvers with none in force: the windows they had. */
  readonly lapsed: readonly ApprovalWindow[];
  /** When the proposal's time to live ended, if the evidence says. */
  readonly proposalExpiresAt: string | null;
}

const time = (iso: string | null): number => (iso === null ? Number.NaN : Date.parse(iso));

/** Whether `window` covers the instant `at` (an unknown issue time counts as issued). */
export function windowCovers(window: ApprovalWindow, at: string): boolean {
  const instant = time(at);
  const expires = time(window.expiresAt);
  const issued = time(window.issuedAt);
  if (!Number.isFinite(instant) || !Number.isFinite(expires)) return false;
  return instant < expires && (!Number.isFinite(issued) || issued <= instant);
}

/** The window of the approval one `authority_recorded` event recorded. */
export function windowOf(model: EvidenceModel, recorded: LedgerEvent): ApprovalWindow {
  const digest =
    typeof recorded.data.evidenceDigest === 'string' ? recorded.data.evidenceDigest : '';
  const stored = model.storedEvidence?.get(digest)?.evidence as { issuedAt?: unknown } | undefined;
  const issuedAt =
    typeof recorded.data.issuedAt === 'string'
      ? recorded.data.issuedAt
      : typeof stored?.issuedAt === 'string'
        ? stored.issuedAt
        : null;
  return {
    authority: String(recorded.data.authority),
    issuedAt,
    expiresAt: typeof recorded.data.expiresAt === 'string' ? recorded.data.expiresAt : null,
  };
}

/** When a proposal's time to live ends: from its ledger events if they say, else the store's record. */
export function proposalExpiry(model: EvidenceModel, replay: ProposalReplay): string | null {
  for (const event of replay.events) {
    const value = event.data.proposalExpiresAt;
    if (typeof value === 'string') return value;
  }
  return model.recordOf.get(replay.proposal)?.expiresAt ?? null;
}

/** One entry per `commit_started` in the ledger, with the authority it relied on. */
export function authorityAtCommits(model: EvidenceModel): CommitAuthority[] {
  const found: CommitAuthority[] = [];
  for (const replay of model.replays.values()) {
    const needsApproval = replay.events.some(
      (e) => e.type === 'policy_decided' && e.data.decision === 'require_approval',
    );
    const proposalExpiresAt = proposalExpiry(model, replay);
    for (const [index, commitStarted] of replay.events.entries()) {
      if (commitStarted.type !== 'commit_started') continue;
      const before = replay.events.slice(0, index);
      const satisfied = before.filter((e) => e.type === 'authority_satisfied').at(-1);
      const counted = Array.isArray(satisfied?.data.approvers)
        ? (satisfied.data.approvers as unknown[]).map(String)
        : [];
      const approvals = before.filter(
        (e) => e.type === 'authority_recorded' && e.data.decision === 'approve',
      );
      const required =
        before
          .filter((e) => e.type === 'authority_recorded')
          .map((e) => Number(e.data.required))
          .at(-1) ?? 0;
      const inForce: string[] = [];
      const lapsed: ApprovalWindow[] = [];
      for (const authority of new Set(counted)) {
        const windows = approvals
          .filter((e) => String(e.data.authority) === authority)
          .map((e) => windowOf(model, e));
        if (windows.some((window) => windowCovers(window, commitStarted.at))) {
          inForce.push(authority);
        } else {
          lapsed.push(windows.at(-1) ?? { authority, issuedAt: null, expiresAt: null });
        }
      }
      found.push({
        replay,
        commitStarted,
        needsApproval,
        required,
        counted,
        inForce,
        lapsed,
        proposalExpiresAt,
      });
    }
  }
  return found;
}

/** "finance-lead's approval expired at …" (or was not yet issued, or is not recorded). */
export function describeLapse(window: ApprovalWindow, at: string): string {
  if (window.expiresAt === null) return `${window.authority}'s approval is not recorded`;
  if (time(window.expiresAt) <= time(at)) {
    return `${window.authority}'s approval expired at ${window.expiresAt}`;
  }
  return `${window.authority}'s approval was issued only at ${window.issuedAt}`;
}
