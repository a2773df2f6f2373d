/**
 * The approvals service: the one implementation the console, the CLI and MCP call to list, show,
 * approve, deny and resolve proposals. Every rule is enforced here, over a guard and its store
 * (works for `sideguard serve` and for library hosts sharing the store). Evidence is built on
 * the server from the proposal's bindings; the caller never supplies bindings or assurance.
 */
import type { ActionDefinition } from '../core/action.js';
import type { JsonValue } from '../core/canonical-json.js';
import { ProposalNotFoundError } from '../core/errors.js';
import { buildAuthorityEvidence, evidenceDigest } from '../core/evidence.js';
import { wellFormed } from '../core/guard/host-text.js';
import type { Clock, Guard, OperatorFinding, ProposalView } from '../core/guard.js';
import type { GuardStore, ProposalRecord } from '../core/store.js';
import {
  assuranceSatisfies,
  OPERATOR_RESOLVABLE_STATUSES,
  type ProposalStatus,
} from '../core/vocabulary.js';
import { ApprovalsError, proposalNotFound } from './approvals-errors.js';
import type {
  ApprovalsAddress,
  DecisionRecorded,
  PendingFilter,
  PendingItem,
  ProposalDetails,
  ProposalTimeline,
  ResolutionRecorded,
  StuckItem,
} from './approvals-types.js';
import { detailsOf, tallyOf } from './approvals-views.js';
import type { AuthenticatedApprover } from './approver-registry.js';
import { KeyedMutex } from './keyed-mutex.js';

/** What {@link createApprovalsService} needs. */
export interface ApprovalsServiceConfig {
  readonly guard: Guard;
  /** The guard's store (read for queues and evidence; every write goes through the guard). */
  readonly store: GuardStore;
  /** The declared actions; proposals of other action types are invisible. */
  readonly actions: Iterable<ActionDefinition>;
  /** @default the system clock */
  readonly clock?: Clock;
  /** How long an approval counts, capped at the proposal's expiry, in ms. @default 600_000 */
  readonly evidenceValidForMs?: number;
}

/** Options of `approve` and `deny`. */
export interface DecisionOptions {
  /**
   * Why (required to deny). At most {@link MAX_REASON_LENGTH} characters. The ledger keeps a keyed
   * digest of it (`noteDigest`), never the text.
   */
  readonly reason?: string;
}

/** Options of `resolve`. */
export interface ResolveOptions {
  readonly finding: OperatorFinding;
  /** What the operator checked and where (kept in the ledger only as a keyed digest). */
  readonly note?: string;
}

/** The approvals service (see the module doc). Every refusal is an `ApprovalsError`. */
export interface ApprovalsService {
  /** Proposals awaiting the viewer's approval, soonest to expire first. */
  listPending(
    viewer: AuthenticatedApprover,
    filter?: PendingFilter,
  ): Promise<readonly PendingItem[]>;
  /** Exactly what the proposal would do, and nothing the viewer may not see. */
  show(address: ApprovalsAddress, viewer: AuthenticatedApprover): Promise<ProposalDetails>;
  /** Records the approver's approval (evidence built here from the proposal's bindings). */
  approve(
    address: ApprovalsAddress,
    approver: AuthenticatedApprover,
    options?: DecisionOptions,
  ): Promise<DecisionRecorded>;
  /** Records the approver's rejection, which vetoes the proposal. */
  deny(
    address: ApprovalsAddress,
    approver: AuthenticatedApprover,
    options: DecisionOptions,
  ): Promise<DecisionRecorded>;
  /** An operator's attested finding for an outcome the guard could not settle. */
  resolve(
    address: ApprovalsAddress,
    operator: AuthenticatedApprover,
    options: ResolveOptions,
  ): Promise<ResolutionRecorded>;
  /** The proposal's ledger history, receipts and whether the tenant's chain verifies. */
  timeline(address: ApprovalsAddress, viewer: AuthenticatedApprover): Promise<ProposalTimeline>;
  /** Proposals stuck in `verification_unresolved`, `compensation_required` or `failed_unknown`. */
  stuck(operator: AuthenticatedApprover, filter?: PendingFilter): Promise<readonly StuckItem[]>;
  /** The action type ids the viewer approves (as an authority) or operates. */
  actionsOf(viewer: AuthenticatedApprover): { approves: string[]; operates: string[] };
}

/** The longest reason accepted, in characters. */
export const MAX_REASON_LENGTH = 1_000;
/** Statuses the operator queue shows. */
export const STUCK_STATUSES: readonly ProposalStatus[] = [
  'verification_unresolved',
  'compensation_required',
  'failed_unknown',
];
const PROPOSAL_ID = /^[\x21-\x7e]{1,256}$/;
const systemClock: Clock = { now: () => Date.now() };

const isAuthority = (action: ActionDefinition, who: string): boolean =>
  action.approval?.authorities.some((authority) => authority.id === who) ?? false;
const isOperator = (action: ActionDefinition, who: string): boolean =>
  action.config.operators?.includes(who) ?? false;

function checkReason(reason: unknown, required: boolean): string | undefined {
  if (reason === undefined || reason === '') {
    if (required) {
      throw new ApprovalsError('invalid_request', 'A denial needs a reason; say why in a sentence');
    }
    return undefined;
  }
  if (
    typeof reason !== 'string' ||
    reason.length > MAX_REASON_LENGTH ||
    wellFormed(reason) !== reason
  ) {
    throw new ApprovalsError(
      'invalid_request',
      `The reason must be text of at most ${MAX_REASON_LENGTH} characters`,
    );
  }
  return reason;
}

/** Creates the service. */
export function createApprovalsService(config: ApprovalsServiceConfig): ApprovalsService {
  const actions = new Map<string, ActionDefinition>();
  for (const action of config.actions) actions.set(action.typeName, action);
  const clock = config.clock ?? systemClock;
  const decisions = new KeyedMutex();

  /** The proposal's record and action, if the viewer's tenants hold it; else not-found. */
  async function locate(
    address: ApprovalsAddress,
    viewer: AuthenticatedApprover,
  ): Promise<{ record: ProposalRecord; action: ActionDefinition }> {
    const id = address.proposal;
    if (typeof id !== 'string' || !PROPOSAL_ID.test(id)) throw proposalNotFound(String(id));
    const tenants =
      address.tenant === undefined
        ? viewer.tenants
        : viewer.tenants.filter((tenant) => tenant === address.tenant);
    for (const tenant of tenants) {
      const record = await config.store.getProposal(tenant, id);
      const action = record === undefined ? undefined : actions.get(record.actionType);
      if (record !== undefined && action !== undefined) return { record, action };
    }
    throw proposalNotFound(id);
  }

  /** `guard.read` as the viewer: the guard decides who may read. */
  async function readAs(
    action: ActionDefinition,
    record: ProposalRecord,
    viewer: AuthenticatedApprover,
  ): Promise<ProposalView> {
    try {
      return await config.guard.read(action, {
        tenant: record.tenant,
        proposal: record.proposal,
        reader: viewer.id,
      });
    } catch (error) {
      if (error instanceof ProposalNotFoundError) throw proposalNotFound(record.proposal);
      throw error;
    }
  }

  async function decisionOf(record: ProposalRecord, who: string) {
    const evidence = await config.store.listEvidence(record.tenant, record.proposal);
    const own = evidence.filter((e) => e.authority === who);
    return own.length === 0 ? null : (own[own.length - 1]?.decision ?? null);
  }

  async function decide(
    address: ApprovalsAddress,
    approver: AuthenticatedApprover,
    decision: 'approve' | 'reject',
    reason: string | undefined,
  ): Promise<DecisionRecorded> {
    const { record, action } = await locate(address, approver);
    // Serialised per proposal in this process: "approving twice" and "deny racing approve" get
    // a clear answer here; across processes the guard's compare-and-set decides (one wins).
    return decisions.run(`${record.tenant}\u0000${record.proposal}`, async () => {
      const view = await readAs(action, record, approver);
      if (!isAuthority(action, approver.id)) {
        throw new ApprovalsError(
          'approver_not_declared',
          `${approver.id} is not a declared approver of ${action.typeName}; only ${action.approval?.authorities.map((a) => a.id).join(', ') || 'nobody'} may decide`,
        );
      }
      const current = (await config.store.getProposal(record.tenant, record.proposal)) ?? record;
      refuseUnlessDecidable(current);
      refuseWeakAssurance(action, approver);
      const previous = await decisionOf(current, approver.id);
      if (previous !== null) {
        throw new ApprovalsError(
          'already_decided',
          `${approver.id} already ${previous === 'approve' ? 'approved' : 'denied'} this proposal; a decision counts once and cannot be changed here`,
          { data: { decision: previous } },
        );
      }
      const now = clock.now();
      if (current.expiresAtMs <= now) {
        await config.guard.expireDue(action, {
          tenant: current.tenant,
          proposal: current.proposal,
        });
        throw expiredError(current);
      }
      if (view.evidenceBindings === undefined) throw proposalNotFound(record.proposal);
      const evidence = buildAuthorityEvidence(view.evidenceBindings, {
        authority: approver.id,
        decision,
        channelAssurance: approver.channelAssurance,
        issuedAt: now,
        ...(config.evidenceValidForMs === undefined
          ? {}
          : { validForMs: config.evidenceValidForMs }),
      });
      const result = await config.guard.recordAuthority(action, {
        tenant: current.tenant,
        evidence,
        authenticatedAuthority: approver.id,
        ...(reason === undefined ? {} : { note: reason }),
      });
      if (result.outcome === 'rejected') {
        const issue = result.issues?.[0];
        throw new ApprovalsError(
          'evidence_refused',
          `The guard refused ${approver.id}'s ${decision === 'approve' ? 'approval' : 'denial'}: ${issue?.message ?? result.reasonCode ?? 'evidence rejected'}`,
          { data: { reasonCode: result.reasonCode ?? null } },
        );
      }
      const digest = evidenceDigest(evidence);
      const stored = await config.store.listEvidence(current.tenant, current.proposal);
      const after = (await config.store.getProposal(current.tenant, current.proposal)) ?? current;
      if (!stored.some((e) => e.evidenceDigest === digest)) {
        if (after.status === 'expired') throw expiredError(after);
        refuseUnlessDecidable(after);
        throw notPending(after);
      }
      const tally = tallyOf(action, stored, after, clock.now());
      return {
        tenant: after.tenant,
        proposal: after.proposal,
        decision,
        status: after.status,
        approvals: tally,
        evidenceDigest: digest,
      };
    });
  }

  async function collect(
    viewer: AuthenticatedApprover,
    filter: PendingFilter,
    statuses: readonly ProposalStatus[],
    allowed: (action: ActionDefinition) => boolean,
  ): Promise<{ record: ProposalRecord; action: ActionDefinition }[]> {
    const limit = Math.min(Math.max(filter.limit ?? 200, 1), 1000);
    const tenants = viewer.tenants.filter(
      (t) => filter.tenant === undefined || t === filter.tenant,
    );
    const found: { record: ProposalRecord; action: ActionDefinition }[] = [];
    for (const action of actions.values()) {
      if (!allowed(action)) continue;
      if (filter.action !== undefined && action.typeName !== filter.action) continue;
      for (const tenant of tenants) {
        const records = await config.store.listProposals({
          tenant,
          statuses,
          actionType: action.typeName,
          limit,
        });
        for (const record of records) {
          if (
            filter.requester !== undefined &&
            record.principal !== filter.requester &&
            record.agent !== filter.requester
          ) {
            continue;
          }
          found.push({ record, action });
        }
      }
    }
    found.sort(
      (a, b) =>
        a.record.expiresAtMs - b.record.expiresAtMs ||
        (a.record.proposal < b.record.proposal ? -1 : 1),
    );
    return found.slice(0, limit);
  }

  return {
    async listPending(viewer, filter = {}) {
      const now = clock.now();
      const found = await collect(viewer, filter, ['awaiting_authority'], (action) =>
        isAuthority(action, viewer.id),
      );
      const items: PendingItem[] = [];
      for (const { record, action } of found) {
        if (record.expiresAtMs <= now) continue; // it can no longer be approved
        // Unreadable for this viewer (a reader rule changed): leave it out; other failures throw.
        const view = await readAs(action, record, viewer).catch((error: unknown) => {
          if (error instanceof ApprovalsError) return undefined;
          throw error;
        });
        if (view === undefined) continue;
        const evidence = await config.store.listEvidence(record.tenant, record.proposal);
        const own = evidence.filter((e) => e.authority === viewer.id).at(-1);
        items.push({
          tenant: record.tenant,
          proposal: record.proposal,
          actionType: record.actionType,
          principal: record.principal,
          agent: record.agent,
          createdAt: new Date(record.createdAtMs).toISOString(),
          expiresAt: new Date(record.expiresAtMs).toISOString(),
          expiresAtMs: record.expiresAtMs,
          ...(view.preview === undefined ? {} : { preview: view.preview as JsonValue }),
          approvals: tallyOf(action, evidence, record, now),
          yourDecision: own?.decision ?? null,
        });
      }
      return items;
    },

    async show(address, viewer) {
      const { record, action } = await locate(address, viewer);
      const view = await readAs(action, record, viewer);
      const evidence = await config.store.listEvidence(record.tenant, record.proposal);
      return detailsOf({
        action,
        record,
        view,
        evidence,
        viewer: viewer.id,
        nowMs: clock.now(),
      });
    },

    async approve(address, approver, options = {}) {
      return decide(address, approver, 'approve', checkReason(options.reason, false));
    },
    async deny(address, approver, options) {
      return decide(address, approver, 'reject', checkReason(options?.reason, true));
    },

    async resolve(address, operator, options) {
      const { record, action } = await locate(address, operator);
      await readAs(action, record, operator);
      if (!isOperator(action, operator.id)) {
        throw new ApprovalsError(
          'operator_not_declared',
          `${operator.id} is not a declared operator of ${action.typeName}; ask one of ${action.config.operators?.join(', ') || '(none declared: add `operators` to the action)'}`,
        );
      }
      if (!OPERATOR_RESOLVABLE_STATUSES.has(record.status)) {
        throw new ApprovalsError(
          'proposal_not_resolvable',
          `Proposal ${record.proposal} is ${record.status}; only failed_unknown or verification_unresolved proposals can be resolved by an operator`,
          { data: { status: record.status } },
        );
      }
      let result: Awaited<ReturnType<Guard['resolveOutcome']>>;
      try {
        result = await config.guard.resolveOutcome(action, {
          tenant: record.tenant,
          proposal: record.proposal,
          operator: operator.id,
          finding: options.finding,
          ...(options.note === undefined || options.note === '' ? {} : { note: options.note }),
        });
      } catch (error) {
        if (error instanceof ProposalNotFoundError) throw proposalNotFound(record.proposal);
        if (error instanceof Error && (error as { code?: unknown }).code === 'invalid_argument') {
          throw new ApprovalsError('invalid_request', error.message, { cause: error });
        }
        throw error;
      }
      if (result.outcome === 'conflict' || result.outcome === 'in_progress') {
        throw new ApprovalsError(
          'proposal_not_resolvable',
          `Proposal ${record.proposal} cannot be resolved now (${result.reasonCode ?? result.outcome}); it is ${result.status}. Try again after its verification or lease ends`,
          { data: { status: result.status, reasonCode: result.reasonCode ?? null } },
        );
      }
      return {
        tenant: record.tenant,
        proposal: record.proposal,
        status: result.status,
        outcome: result.outcome,
        reasonCode: result.reasonCode ?? null,
      };
    },

    async timeline(address, viewer) {
      const { record, action } = await locate(address, viewer);
      await readAs(action, record, viewer);
      const replay = await config.guard.replay({
        tenant: record.tenant,
        proposal: record.proposal,
      });
      const chain = await config.guard.verifyLedger({ tenant: record.tenant });
      return {
        tenant: record.tenant,
        proposal: record.proposal,
        actionType: record.actionType,
        decisionPath: replay?.decisionPath ?? [],
        events: replay?.events ?? [],
        receipts: record.receipts,
        verificationAttempts: record.verificationAttempts,
        chain,
      };
    },

    async stuck(operator, filter = {}) {
      const found = await collect(operator, filter, STUCK_STATUSES, (action) =>
        isOperator(action, operator.id),
      );
      return found.map(({ record }) => ({
        tenant: record.tenant,
        proposal: record.proposal,
        actionType: record.actionType,
        status: record.status,
        reasonCode: record.reasonCode,
        principal: record.principal,
        agent: record.agent,
        updatedAt: new Date(record.updatedAtMs).toISOString(),
        receipts: record.receipts,
        resolvable: OPERATOR_RESOLVABLE_STATUSES.has(record.status),
      }));
    },

    actionsOf(viewer) {
      const all = [...actions.values()];
      return {
        approves: all.filter((a) => isAuthority(a, viewer.id)).map((a) => a.typeName),
        operates: all.filter((a) => isOperator(a, viewer.id)).map((a) => a.typeName),
      };
    },
  };
}

const STATUS_WORDS: Partial<Record<ProposalStatus, string>> = {
  authorized: 'already approved by enough approvers',
  denied: 'already denied',
  expired: 'expired',
  superseded: 'superseded: another proposal for the same effect took it',
  stale: 'stale (the world changed; a fresh proposal replaced it)',
  blocked: "blocked by the action's policy",
};

function notPending(record: ProposalRecord): ApprovalsError {
  const words = STATUS_WORDS[record.status] ?? `no longer waiting for approval (${record.status})`;
  return new ApprovalsError(
    'proposal_not_pending',
    `Proposal ${record.proposal} is ${words}; nothing was recorded${record.supersededBy === null ? '' : `. See ${record.supersededBy}`}`,
    { data: { status: record.status, supersededBy: record.supersededBy } },
  );
}

function expiredError(record: ProposalRecord): ApprovalsError {
  return new ApprovalsError(
    'proposal_expired',
    `Proposal ${record.proposal} expired at ${new Date(record.expiresAtMs).toISOString()} before it was decided; nothing was recorded. The agent must propose it again`,
    { data: { status: 'expired' } },
  );
}

/**
 * Decisions land only on `awaiting_authority`: the first decision that settles the rule wins and
 * a later one (even a denial) is told what happened instead (decision 091).
 */
function refuseUnlessDecidable(record: ProposalRecord): void {
  if (record.status === 'awaiting_authority') return;
  if (record.status === 'expired') throw expiredError(record);
  throw notPending(record);
}

/** The guard would refuse evidence below the authority's required assurance; refuse first. */
function refuseWeakAssurance(action: ActionDefinition, approver: AuthenticatedApprover): void {
  const declared = action.approval?.authorities.find((a) => a.id === approver.id);
  const required = declared?.requiredAssurance ?? 'medium';
  if (!assuranceSatisfies(approver.channelAssurance, required)) {
    throw new ApprovalsError(
      'evidence_refused',
      `${approver.id} must approve ${action.typeName} with ${required} channel assurance, but a ${approver.channel} login gives ${approver.channelAssurance}; ask an administrator to raise this approver's assurance or use a stronger channel`,
      { data: { reasonCode: 'channel_assurance_insufficient' } },
    );
  }
}
