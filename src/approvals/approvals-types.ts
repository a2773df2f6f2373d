/** What the approvals service returns: plain, serialisable views for the console, CLI and MCP. */
import type { JsonValue } from '../core/canonical-json.js';
import type { Commitment } from '../core/commitment.js';
import type { LedgerEvent, LedgerVerification } from '../core/ledger.js';
import type { Receipt } from '../core/store.js';
import type {
  ChannelAssurance,
  LedgerEventType,
  PolicyDecision,
  ProposalStatus,
} from '../core/vocabulary.js';

/** Addresses a proposal; without `tenant`, the viewer's tenants are searched. */
export interface ApprovalsAddress {
  readonly proposal: string;
  readonly tenant?: string;
}

/** Filters of `listPending` (every one optional). */
export interface PendingFilter {
  readonly tenant?: string;
  /** An action type, `namespace.name@version`. */
  readonly action?: string;
  /** The proposing principal or agent id. */
  readonly requester?: string;
  /** @default 200 */
  readonly limit?: number;
}

/** The approval tally of a proposal. */
export interface ApprovalTally {
  readonly required: number;
  /** Distinct declared authorities whose approval is in force, sorted. */
  readonly approvedBy: readonly string[];
  readonly rejectedBy: string | null;
}

/** One row of the inbox. */
export interface PendingItem {
  readonly tenant: string;
  readonly proposal: string;
  readonly actionType: string;
  readonly principal: string;
  readonly agent: string | null;
  readonly createdAt: string;
  readonly expiresAt: string;
  /** Epoch ms, for countdowns. */
  readonly expiresAtMs: number;
  readonly preview?: JsonValue;
  readonly approvals: ApprovalTally;
  /** The viewer's own decision on it, if any. */
  readonly yourDecision: 'approve' | 'reject' | null;
}

/** One declared authority of the proposal's rule and what it decided. */
export interface AuthorityDecision {
  readonly id: string;
  readonly requiredAssurance: ChannelAssurance;
  readonly decision: 'approve' | 'reject' | null;
  /** ISO-8601 of the decision, or null. */
  readonly at: string | null;
  readonly channelAssurance: ChannelAssurance | null;
}

/** Everything a viewer may see of one proposal: exactly what would happen. */
export interface ProposalDetails {
  readonly tenant: string;
  readonly proposal: string;
  readonly actionType: string;
  readonly status: ProposalStatus | null;
  readonly reasonCode: string | null;
  readonly policy: { readonly decision: PolicyDecision; readonly reasonCode: string };
  readonly principal: string;
  readonly agent: string | null;
  readonly createdAt: string;
  readonly expiresAt: string;
  readonly expiresAtMs: number;
  /** Absent once erased. */
  readonly preview?: JsonValue;
  readonly input?: JsonValue;
  /** The protected fields (the semantic effect) with their values; empty once erased. */
  readonly protectedFields: readonly { readonly name: string; readonly value: JsonValue }[];
  readonly commitment?: Commitment;
  readonly semanticEffectKey?: string;
  readonly approvals: ApprovalTally & { readonly authorities: readonly AuthorityDecision[] };
  readonly receipts: readonly Receipt[];
  readonly compensationReceipts: readonly Receipt[];
  readonly supersededBy: string | null;
  readonly supersedes: string | null;
  /** What the viewer may do now. */
  readonly viewer: {
    readonly id: string;
    readonly isAuthority: boolean;
    readonly isOperator: boolean;
    readonly decided: 'approve' | 'reject' | null;
    readonly mayDecide: boolean;
    readonly mayResolve: boolean;
  };
}

/** What an approve or deny recorded. */
export interface DecisionRecorded {
  readonly tenant: string;
  readonly proposal: string;
  readonly decision: 'approve' | 'reject';
  /** The proposal's status after the decision (e.g. `authorized` when it completed M-of-N). */
  readonly status: ProposalStatus | null;
  readonly approvals: ApprovalTally;
  /** SHA-256 of the evidence the server built and the guard recorded. */
  readonly evidenceDigest: string;
}

/** What an operator resolution recorded. */
export interface ResolutionRecorded {
  readonly tenant: string;
  readonly proposal: string;
  readonly status: ProposalStatus | null;
  readonly outcome: string;
  readonly reasonCode: string | null;
}

/** A proposal's history from the ledger. */
export interface ProposalTimeline {
  readonly tenant: string;
  readonly proposal: string;
  readonly actionType: string;
  readonly decisionPath: readonly LedgerEventType[];
  readonly events: readonly LedgerEvent[];
  readonly receipts: readonly Receipt[];
  readonly verificationAttempts: number;
  /** Whether the tenant's whole chain verifies. */
  readonly chain: LedgerVerification;
}

/** A proposal the guard could not settle on its own. */
export interface StuckItem {
  readonly tenant: string;
  readonly proposal: string;
  readonly actionType: string;
  readonly status: ProposalStatus;
  readonly reasonCode: string | null;
  readonly principal: string;
  readonly agent: string | null;
  readonly updatedAt: string;
  readonly receipts: readonly Receipt[];
  /** Whether `resolve` applies (`failed_unknown`, `verification_unresolved`). */
  readonly resolvable: boolean;
}
