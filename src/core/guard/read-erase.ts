/**
 * `read` for authorised readers (the proposer, the declared authorities, the declared operators
 * and the action's extra readers) and `erase` for the action's declared erasers only. Anyone else gets not-found:
 * access failures look exactly like a missing proposal.
 */

import type { ActionDefinition } from '../action.js';
import { checkArgument } from '../argument-checks.js';
import type { JsonValue } from '../canonical-json.js';
import { ProposalNotFoundError } from '../errors.js';
import { tallyAuthority } from '../evidence.js';
import type { ProposalRecord } from '../store.js';
import { isAllowedTransition } from '../vocabulary.js';
import {
  after,
  draft,
  type GuardContext,
  iso,
  load,
  MAX_CAS_ATTEMPTS,
  reload,
  resultOf,
  successor,
  update,
} from './guard-context.js';
import type { GuardResult, ProposalView, ReaderAddress } from './guard-types.js';
import { shortText } from './host-results.js';
import { openSnapshot, outputPart } from './proposal-snapshot.js';

const mayRead = (action: ActionDefinition, record: ProposalRecord, reader: string): boolean =>
  reader === record.principal ||
  (action.approval?.authorities.some((authority) => authority.id === reader) ?? false) ||
  // Operators settle what the guard cannot; they must see what they attest about.
  (action.config.operators?.includes(reader) ?? false) ||
  (action.config.readers?.includes(reader) ?? false);

/** Erasing needs its own declaration: reading does not imply it (decision 047). */
const mayErase = (action: ActionDefinition, _record: ProposalRecord, eraser: string): boolean =>
  action.config.erasers?.includes(eraser) ?? false;

async function loadFor(
  context: GuardContext,
  action: ActionDefinition,
  address: ReaderAddress,
  allowed: (action: ActionDefinition, record: ProposalRecord, who: string) => boolean,
): Promise<ProposalRecord> {
  const who = checkArgument('reader', address.reader);
  const record = await load(context, action, address);
  if (!allowed(action, record, who)) throw new ProposalNotFoundError(address.proposal);
  return record;
}

/** What an authorised reader may see of a proposal, including the bindings evidence needs. */
export async function readProposal(
  context: GuardContext,
  action: ActionDefinition,
  address: ReaderAddress,
): Promise<ProposalView> {
  const record = await loadFor(context, action, address, mayRead);
  const opened = record.snapshot === null ? undefined : openSnapshot(context, action, record);
  const rule = action.approval;
  const tally =
    rule === undefined
      ? undefined
      : tallyAuthority(rule, await context.store.countedEvidence(record), context.clock.now());
  return {
    ...resultOf(record),
    ...outputPart(context, record),
    tenant: record.tenant,
    actionType: record.actionType,
    principal: record.principal,
    agent: record.agent,
    createdAt: iso(record.createdAtMs),
    expiresAt: iso(record.expiresAtMs),
    ...(opened === undefined
      ? {}
      : {
          input: opened.input as JsonValue,
          facts: opened.facts,
          ...(opened.preview === undefined ? {} : { preview: opened.preview }),
          evidenceBindings: {
            tenant: record.tenant,
            actionType: record.actionType,
            proposal: record.proposal,
            semanticEffectKey: record.semanticEffectKey,
            proposalCommitment: record.commitment,
            audience: context.audience,
            proposalExpiresAt: iso(record.expiresAtMs),
          },
        }),
    authority: {
      required: record.policy.decision === 'require_approval' ? (rule?.required ?? 0) : 0,
      approvers: tally?.kind === 'vetoed' ? [] : [...(tally?.approvers ?? [])],
      rejectedBy: tally?.kind === 'vetoed' ? tally.rejectedBy : null,
    },
    supersededBy: record.supersededBy,
    supersedes: record.supersedes,
    policy: { decision: record.policy.decision, reasonCode: record.policy.reasonCode },
  };
}

/**
 * Erases a settled proposal's private data and leaves a tombstone (I8). `address.reader` is who
 * asks; it must be one of the action's declared `erasers`.
 */
export async function eraseProposal(
  context: GuardContext,
  action: ActionDefinition,
  address: ReaderAddress,
): Promise<GuardResult> {
  let record = await loadFor(context, action, address, mayErase);
  for (let attempt = 0; attempt < MAX_CAS_ATTEMPTS; attempt++) {
    if (record.status === 'erased') {
      return resultOf(record, 'erased', { reasonCode: 'already_erased' });
    }
    // In-flight proposals keep their input: verification and compensation still need it.
    if (!isAllowedTransition(record.status, 'erased')) {
      return resultOf(record, 'conflict', { reasonCode: 'erasure_blocked_in_flight' });
    }
    const next = successor(context, record, {
      status: 'erased',
      reasonCode: 'erased_on_request',
      lease: null,
      dueAtMs: null,
      snapshot: null,
      output: null,
    });
    const written = await update(context, record, next, {
      events: [
        draft(
          context,
          'erased',
          record.proposal,
          action.typeName,
          {
            reasonCode: 'erased_on_request',
            previousStatus: record.status,
            requestedBy: shortText(address.reader, 120),
          },
          after(next),
        ),
      ],
    });
    if (written.kind === 'committed') return resultOf(next, 'erased');
    record = await reload(context, record);
  }
  return resultOf(record, 'conflict', { reasonCode: 'too_much_contention' });
}
