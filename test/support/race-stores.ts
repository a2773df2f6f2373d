/**
 * Store wrappers for gate tests: each wraps only the store the guard sees, while the verifier
 * reads the evidence from the real store. Guarantees are broken with the core's own switch
 * (`createGuardCore({ breakages })`); these set the stage for it. Test-only.
 */
import type { JsonValue } from '../../src/core/canonical-json.js';
import { openEnvelope, sealEnvelope } from '../../src/core/envelope.js';
import { snapshotAad } from '../../src/core/guard/proposal-snapshot.js';
import type { KeyRing } from '../../src/core/key-ring.js';
import type { GuardStore, ProposalRecord } from '../../src/core/store.js';

/**
 * Not a breakage: the race the effect claim exists for, made certain. Every `prepare` misses the
 * proposals already made for its effect, as if all of them had run at the same instant, so each
 * creates its own proposal and only the claim at execution stands between them.
 */
export function preparesMissEachOther(store: GuardStore): GuardStore {
  return wrap(store, { listProposalsByEffect: async () => [] });
}

/**
 * An attacker who holds the encryption key but not the commitment key: every snapshot the guard
 * reads has its input changed by `change` and is sealed again (a valid envelope, a stale
 * commitment). Only the commitment check stands between this and executing the changed input.
 */
export function swappedSnapshots(
  store: GuardStore,
  keyRing: KeyRing,
  change: (input: Record<string, JsonValue>) => Record<string, JsonValue>,
): GuardStore {
  const swap = (record: ProposalRecord | undefined): ProposalRecord | undefined => {
    if (record?.snapshot === null || record?.snapshot === undefined) return record;
    const aad = snapshotAad(record.tenant, record.proposal);
    const body = openEnvelope(keyRing, record.snapshot, aad) as Record<string, JsonValue>;
    const input = change(body.input as Record<string, JsonValue>);
    const snapshot = sealEnvelope(keyRing, { ...body, input }, aad, (size) =>
      new Uint8Array(size).fill(3),
    );
    return { ...record, snapshot };
  };
  return wrap(store, {
    getProposal: async (tenant, proposal) => swap(await store.getProposal(tenant, proposal)),
    // A write keeps the snapshot the store holds: the swap lives only in what the guard reads.
    commit: (write) => {
      const change = write.proposal;
      if (change?.kind !== 'update') return store.commit(write);
      return store.getProposal(write.tenant, change.record.proposal).then((stored) =>
        store.commit({
          ...write,
          proposal: {
            ...change,
            record: {
              ...change.record,
              snapshot: change.record.snapshot === null ? null : (stored?.snapshot ?? null),
            },
          },
        }),
      );
    },
  });
}

function wrap(store: GuardStore, overrides: Partial<GuardStore>): GuardStore {
  return {
    kind: store.kind,
    commit: (write) => store.commit(write),
    getProposal: (tenant, proposal) => store.getProposal(tenant, proposal),
    listProposalsByEffect: (tenant, scope, limit) =>
      store.listProposalsByEffect(tenant, scope, limit),
    getEffectClaim: (tenant, scope) => store.getEffectClaim(tenant, scope),
    listEvidence: (tenant, proposal) => store.listEvidence(tenant, proposal),
    listDue: (query) => store.listDue(query),
    listProposals: (query) => store.listProposals(query),
    readLedger: (query) => store.readLedger(query),
    ledgerHead: (tenant) => store.ledgerHead(tenant),
    truncateLedger: (tenant, through) => store.truncateLedger(tenant, through),
    ledgerCheckpoint: (tenant) => store.ledgerCheckpoint(tenant),
    close: () => store.close(),
    ...overrides,
  };
}
