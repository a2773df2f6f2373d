import { describe, expect, it } from 'vitest';
import {
  decide,
  type Harness,
  ledgerOf,
  ofType,
  PRINCIPAL,
  prepareForApproval,
  waitUntil,
} from '../../test/support/evidence-helpers.js';
import {
  createFakeProvider,
  createHarness,
  ERASER,
  refundAction,
  refundArgs,
} from '../../test/support/guard-harness.js';
import {
  createMemoryStore,
  defineAction,
  type GuardEvent,
  type GuardStore,
  ProposalNotFoundError,
  type ProposalRecord,
  StoreInvariantError,
} from '../index.js';

/** Values that must never appear outside the encrypted snapshot. */
const PRIVATE = {
  customerId: 'cus_PRIVATE_ada_lovelace',
  orderId: 'ord_PRIVATE_77813',
  amount: '734.19',
  reason: 'parcel-left-at-PRIVATE-neighbour',
} as const;
const privateArgs = () => refundArgs({ ...PRIVATE });

function expectNoPrivateValues(text: string): void {
  for (const [field, value] of Object.entries(PRIVATE)) {
    expect(text.includes(value), `${field} leaked`).toBe(false);
  }
}

async function verifiedRefund(h: Harness): Promise<string> {
  const result = await h.guard.run(h.refund, {
    tenant: h.tenant,
    input: refundArgs(),
    principal: PRINCIPAL,
  });
  expect(result.status).toBe('verified');
  return result.proposal;
}

describe('private data at rest', () => {
  it('stores the input only inside an AES-256-GCM envelope, never in the record or the ledger', async () => {
    const h = createHarness();
    const { proposal } = await prepareForApproval(h, PRIVATE);
    await decide(h, proposal, 'finance-a');
    await decide(h, proposal, 'finance-b');
    await h.guard.execute(h.refund, { tenant: h.tenant, proposal });

    const record = await h.store.getProposal(h.tenant, proposal);
    expect(record?.status).toBe('verified');
    expect(record?.snapshot).toMatchObject({ v: 1, alg: 'A256GCM' });
    expect(record?.snapshot?.kek.handle).toEqual(expect.any(String));
    expectNoPrivateValues(JSON.stringify(record));
    expectNoPrivateValues(JSON.stringify(await ledgerOf(h)));
    expectNoPrivateValues(await h.guard.exportLedger({ tenant: h.tenant }));
    expectNoPrivateValues(JSON.stringify(await h.store.listEvidence(h.tenant, proposal)));
  });

  it('keeps private values of a rejected input and a dry run out of the ledger', async () => {
    const h = createHarness();
    const rejected = await h.guard.prepare(h.refund, {
      tenant: h.tenant,
      input: { ...privateArgs(), amount: `${PRIVATE.amount}9`, currency: 'EURO' },
      principal: PRINCIPAL,
    });
    expect(rejected.outcome).toBe('rejected');
    const dry = await h.guard.prepare(h.refund, {
      tenant: h.tenant,
      input: privateArgs(),
      principal: PRINCIPAL,
      mode: 'dry_run',
    });
    expect(dry.outcome).toBe('dry_run_predicted');
    const events = await ledgerOf(h);
    expect(events.map((e) => e.type)).toEqual(['contract_rejected', 'dry_run_predicted']);
    expectNoPrivateValues(JSON.stringify(events));
  });
});

describe('event sink', () => {
  const ALLOWED = ['actionType', 'proposal', 'reasonCode', 'sequence', 'status', 'tenant', 'type'];

  it('receives only allow-listed metadata, one event per ledger entry, never input values', async () => {
    const received: GuardEvent[] = [];
    const h = createHarness({ events: (event) => void received.push(event) });
    const { proposal } = await prepareForApproval(h, PRIVATE);
    await decide(h, proposal, 'finance-a');
    await decide(h, proposal, 'finance-c');
    await h.guard.execute(h.refund, { tenant: h.tenant, proposal });

    const ledger = await ledgerOf(h);
    expect(received.map((e) => e.sequence)).toEqual(ledger.map((e) => e.sequence));
    for (const event of received) expect(Object.keys(event).sort()).toEqual(ALLOWED);
    expect(received.at(-1)).toMatchObject({ proposal, status: 'verified', tenant: h.tenant });
    expectNoPrivateValues(JSON.stringify(received));
  });

  it('never breaks an operation when the sink throws synchronously', async () => {
    const errors: unknown[] = [];
    const h = createHarness({
      events: () => {
        throw new Error('sink down');
      },
      onEventSinkError: (error) => errors.push(error),
    });
    const result = await h.guard.run(h.refund, {
      tenant: h.tenant,
      input: refundArgs(),
      principal: PRINCIPAL,
    });
    expect(result).toMatchObject({ outcome: 'verified', status: 'verified' });
    expect(h.provider.calls.execute).toBe(1);
    expect(errors.length).toBe((await ledgerOf(h)).length);
    expect(errors[0]).toBeInstanceOf(Error);
  });

  it('never breaks an operation when the sink rejects', async () => {
    const errors: unknown[] = [];
    const h = createHarness({
      events: async () => {
        throw new Error('sink rejected');
      },
      onEventSinkError: (error) => errors.push(error),
    });
    const result = await h.guard.run(h.refund, {
      tenant: h.tenant,
      input: refundArgs(),
      principal: PRINCIPAL,
    });
    expect(result).toMatchObject({ outcome: 'verified', status: 'verified' });
    expect(h.provider.calls.execute).toBe(1);
    const count = (await ledgerOf(h)).length;
    await waitUntil(() => errors.length === count);
    expect((errors[0] as Error).message).toBe('sink rejected');
  });

  it('never breaks an operation when both the sink and the error handler throw synchronously', async () => {
    const h = createHarness({
      events: () => {
        throw new Error('sink down');
      },
      onEventSinkError: () => {
        throw new Error('handler down');
      },
    });
    const result = await h.guard.run(h.refund, {
      tenant: h.tenant,
      input: refundArgs(),
      principal: PRINCIPAL,
    });
    expect(result).toMatchObject({ outcome: 'verified', status: 'verified' });
  });

  // Regression: a rejecting sink whose error handler also throws must not leak an unhandled rejection.
  it('never raises an unhandled rejection when the sink rejects and the error handler throws', async () => {
    const unhandled: unknown[] = [];
    const saved = process.listeners('unhandledRejection');
    process.removeAllListeners('unhandledRejection');
    const listener = (reason: unknown) => void unhandled.push(reason);
    process.on('unhandledRejection', listener);
    try {
      const h = createHarness({
        events: async () => {
          throw new Error('sink rejected');
        },
        onEventSinkError: () => {
          throw new Error('handler down');
        },
      });
      const result = await h.guard.run(h.refund, {
        tenant: h.tenant,
        input: refundArgs(),
        principal: PRINCIPAL,
      });
      expect(result.outcome).toBe('verified');
      await new Promise<void>((resolve) => setTimeout(resolve, 20));
    } finally {
      process.off('unhandledRejection', listener);
      for (const saved_ of saved) process.on('unhandledRejection', saved_);
    }
    expect(unhandled).toEqual([]);
  });
});

describe('reads', () => {
  it('makes missing, other-tenant and unauthorised reads indistinguishable', async () => {
    const h = createHarness();
    const readError = (tenant: string, reader: string) =>
      h.guard.read(h.refund, { tenant, proposal: 'prop_0001', reader }).catch((e: unknown) => e);

    const missing = await readError(h.tenant, PRINCIPAL);
    const { proposal } = await prepareForApproval(h);
    expect(proposal).toBe('prop_0001');
    const otherTenant = await readError('tenant-b', PRINCIPAL);
    const unauthorised = await readError(h.tenant, 'someone-else');
    const otherAction = await h.guard
      .read(
        refundAction(h.provider, { type: { namespace: 'support', name: 'refund', version: 2 } }),
        {
          tenant: h.tenant,
          proposal,
          reader: PRINCIPAL,
        },
      )
      .catch((e: unknown) => e);

    const errors = [missing, otherTenant, unauthorised, otherAction];
    for (const error of errors) {
      expect(error).toBeInstanceOf(ProposalNotFoundError);
      const { code, message, data, name } = error as ProposalNotFoundError;
      expect({ code, message, data, name }).toEqual({
        code: 'proposal_not_found',
        message: 'Proposal "prop_0001" was not found',
        data: { proposal: 'prop_0001' },
        name: 'ProposalNotFoundError',
      });
    }
  });

  it('lets the principal, each declared authority and declared readers read input, preview and bindings', async () => {
    const h = createHarness();
    const refund = refundAction(h.provider, { readers: ['auditor'] });
    const { proposal } = await prepareForApproval(h, PRIVATE, refund);
    for (const reader of [PRINCIPAL, 'finance-a', 'finance-b', 'finance-c', 'auditor']) {
      const view = await h.guard.read(refund, { tenant: h.tenant, proposal, reader });
      expect(view).toMatchObject({
        proposal,
        tenant: h.tenant,
        status: 'awaiting_authority',
        principal: PRINCIPAL,
        input: privateArgs(),
        preview: { summary: `Refund ${PRIVATE.amount} EUR on ${PRIVATE.orderId}` },
        evidenceBindings: {
          tenant: h.tenant,
          proposal,
          actionType: 'support.refund@1',
          audience: 'sideguard',
        },
      });
    }
    const denied = await h.guard
      .read(h.refund, { tenant: h.tenant, proposal, reader: 'auditor' })
      .catch((e: unknown) => e);
    expect(denied).toBeInstanceOf(ProposalNotFoundError);
  });

  it('lets declared operators read (they attest about it) with the policy decision, and nobody undeclared', async () => {
    const h = createHarness();
    const refund = refundAction(h.provider, { operators: ['ops-oncall'] });
    const { proposal } = await prepareForApproval(h, PRIVATE, refund);
    const view = await h.guard.read(refund, { tenant: h.tenant, proposal, reader: 'ops-oncall' });
    expect(view).toMatchObject({
      proposal,
      input: privateArgs(),
      policy: { decision: 'require_approval', reasonCode: 'amount_over_auto_limit' },
    });
    const undeclared = await h.guard
      .read(h.refund, { tenant: h.tenant, proposal, reader: 'ops-oncall' })
      .catch((e: unknown) => e);
    expect(undeclared).toBeInstanceOf(ProposalNotFoundError);
  });
});

describe('erasure', () => {
  it('erases a verified proposal: tombstone, no snapshot, ledger still verifies', async () => {
    const h = createHarness();
    const proposal = await verifiedRefund(h);
    const erased = await h.guard.erase(h.refund, { tenant: h.tenant, proposal, reader: ERASER });
    expect(erased).toMatchObject({ outcome: 'erased', status: 'erased' });

    const record = await h.store.getProposal(h.tenant, proposal);
    expect(record?.status).toBe('erased');
    expect(record?.snapshot).toBeNull();
    expect(record?.receipts).toHaveLength(1);

    const view = await h.guard.read(h.refund, { tenant: h.tenant, proposal, reader: PRINCIPAL });
    expect(view).toMatchObject({ status: 'erased', outcome: 'erased' });
    expect('input' in view).toBe(false);
    expect('preview' in view).toBe(false);
    expect('evidenceBindings' in view).toBe(false);

    expect(await h.guard.verifyLedger({ tenant: h.tenant })).toMatchObject({ kind: 'valid' });
    const events = ofType(await ledgerOf(h, proposal), 'erased');
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ status: 'erased' });
    expect(events[0]?.data).toMatchObject({ previousStatus: 'verified', requestedBy: ERASER });

    const again = await h.guard.erase(h.refund, { tenant: h.tenant, proposal, reader: ERASER });
    expect(again).toMatchObject({
      outcome: 'erased',
      status: 'erased',
      reasonCode: 'already_erased',
      revision: erased.revision,
    });
    expect(ofType(await ledgerOf(h, proposal), 'erased')).toHaveLength(1);
  });

  it('refuses to execute an erased proposal and never calls the executor', async () => {
    const h = createHarness();
    const { proposal } = await prepareForApproval(h);
    await h.guard.erase(h.refund, { tenant: h.tenant, proposal, reader: ERASER });
    const executed = await h.guard.execute(h.refund, { tenant: h.tenant, proposal });
    expect(executed).toMatchObject({ outcome: 'erased', status: 'erased' });
    expect(h.provider.calls.execute).toBe(0);
  });

  it('blocks erasure while the proposal is executing and erases after it settles', async () => {
    const h = createHarness();
    h.provider.steps = ['hang_after_write'];
    const prepared = await h.guard.prepare(h.refund, {
      tenant: h.tenant,
      input: refundArgs(),
      principal: PRINCIPAL,
    });
    const executing = h.guard.execute(h.refund, { tenant: h.tenant, proposal: prepared.proposal });
    await waitUntil(() => h.provider.waiting.length === 1);

    const blocked = await h.guard.erase(h.refund, {
      tenant: h.tenant,
      proposal: prepared.proposal,
      reader: ERASER,
    });
    expect(blocked).toMatchObject({
      outcome: 'conflict',
      status: 'executing',
      reasonCode: 'erasure_blocked_in_flight',
    });
    expect((await h.store.getProposal(h.tenant, prepared.proposal))?.snapshot).not.toBeNull();

    h.provider.release();
    expect(await executing).toMatchObject({ outcome: 'verified', status: 'verified' });
    expect(h.provider.calls.execute).toBe(1);
    const erased = await h.guard.erase(h.refund, {
      tenant: h.tenant,
      proposal: prepared.proposal,
      reader: ERASER,
    });
    expect(erased.outcome).toBe('erased');
  });

  it.each([
    ['the proposing agent', PRINCIPAL],
    ['a declared approver', 'finance-a'],
    ['a declared reader', 'auditor'],
    ['someone else', 'someone-else'],
  ])('refuses %s as an eraser exactly like a missing proposal', async (_who, reader) => {
    const h = createHarness();
    const refund = refundAction(h.provider, { readers: ['auditor'] });
    const { proposal } = await h.guard.run(refund, {
      tenant: h.tenant,
      input: refundArgs(),
      principal: PRINCIPAL,
    });
    const error = await h.guard
      .erase(refund, { tenant: h.tenant, proposal, reader })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProposalNotFoundError);
    expect((error as ProposalNotFoundError).message).toBe(`Proposal "${proposal}" was not found`);
    const missing = await h.guard
      .erase(refund, { tenant: h.tenant, proposal: 'prop_missing', reader })
      .catch((e: unknown) => e);
    expect((missing as Error).message).toBe('Proposal "prop_missing" was not found');
    const record = await h.store.getProposal(h.tenant, proposal);
    expect(record?.status).toBe('verified');
    expect(record?.snapshot).not.toBeNull();
    expect(ofType(await ledgerOf(h, proposal), 'erased')).toHaveLength(0);
  });

  it('lets nobody erase an action that declares no erasers', async () => {
    const h = createHarness();
    const { erasers: _declared, ...config } = refundAction(h.provider).config;
    const refund = defineAction(config);
    const proposal = (
      await h.guard.run(refund, { tenant: h.tenant, input: refundArgs(), principal: PRINCIPAL })
    ).proposal;
    for (const reader of [PRINCIPAL, ERASER, 'finance-a']) {
      await expect(
        h.guard.erase(refund, { tenant: h.tenant, proposal, reader }),
      ).rejects.toBeInstanceOf(ProposalNotFoundError);
    }
  });

  it('lets a declared eraser erase without letting it read', async () => {
    const h = createHarness();
    const proposal = await verifiedRefund(h);
    await expect(
      h.guard.read(h.refund, { tenant: h.tenant, proposal, reader: ERASER }),
    ).rejects.toBeInstanceOf(ProposalNotFoundError);
    const erased = await h.guard.erase(h.refund, { tenant: h.tenant, proposal, reader: ERASER });
    expect(erased.outcome).toBe('erased');
  });

  it('refuses erasers that are not non-empty strings when the action is defined', () => {
    for (const erasers of [[''], [42], 'privacy-officer']) {
      expect(() => refundAction(createFakeProvider(), { erasers: erasers as never })).toThrowError(
        expect.objectContaining({ code: 'action_config_invalid' }),
      );
    }
  });
});

describe('a tampered store', () => {
  function tamperingStore(alter: (record: ProposalRecord) => ProposalRecord): {
    store: GuardStore;
    arm: () => void;
  } {
    const inner = createMemoryStore();
    let armed = false;
    const store: GuardStore = {
      ...inner,
      getProposal: async (tenant, proposal) => {
        const record = await inner.getProposal(tenant, proposal);
        return armed && record !== undefined ? alter(record) : record;
      },
    };
    return {
      store,
      arm: () => {
        armed = true;
      },
    };
  }

  const flipFirst = (text: string) => `${text[0] === 'A' ? 'B' : 'A'}${text.slice(1)}`;
  const flipHex = (text: string) => `${text[0] === '0' ? '1' : '0'}${text.slice(1)}`;

  it.each([
    [
      'the snapshot ciphertext',
      'envelope_integrity_failed',
      (r: ProposalRecord): ProposalRecord =>
        r.snapshot === null
          ? r
          : { ...r, snapshot: { ...r.snapshot, ciphertext: flipFirst(r.snapshot.ciphertext) } },
    ],
    [
      'the commitment value',
      'record_mac_invalid',
      (r: ProposalRecord): ProposalRecord => ({
        ...r,
        commitment: { ...r.commitment, value: flipHex(r.commitment.value) },
      }),
    ],
    [
      'the principal the commitment binds',
      'record_mac_invalid',
      (r: ProposalRecord): ProposalRecord => ({ ...r, principal: 'agent-evil' }),
    ],
  ])(
    'refuses to execute when %s was altered (%s), never calling the executor',
    async (_what, code, alter) => {
      const { store, arm } = tamperingStore(alter);
      const h = createHarness({ store });
      const prepared = await h.guard.prepare(h.refund, {
        tenant: h.tenant,
        input: refundArgs(),
        principal: PRINCIPAL,
      });
      expect(prepared.status).toBe('authorized');
      arm();
      const error = await h.guard
        .execute(h.refund, { tenant: h.tenant, proposal: prepared.proposal })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(StoreInvariantError);
      expect((error as StoreInvariantError).code).toBe(code);
      expect(h.provider.calls.execute).toBe(0);
      expect(ofType(await ledgerOf(h, prepared.proposal), 'commit_started')).toHaveLength(0);
    },
  );

  it("refuses to execute with another proposal's snapshot swapped in", async () => {
    const inner = createMemoryStore();
    let donor: ProposalRecord | undefined;
    const store: GuardStore = {
      ...inner,
      getProposal: async (tenant, proposal) => {
        const record = await inner.getProposal(tenant, proposal);
        return donor !== undefined && record !== undefined && record.proposal !== donor.proposal
          ? { ...record, snapshot: donor.snapshot }
          : record;
      },
    };
    const h = createHarness({ store });
    const target = await h.guard.prepare(h.refund, {
      tenant: h.tenant,
      input: refundArgs(),
      principal: PRINCIPAL,
    });
    const other = await h.guard.prepare(h.refund, {
      tenant: h.tenant,
      input: refundArgs({ orderId: 'ord_2002', amount: '99.00' }),
      principal: PRINCIPAL,
    });
    donor = await inner.getProposal(h.tenant, other.proposal);
    const error = await h.guard
      .execute(h.refund, { tenant: h.tenant, proposal: target.proposal })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreInvariantError);
    expect((error as StoreInvariantError).code).toBe('envelope_integrity_failed');
    expect(h.provider.calls.execute).toBe(0);
  });
});

describe('errors thrown by host functions', () => {
  it('reach the ledger and the event sink only as a code or class name, never as their message', async () => {
    const seen: unknown[] = [];
    const { guard, provider, tenant, store } = createHarness({
      events: (event) => void seen.push(event),
    });
    const secret = 'card of ada.lovelace@example.test declined';
    const refund = refundAction(provider, {
      execute: async () => {
        throw Object.assign(new Error(secret), { code: 'ECONNRESET' });
      },
      verify: async () => {
        throw new TypeError(secret);
      },
    });
    const result = await guard.run(refund, { tenant, input: refundArgs(), principal: 'agent' });
    expect(result.outcome).toBe('verification_pending');
    const ledger = JSON.stringify(await store.readLedger({ tenant }));
    expect(ledger).not.toContain('ada.lovelace');
    expect(ledger).toContain('executor_threw:ECONNRESET');
    expect(ledger).toContain('verifier_threw:TypeError');
    expect(JSON.stringify(seen)).not.toContain('ada.lovelace');
  });
});
