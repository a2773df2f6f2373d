/**
 * The guard's view of its store, which it does not trust for authority (decision 045): every
 * record it writes is sealed with a keyed MAC, every record it reads must carry a valid one, the
 * evidence it counts must be exactly the rows stored, and before it hands a proposal to an
 * executor, verifier or compensator (a commit that grants a lease) it checks the record is not
 * older than the ledger and that no other proposal's record holds the effect claim. A failed
 * check is sealed into the ledger as `store_tampering_detected` and refused with a
 * `StoreInvariantError`.
 */
import { deepFreeze } from '../deep-freeze.js';
import { assert } from '../errors.js';
import type { KeyRing } from '../key-ring.js';
import type { LedgerEvent } from '../ledger.js';
import { checkRecordMac, evidenceRowDigest, sealRecord } from '../record-mac.js';
import type {
  AuthorityEvidenceRecord,
  GuardStore,
  ProposalRecord,
  StoreCommit,
  StoreCommitResult,
} from '../store.js';
import {
  holdsEffectClaim,
  ledgerRevisions,
  type StoreTampering,
  tamperingError,
} from './store-tampering.js';

/** A store the guard checks on every read and seals on every write. */
export interface AuthenticatedStore extends GuardStore {
  /**
   * The evidence rows `record` counted, after checking the stored rows are exactly those (a row
   * added by a concurrent `recordAuthority` since `record` was read is left out, not refused).
   */
  countedEvidence(record: ProposalRecord): Promise<readonly AuthorityEvidenceRecord[]>;
  /**
   * Whether `record` is, by identity, a deep-frozen record this guard sealed: nothing in it can
   * have changed since (a store that hands back what it was given; never a decoded row).
   */
  sealedHere(record: ProposalRecord): boolean;
  /**
   * `commit` of a write whose claim is on the effect scope this guard listed as `listed`
   * (authenticated by `listProposalsByEffect`) in the same call, just before: the claim check
   * looks through that list instead of listing the scope again — one read fewer before `run`'s
   * combined insert and claim (decision 125). A write without a claim on `listed.effectScope`
   * is checked as `commit` checks it.
   */
  commitListed(write: StoreCommit, listed: ListedEffect): Promise<StoreCommitResult>;
}

/** What `listProposalsByEffect` answered for one effect scope, already authenticated. */
export interface ListedEffect {
  readonly effectScope: string;
  readonly records: readonly ProposalRecord[];
}

/** What {@link authenticateStore} needs. */
export interface AuthenticatedStoreConfig {
  readonly store: GuardStore;
  readonly keyRing: KeyRing;
  /** For the time of `store_tampering_detected` events. */
  readonly now: () => number;
  /** Hands the `store_tampering_detected` event to the host's sink once it is durable. */
  readonly emit: (events: readonly LedgerEvent[]) => void;
}

const ACTION_TYPE = /^[a-z][a-z0-9_-]{0,63}\.[a-z][a-z0-9_-]{0,63}@[1-9][0-9]{0,15}$/;

/** Wraps `config.store` so that nothing the guard acts on can have been altered undetected. */
export function authenticateStore(config: AuthenticatedStoreConfig): AuthenticatedStore {
  const { store: inner, keyRing } = config;
  /**
   * Records this guard sealed, deep-frozen: when a store hands back one of these very objects
   * (the memory store does), nobody can have changed it since its MAC was made, so checking the
   * MAC again would prove nothing. Anything else — every row a durable store decodes, any copy —
   * is checked, so a direct edit of the database is still refused.
   */
  const sealedHere = new WeakSet<ProposalRecord>();
  const seal = (record: ProposalRecord): ProposalRecord => {
    const sealed = deepFreeze(sealRecord(keyRing, record));
    sealedHere.add(sealed);
    return sealed;
  };

  /** Seals the refusal into the ledger (best effort), then throws it. */
  const refuse = async (
    code: StoreTampering,
    where: { readonly tenant: string; readonly proposal: string; readonly actionType?: unknown },
    detail: string,
    data: Record<string, number | string> = {},
  ): Promise<never> => {
    const actionType =
      typeof where.actionType === 'string' && ACTION_TYPE.test(where.actionType)
        ? where.actionType
        : null;
    try {
      const written = await inner.commit({
        tenant: where.tenant,
        events: [
          {
            proposal: where.proposal,
            type: 'store_tampering_detected',
            at: new Date(config.now()).toISOString(),
            actionType,
            status: null,
            revision: null,
            data: { reasonCode: code, ...data },
          },
        ],
      });
      if (written.kind === 'committed') config.emit(written.events);
    } catch {
      // The refusal matters more than its record: a store this broken may refuse the event too.
    }
    throw tamperingError(code, where.proposal, detail, data);
  };

  const checked = async (
    record: ProposalRecord | undefined,
  ): Promise<ProposalRecord | undefined> => {
    if (record === undefined) return undefined;
    if (sealedHere.has(record)) return record;
    const verdict = checkRecordMac(keyRing, record);
    if (verdict === 'valid') return record;
    return verdict === 'missing'
      ? refuse(
          'record_unsealed',
          record,
          'its stored record carries no MAC (Sideguard 0.1 wrote none; anyone who can write to the database can remove one)',
        )
      : refuse(
          'record_mac_invalid',
          record,
          'its stored record does not match its MAC, so a field such as its status, policy decision, revision or lease was changed',
        );
  };
  const checkedAll = async (records: readonly ProposalRecord[]) => {
    const result: ProposalRecord[] = [];
    for (const record of records) result.push((await checked(record))!);
    return result;
  };

  /** A commit that grants a lease must not start from a record older than the ledger knows. */
  const checkNotRolledBack = async (
    tenant: string,
    expectedRevision: number,
    record: ProposalRecord,
  ): Promise<StoreCommitResult | undefined> => {
    const events = await inner.readLedger({ tenant, proposal: record.proposal });
    const { highest, rewound } = ledgerRevisions(events);
    if (!rewound && (highest === undefined || highest <= expectedRevision)) return undefined;
    if (!rewound) {
      // Either someone moved the proposal on since we read it (we lost a race), or the store
      // holds an older copy than the ledger recorded.
      const current = await checked(await inner.getProposal(tenant, record.proposal));
      if (current !== undefined && current.revision >= (highest ?? 0)) {
        return { kind: 'revision_conflict', current };
      }
    }
    return refuse(
      'record_rolled_back',
      record,
      rewound
        ? 'its ledger shows the record was put back to an older revision earlier and written on top of'
        : `the store holds revision ${expectedRevision} but the ledger already recorded revision ${highest}, so an older copy of the record was put back`,
      { storedRevision: expectedRevision, ledgerRevision: highest ?? 0 },
    );
  };

  /** No other proposal's authenticated record may hold the claim this commit is about to take. */
  const checkClaimIntact = async (
    write: StoreCommit,
    claim: NonNullable<StoreCommit['claim']>,
    listed: ListedEffect | undefined,
  ): Promise<undefined> => {
    const { tenant } = write;
    const others =
      listed?.effectScope === claim.effectScope
        ? listed.records
        : await checkedAll(await inner.listProposalsByEffect(tenant, claim.effectScope));
    for (const other of others) {
      if (other.proposal === claim.proposal || !holdsEffectClaim(other)) continue;
      const row = await inner.getEffectClaim(tenant, claim.effectScope);
      // The claim row agrees: the store refuses this claim (`effect_claimed`) as it should.
      if (row?.proposal === other.proposal) return undefined;
      // It may have released the claim after we listed it; only a holder still holding counts.
      const again = await checked(await inner.getProposal(tenant, other.proposal));
      if (again === undefined || !holdsEffectClaim(again)) continue;
      return refuse(
        'effect_claim_altered',
        { tenant, proposal: claim.proposal, actionType: write.proposal?.record.actionType },
        `proposal ${JSON.stringify(other.proposal)} holds the claim on this semantic effect by its authenticated record, but the store's claim row is ${row === undefined ? 'missing' : `held by ${JSON.stringify(row.proposal)}`}, so executing would repeat the effect`,
        { holder: other.proposal },
      );
    }
    return undefined;
  };

  const countedEvidence = async (
    record: ProposalRecord,
  ): Promise<readonly AuthorityEvidenceRecord[]> => {
    const counted = new Set(record.countedEvidence ?? []);
    const rows = await inner.listEvidence(record.tenant, record.proposal);
    const digests = rows.map(evidenceRowDigest);
    const stored = new Set(digests);
    const missing = [...counted].filter((digest) => !stored.has(digest)).length;
    const extra = digests.filter((digest) => !counted.has(digest));
    if (missing === 0 && extra.length > 0) {
      // Rows are only ever added with a new revision of the record that counts them.
      const current = await checked(await inner.getProposal(record.tenant, record.proposal));
      const countedNow = new Set(current?.countedEvidence ?? []);
      if (current !== undefined && current.revision !== record.revision) {
        if (extra.every((digest) => countedNow.has(digest))) {
          return rows.filter((_, index) => counted.has(digests[index]!));
        }
      }
    }
    if (missing === 0 && extra.length === 0) return rows;
    return refuse(
      'evidence_altered',
      record,
      `the authority evidence stored for it differs from the evidence its record counted (${extra.length} row(s) not counted, ${missing} counted row(s) missing or changed)`,
      { uncountedRows: extra.length, missingRows: missing },
    );
  };

  /**
   * For an insert only while the effect is unlisted (decision 126): the store applies it only
   * if it holds no proposal of the scope, so no record can hold the claim it takes.
   */
  const unlistedScope = (write: StoreCommit): ListedEffect | undefined => {
    if (write.onlyIfEffectUnlisted !== true) return undefined;
    assert(
      inner.refusesListedEffects === true,
      'onlyIfEffectUnlisted is asked only of a store that declares refusesListedEffects',
    );
    const change = write.proposal;
    return change?.kind === 'insert'
      ? { effectScope: change.record.effectScope, records: [] }
      : undefined;
  };

  const commit = async (write: StoreCommit, listed?: ListedEffect): Promise<StoreCommitResult> => {
    const change = write.proposal;
    const counted = new Set(change?.record.countedEvidence ?? []);
    for (const row of write.evidence ?? []) {
      assert(
        counted.has(evidenceRowDigest(row)),
        'evidence is stored only with a proposal record that counts it (countedEvidence)',
      );
    }
    if (change === undefined) return inner.commit(write);
    const checks: Promise<StoreCommitResult | undefined>[] = [];
    if (change.kind === 'update' && change.record.lease !== null) {
      checks.push(checkNotRolledBack(write.tenant, change.expectedRevision, change.record));
    }
    if (write.claim !== undefined) {
      checks.push(checkClaimIntact(write, write.claim, listed ?? unlistedScope(write)));
    }
    const refused = (await Promise.all(checks)).find((result) => result !== undefined);
    if (refused !== undefined) return refused;
    const result = await inner.commit({
      ...write,
      proposal: { ...change, record: seal(change.record) },
    });
    if (result.kind !== 'revision_conflict') return result;
    return { kind: 'revision_conflict', current: await checked(result.current) };
  };

  return {
    kind: inner.kind,
    ...(inner.refusesListedEffects === true ? { refusesListedEffects: true } : {}),
    commit: (write) => commit(write),
    commitListed: (write, listed) => commit(write, listed),
    getProposal: async (tenant, proposal) => checked(await inner.getProposal(tenant, proposal)),
    listProposalsByEffect: async (tenant, effectScope, limit) =>
      checkedAll(await inner.listProposalsByEffect(tenant, effectScope, limit)),
    getEffectClaim: (tenant, effectScope) => inner.getEffectClaim(tenant, effectScope),
    async listEvidence(tenant, proposal) {
      const record = await checked(await inner.getProposal(tenant, proposal));
      return record === undefined ? [] : countedEvidence(record);
    },
    listDue: async (query) => checkedAll(await inner.listDue(query)),
    listProposals: async (query) => checkedAll(await inner.listProposals(query)),
    readLedger: (query) => inner.readLedger(query),
    ledgerHead: (tenant) => inner.ledgerHead(tenant),
    truncateLedger: (tenant, throughSequence) => inner.truncateLedger(tenant, throughSequence),
    ledgerCheckpoint: (tenant) => inner.ledgerCheckpoint(tenant),
    close: () => inner.close(),
    countedEvidence,
    sealedHere: (record) => sealedHere.has(record),
  };
}
