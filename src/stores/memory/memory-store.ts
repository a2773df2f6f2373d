/**
 * The in-memory store: the reference adapter of the store interface, for tests, examples and
 * single-process experiments. Nothing survives the process. Records, events and evidence are
 * deep-frozen when committed and handed out as they are, never copied: nobody can change them
 * in place, so a copy would protect nothing (and cost most of the store's CPU).
 */
import { deepFreeze } from '../../core/deep-freeze.js';
import { StoreInvariantError } from '../../core/errors.js';
import { type LedgerHead, sealLedgerEvents } from '../../core/ledger.js';
import type {
  AuthorityEvidenceRecord,
  DueQuery,
  EffectClaim,
  GuardStore,
  LedgerQuery,
  ProposalListQuery,
  ProposalRecord,
  StoreCommit,
  StoreCommitResult,
} from '../../core/store.js';
import { assertCommitShape, checkEffectClaim, checkProposalWrite } from '../../core/store-rules.js';
import { firstDuplicateEvidence } from '../store-codec.js';
import { planEnvelopeUpdateOfRecords } from '../store-envelopes.js';
import {
  checkProposalListQuery,
  compareCodePoints,
  compareListPositions,
} from '../store-queries.js';
import {
  appendEvents,
  emptyMemoryLedger,
  type MemoryLedger,
  queryEvents,
  truncateEvents,
} from './memory-ledger.js';

interface TenantState {
  readonly proposals: Map<string, ProposalRecord>;
  /** effectScope → proposal ids (a proposal's effect scope never changes). */
  readonly byEffect: Map<string, string[]>;
  readonly claims: Map<string, EffectClaim>;
  readonly evidence: Map<string, AuthorityEvidenceRecord[]>;
  readonly ledger: MemoryLedger;
  head: LedgerHead | undefined;
  checkpoint: LedgerHead | undefined;
}

/** Creates an empty in-memory store. Commits are applied atomically (no await inside). */
export function createMemoryStore(): GuardStore {
  const tenants = new Map<string, TenantState>();
  let closed = false;

  const tenantState = (tenant: string): TenantState => {
    if (closed) throw new StoreInvariantError('store_closed', 'The memory store is closed');
    let state = tenants.get(tenant);
    if (state === undefined) {
      state = {
        proposals: new Map(),
        byEffect: new Map(),
        claims: new Map(),
        evidence: new Map(),
        ledger: emptyMemoryLedger(),
        head: undefined,
        checkpoint: undefined,
      };
      tenants.set(tenant, state);
    }
    return state;
  };

  return {
    kind: 'memory',
    refusesListedEffects: true,

    async commit(write: StoreCommit): Promise<StoreCommitResult> {
      assertCommitShape(write);
      const state = tenantState(write.tenant);
      const target = write.proposal?.record.proposal;
      const current = target === undefined ? undefined : state.proposals.get(target);
      const refused = checkProposalWrite(write, current);
      if (refused !== undefined) return refused;
      const scope = write.proposal?.record.effectScope;
      if (write.onlyIfEffectUnlisted === true && scope !== undefined) {
        if ((state.byEffect.get(scope) ?? []).length > 0) return { kind: 'effect_listed' };
      }
      if (write.proposal?.kind === 'update' && current !== undefined) {
        planEnvelopeUpdateOfRecords(write, current, write.proposal.record);
      }
      if (write.claim !== undefined) {
        const existing = state.claims.get(write.claim.effectScope);
        const owner = existing === undefined ? undefined : state.proposals.get(existing.proposal);
        const claimRefused = checkEffectClaim(write.claim.proposal, existing, owner?.status);
        if (claimRefused !== undefined) return claimRefused;
      }
      const duplicate = firstDuplicateEvidence(write.evidence ?? [], (evidence) =>
        (state.evidence.get(evidence.proposal) ?? []).some(
          (stored) => stored.evidenceDigest === evidence.evidenceDigest,
        ),
      );
      if (duplicate !== undefined) return { kind: 'evidence_duplicate', evidenceDigest: duplicate };
      // Everything checked: apply. No await below, so the commit is atomic.
      const events = deepFreeze(sealLedgerEvents(write.tenant, state.head, write.events));
      if (write.proposal !== undefined) {
        const { record } = write.proposal;
        if (write.proposal.kind === 'insert') {
          // An exact-size array: most effects have one proposal, and `push` onto an empty
          // array would reserve 17 slots for each (memory retained per action).
          const ids = state.byEffect.get(record.effectScope);
          if (ids === undefined) state.byEffect.set(record.effectScope, [record.proposal]);
          else ids.push(record.proposal);
        }
        state.proposals.set(record.proposal, deepFreeze(record));
      }
      if (write.claim !== undefined) {
        state.claims.set(
          write.claim.effectScope,
          Object.freeze({
            tenant: write.tenant,
            effectScope: write.claim.effectScope,
            proposal: write.claim.proposal,
            claimedAtMs: write.claim.atMs,
          }),
        );
      }
      for (const evidence of write.evidence ?? []) {
        const stored = state.evidence.get(evidence.proposal) ?? [];
        stored.push(deepFreeze(evidence));
        state.evidence.set(evidence.proposal, stored);
      }
      appendEvents(state.ledger, events);
      const last = events.at(-1);
      if (last !== undefined) state.head = { sequence: last.sequence, hash: last.hash };
      return { kind: 'committed', events };
    },

    async getProposal(tenant, proposal) {
      return tenantState(tenant).proposals.get(proposal);
    },

    async listProposalsByEffect(tenant, effectScope, limit = 50) {
      const state = tenantState(tenant);
      return (state.byEffect.get(effectScope) ?? [])
        .map((id) => state.proposals.get(id))
        .filter((record): record is ProposalRecord => record !== undefined)
        .sort((a, b) => b.createdAtMs - a.createdAtMs || compareCodePoints(b.proposal, a.proposal))
        .slice(0, limit);
    },

    async getEffectClaim(tenant, effectScope) {
      return tenantState(tenant).claims.get(effectScope);
    },

    async listEvidence(tenant, proposal) {
      return [...(tenantState(tenant).evidence.get(proposal) ?? [])];
    },

    async listDue(query: DueQuery) {
      const statuses = new Set(query.statuses);
      return [...tenantState(query.tenant).proposals.values()]
        .filter(
          (record) =>
            statuses.has(record.status) &&
            record.dueAtMs !== null &&
            record.dueAtMs <= query.dueAtOrBeforeMs,
        )
        .sort(
          (a, b) =>
            (a.dueAtMs ?? 0) - (b.dueAtMs ?? 0) || compareCodePoints(a.proposal, b.proposal),
        )
        .slice(0, query.limit ?? 100);
    },

    async listProposals(query: ProposalListQuery) {
      const checked = checkProposalListQuery(query);
      if (closed) throw new StoreInvariantError('store_closed', 'The memory store is closed');
      const statuses = new Set<string>(checked.statuses);
      const states =
        checked.tenant === undefined ? [...tenants.values()] : [tenants.get(checked.tenant)];
      const { after, actionType } = checked;
      return states
        .flatMap((state) => (state === undefined ? [] : [...state.proposals.values()]))
        .filter(
          (record) =>
            statuses.has(record.status) &&
            (actionType === undefined || record.actionType === actionType) &&
            (after === undefined || compareListPositions(record, after) > 0),
        )
        .sort(compareListPositions)
        .slice(0, checked.limit);
    },

    async readLedger(query: LedgerQuery) {
      return queryEvents(tenantState(query.tenant).ledger, query);
    },

    async ledgerHead(tenant) {
      const state = tenantState(tenant);
      return state.head === undefined ? undefined : { ...state.head };
    },

    async truncateLedger(tenant, throughSequence) {
      const state = tenantState(tenant);
      const checkpoint = truncateEvents(state.ledger, throughSequence);
      if (checkpoint !== undefined) state.checkpoint = checkpoint;
    },

    async ledgerCheckpoint(tenant) {
      const state = tenantState(tenant);
      return state.checkpoint === undefined ? undefined : { ...state.checkpoint };
    },

    async close() {
      closed = true;
    },
  };
}
