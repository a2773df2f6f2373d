/** Builds the service's views from a record, the guard's read and the stored evidence. */
import type { ActionDefinition } from '../core/action.js';
import type { JsonValue } from '../core/canonical-json.js';
import { tallyAuthority } from '../core/evidence.js';
import type { ProposalView } from '../core/guard.js';
import type { AuthorityEvidenceRecord, ProposalRecord } from '../core/store.js';
import type { ApprovalTally, AuthorityDecision, ProposalDetails } from './approvals-types.js';

/** The tally in force at `nowMs`, as the guard counts it. */
export function tallyOf(
  action: ActionDefinition,
  evidence: readonly AuthorityEvidenceRecord[],
  record: ProposalRecord,
  nowMs: number,
): ApprovalTally {
  const rule = action.approval;
  const required = record.policy.decision === 'require_approval' ? (rule?.required ?? 0) : 0;
  if (rule === undefined) return { required, approvedBy: [], rejectedBy: null };
  const tally = tallyAuthority(rule, evidence, nowMs);
  if (tally.kind === 'vetoed') return { required, approvedBy: [], rejectedBy: tally.rejectedBy };
  return { required, approvedBy: [...tally.approvers], rejectedBy: null };
}

function authorityDecisions(
  action: ActionDefinition,
  evidence: readonly AuthorityEvidenceRecord[],
): AuthorityDecision[] {
  return (action.approval?.authorities ?? []).map((authority) => {
    const last = evidence.filter((e) => e.authority === authority.id).at(-1);
    return {
      id: authority.id,
      requiredAssurance: authority.requiredAssurance ?? 'medium',
      decision: last?.decision ?? null,
      at: last === undefined ? null : new Date(last.recordedAtMs).toISOString(),
      channelAssurance: last?.channelAssurance ?? null,
    };
  });
}

function protectedFieldsOf(
  action: ActionDefinition,
  input: JsonValue | undefined,
): { name: string; value: JsonValue }[] {
  if (input === undefined || input === null || typeof input !== 'object' || Array.isArray(input)) {
    return [];
  }
  const object = input as Readonly<Record<string, JsonValue>>;
  return action.protectedFields
    .filter((name) => Object.hasOwn(object, name))
    .map((name) => ({ name, value: object[name] as JsonValue }));
}

/** Everything the viewer may see of one proposal. */
export function detailsOf(parts: {
  readonly action: ActionDefinition;
  readonly record: ProposalRecord;
  readonly view: ProposalView;
  readonly evidence: readonly AuthorityEvidenceRecord[];
  readonly viewer: string;
  readonly nowMs: number;
}): ProposalDetails {
  const { action, record, view, evidence, viewer, nowMs } = parts;
  const isAuthority = action.approval?.authorities.some((a) => a.id === viewer) ?? false;
  const isOperator = action.config.operators?.includes(viewer) ?? false;
  const decided = evidence.filter((e) => e.authority === viewer).at(-1)?.decision ?? null;
  const open = record.status === 'awaiting_authority' && record.expiresAtMs > nowMs;
  return {
    tenant: record.tenant,
    proposal: record.proposal,
    actionType: record.actionType,
    status: record.status,
    reasonCode: record.reasonCode,
    policy: view.policy,
    principal: record.principal,
    agent: record.agent,
    createdAt: view.createdAt,
    expiresAt: view.expiresAt,
    expiresAtMs: record.expiresAtMs,
    ...(view.preview === undefined ? {} : { preview: view.preview }),
    ...(view.input === undefined ? {} : { input: view.input }),
    protectedFields: protectedFieldsOf(action, view.input),
    ...(view.evidenceBindings === undefined
      ? {}
      : {
          commitment: view.evidenceBindings.proposalCommitment,
          semanticEffectKey: view.evidenceBindings.semanticEffectKey,
        }),
    approvals: {
      ...tallyOf(action, evidence, record, nowMs),
      authorities: authorityDecisions(action, evidence),
    },
    receipts: record.receipts,
    compensationReceipts: record.compensationReceipts,
    supersededBy: record.supersededBy,
    supersedes: record.supersedes,
    viewer: {
      id: viewer,
      isAuthority,
      isOperator,
      decided,
      mayDecide: isAuthority && decided === null && open,
      mayResolve:
        isOperator &&
        (record.status === 'failed_unknown' || record.status === 'verification_unresolved'),
    },
  };
}
