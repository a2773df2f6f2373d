import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  decide,
  type Harness,
  ledgerOf,
  PRINCIPAL,
  parseJsonl,
  prepareForApproval,
} from '../../test/support/evidence-helpers.js';
import { createHarness, ERASER, refundArgs } from '../../test/support/guard-harness.js';
import {
  createMemoryStore,
  GENESIS_HASH,
  type GuardStore,
  type LedgerEvent,
  parseLedgerEvent,
  replayProposal,
  verifyLedgerChain,
} from '../index.js';

const ALLOWED_PATH = [
  'contract_validated',
  'policy_decided',
  'idempotency_decided',
  'commit_started',
  'committed',
  'verification_observed',
];

/** A small but varied history: an allowed refund, an approved one, a rejected input. */
async function history(h: Harness): Promise<{ allowed: string; approved: string }> {
  const allowed = await h.guard.run(h.refund, {
    tenant: h.tenant,
    input: refundArgs(),
    principal: PRINCIPAL,
  });
  const { proposal: approved } = await prepareForApproval(h, { orderId: 'ord_2002' });
  await decide(h, approved, 'finance-a');
  await decide(h, approved, 'finance-b');
  await h.guard.execute(h.refund, { tenant: h.tenant, proposal: approved });
  await h.guard.prepare(h.refund, {
    tenant: h.tenant,
    input: refundArgs({ amount: 'twelve' }),
    principal: PRINCIPAL,
  });
  return { allowed: allowed.proposal, approved };
}

async function exported(h: Harness): Promise<Record<string, unknown>[]> {
  return parseJsonl(await h.guard.exportLedger({ tenant: h.tenant })) as Record<string, unknown>[];
}

const flipHex = (text: string) => `${text[0] === '0' ? '1' : '0'}${text.slice(1)}`;

type Edit = (line: Record<string, unknown>) => Record<string, unknown>;

const fieldEdits: readonly [string, Edit, string][] = [
  ['proposal', (l) => ({ ...l, proposal: 'prop_9999' }), 'hash_mismatch'],
  ['type', (l) => ({ ...l, type: l.type === 'expired' ? 'denied' : 'expired' }), 'hash_mismatch'],
  [
    'at',
    (l) => ({ ...l, at: new Date(Date.parse(String(l.at)) + 1).toISOString() }),
    'hash_mismatch',
  ],
  ['actionType', (l) => ({ ...l, actionType: 'support.refund@2' }), 'hash_mismatch'],
  [
    'status',
    (l) => ({ ...l, status: l.status === 'verified' ? 'denied' : 'verified' }),
    'hash_mismatch',
  ],
  ['revision', (l) => ({ ...l, revision: Number(l.revision ?? 0) + 7 }), 'hash_mismatch'],
  [
    'data',
    (l) => ({ ...l, data: { ...(l.data as object), reasonCode: 'approved_by_ceo' } }),
    'hash_mismatch',
  ],
  ['hash', (l) => ({ ...l, hash: flipHex(String(l.hash)) }), 'hash_mismatch'],
  ['sequence', (l) => ({ ...l, sequence: Number(l.sequence) + 1 }), 'sequence_gap'],
  [
    'previousHash',
    (l) => ({ ...l, previousHash: flipHex(String(l.previousHash)) }),
    'previous_hash_mismatch',
  ],
];

describe('JSONL export', () => {
  it('round-trips every line through parseLedgerEvent and verifies', async () => {
    const h = createHarness();
    await history(h);
    const text = await h.guard.exportLedger({ tenant: h.tenant });
    expect(text.endsWith('\n')).toBe(true);
    const lines = parseJsonl(text);
    const stored = await ledgerOf(h);
    expect(lines).toHaveLength(stored.length);
    const parsed = lines.map((line) => parseLedgerEvent(line));
    for (const event of parsed) expect(typeof event).toBe('object');
    expect(parsed).toEqual(stored);
    expect(verifyLedgerChain(lines)).toEqual({
      kind: 'valid',
      count: stored.length,
      head: await h.store.ledgerHead(h.tenant),
    });
    expect(await h.guard.verifyLedger({ tenant: h.tenant })).toMatchObject({
      kind: 'valid',
      count: stored.length,
    });
    expect(stored[0]?.previousHash).toBe(GENESIS_HASH);
    expect(stored.map((e) => e.sequence)).toEqual(stored.map((_, i) => i + 1));
  });
});

describe('tamper detection', () => {
  it.each(fieldEdits)(
    'detects an edited %s at the edited index (%s)',
    async (_field, edit, reason) => {
      const h = createHarness();
      await history(h);
      const lines = await exported(h);
      for (const index of [0, 3, lines.length - 1]) {
        const tampered = lines.map((line, i) => (i === index ? edit(line) : line));
        const verdict = verifyLedgerChain(tampered);
        expect(verdict).toMatchObject({ kind: 'invalid', index, reason });
        if (verdict.kind === 'invalid') expect(verdict.message).toContain(`entry ${index + 1}`);
      }
    },
  );

  it('detects an edited tenant at the edited index', async () => {
    const h = createHarness();
    await history(h);
    const lines = await exported(h);
    const tamperedFirst = lines.map((l, i) => (i === 0 ? { ...l, tenant: 'tenant-b' } : l));
    expect(verifyLedgerChain(tamperedFirst)).toMatchObject({
      kind: 'invalid',
      index: 0,
      reason: 'hash_mismatch',
    });
    const tamperedLater = lines.map((l, i) => (i === 4 ? { ...l, tenant: 'tenant-b' } : l));
    expect(verifyLedgerChain(tamperedLater)).toMatchObject({
      kind: 'invalid',
      index: 4,
      reason: 'tenant_mismatch',
    });
  });

  it('detects any edit of any field at its index (property)', async () => {
    const h = createHarness();
    await history(h);
    const lines = await exported(h);
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: lines.length - 1 }),
        fc.integer({ min: 0, max: fieldEdits.length - 1 }),
        (index, which) => {
          const edit = fieldEdits[which]![1];
          const tampered = lines.map((line, i) => (i === index ? edit(line) : line));
          const verdict = verifyLedgerChain(tampered);
          expect(verdict.kind).toBe('invalid');
          if (verdict.kind === 'invalid') expect(verdict.index).toBe(index);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('reports a deleted line as a sequence gap at the index of the line that follows it', async () => {
    const h = createHarness();
    await history(h);
    const lines = await exported(h);
    for (const index of [0, 5, lines.length - 2]) {
      const tampered = lines.filter((_, i) => i !== index);
      expect(verifyLedgerChain(tampered)).toMatchObject({
        kind: 'invalid',
        index,
        sequence: index + 2,
        reason: 'sequence_gap',
      });
    }
  });

  it('reports two swapped lines at the first swapped index', async () => {
    const h = createHarness();
    await history(h);
    const lines = await exported(h);
    for (const [a, b] of [
      [2, 3],
      [1, 7],
      [0, lines.length - 1],
    ] as const) {
      const tampered = [...lines];
      [tampered[a], tampered[b]] = [lines[b]!, lines[a]!];
      expect(verifyLedgerChain(tampered)).toMatchObject({
        kind: 'invalid',
        index: a,
        reason: 'sequence_gap',
      });
    }
  });

  it('reports a malformed line as malformed at its index', async () => {
    const h = createHarness();
    await history(h);
    const text = await h.guard.exportLedger({ tenant: h.tenant });
    const rawLines = text.split('\n').filter((line) => line !== '');
    const variants = [
      'this is not json',
      '[1,2,3]',
      JSON.stringify({ tenant: 'tenant-a' }),
      JSON.stringify({ ...JSON.parse(rawLines[2]!), type: 'approved_by_magic' }),
      JSON.stringify({ ...JSON.parse(rawLines[2]!), data: null }),
      JSON.stringify({ ...JSON.parse(rawLines[2]!), hash: 'not-hex' }),
    ];
    for (const variant of variants) {
      const tampered = rawLines.map((line, i) => (i === 2 ? variant : line)).join('\n');
      expect(verifyLedgerChain(parseJsonl(tampered))).toMatchObject({
        kind: 'invalid',
        index: 2,
        reason: 'malformed',
      });
    }
  });

  // Regression (I7): an added top-level field was once accepted because it was not hashed.
  it('detects a line with an added top-level field', async () => {
    const h = createHarness();
    await history(h);
    const lines = await exported(h);
    const tampered = lines.map((l, i) => (i === 3 ? { ...l, approvedBy: 'ceo' } : l));
    expect(verifyLedgerChain(tampered)).toMatchObject({ kind: 'invalid', index: 3 });
  });

  // Regression (I7): removing the newest entries was once undetected; the store's head now anchors the end.
  it('detects that the newest ledger entry was removed from the store', async () => {
    const inner = createMemoryStore();
    let dropNewest = false;
    const store: GuardStore = {
      ...inner,
      readLedger: async (query) => {
        const events = await inner.readLedger(query);
        return dropNewest ? events.slice(0, -1) : events;
      },
    };
    const h = createHarness({ store });
    await history(h);
    expect((await h.guard.verifyLedger({ tenant: h.tenant })).kind).toBe('valid');
    dropNewest = true;
    expect((await h.guard.verifyLedger({ tenant: h.tenant })).kind).toBe('invalid');
  });
});

describe('retention', () => {
  it('keeps the chain verifiable from the checkpoint after truncateLedger', async () => {
    const h = createHarness();
    await history(h);
    const before = await ledgerOf(h);
    const head = await h.store.ledgerHead(h.tenant);
    await h.store.truncateLedger(h.tenant, 5);

    const checkpoint = await h.store.ledgerCheckpoint(h.tenant);
    expect(checkpoint).toEqual({ sequence: 5, hash: before[4]?.hash });
    expect(await h.guard.verifyLedger({ tenant: h.tenant })).toEqual({
      kind: 'valid',
      count: before.length - 5,
      head,
    });

    const lines = await exported(h);
    expect(lines[0]?.sequence).toBe(6);
    expect(verifyLedgerChain(lines)).toMatchObject({
      kind: 'invalid',
      index: 0,
      reason: 'sequence_gap',
    });
    if (checkpoint === undefined) throw new Error('no checkpoint');
    expect(verifyLedgerChain(lines, { from: checkpoint })).toMatchObject({ kind: 'valid' });
    expect(
      verifyLedgerChain(lines, { from: { sequence: 5, hash: flipHex(checkpoint.hash) } }),
    ).toMatchObject({ kind: 'invalid', index: 0, reason: 'previous_hash_mismatch' });
    const edited = lines.map((l, i) => (i === 1 ? { ...l, at: '2030-01-01T00:00:00.000Z' } : l));
    expect(verifyLedgerChain(edited, { from: checkpoint })).toMatchObject({
      kind: 'invalid',
      index: 1,
      reason: 'hash_mismatch',
    });

    await h.guard.run(h.refund, {
      tenant: h.tenant,
      input: refundArgs({ orderId: 'ord_3003' }),
      principal: PRINCIPAL,
    });
    const after = await h.guard.verifyLedger({ tenant: h.tenant });
    expect(after).toMatchObject({ kind: 'valid', count: before.length - 5 + 6 });
  });
});

describe('replay', () => {
  it('reproduces the decision path of an allowed refund', async () => {
    const h = createHarness();
    const { allowed } = await history(h);
    const replay = await h.guard.replay({ tenant: h.tenant, proposal: allowed });
    expect(replay).toMatchObject({
      proposal: allowed,
      tenant: h.tenant,
      actionType: 'support.refund@1',
      status: 'verified',
    });
    expect(replay?.decisionPath.join(' -> ')).toBe(ALLOWED_PATH.join(' -> '));

    const fromJsonl = replayProposal((await exported(h)) as unknown as LedgerEvent[], allowed);
    expect(fromJsonl?.decisionPath).toEqual(ALLOWED_PATH);
  });

  it('reproduces the approval path with each authority_recorded', async () => {
    const h = createHarness();
    const { approved } = await history(h);
    const replay = replayProposal(await ledgerOf(h), approved);
    expect(replay?.decisionPath).toEqual([
      'contract_validated',
      'policy_decided',
      'idempotency_decided',
      'authority_recorded',
      'authority_recorded',
      'authority_satisfied',
      ...ALLOWED_PATH.slice(3),
    ]);
    expect(replay?.status).toBe('verified');
    const recorded = replay?.events.filter((e) => e.type === 'authority_recorded') ?? [];
    expect(recorded.map((e) => e.data.authority)).toEqual(['finance-a', 'finance-b']);
    expect(replay?.events.map((e) => e.revision).filter((r) => r !== null)).toEqual([
      1, 2, 3, 4, 5,
    ]);
  });

  it('replays a rejected contract as a single contract_rejected and unknown ids as undefined', async () => {
    const h = createHarness();
    await history(h);
    const events = await ledgerOf(h);
    const rejected = events.find((e) => e.type === 'contract_rejected');
    expect(rejected?.proposal).toEqual(expect.any(String));
    const replay = replayProposal(events, rejected!.proposal!);
    expect(replay).toMatchObject({ decisionPath: ['contract_rejected'], status: null });
    expect(replayProposal(events, 'prop_9999')).toBeUndefined();
    expect(await h.guard.replay({ tenant: h.tenant, proposal: 'prop_9999' })).toBeUndefined();
  });
});

describe('tenants', () => {
  it('keeps an independent chain per tenant', async () => {
    const h = createHarness();
    const tenants = ['tenant-a', 'tenant-b', 'tenant-a', 'tenant-b', 'tenant-b'];
    for (const [attempt, tenant] of tenants.entries()) {
      await h.guard.run(h.refund, {
        tenant,
        input: refundArgs({ requestId: `req-${attempt}` }),
        principal: PRINCIPAL,
      });
    }
    const a = await ledgerOf(h, undefined, 'tenant-a');
    const b = await ledgerOf(h, undefined, 'tenant-b');
    for (const chain of [a, b]) {
      expect(chain[0]).toMatchObject({ sequence: 1, previousHash: GENESIS_HASH });
      expect(chain.map((e) => e.sequence)).toEqual(chain.map((_, i) => i + 1));
      expect(verifyLedgerChain(chain).kind).toBe('valid');
    }
    expect(new Set(a.map((e) => e.tenant))).toEqual(new Set(['tenant-a']));
    expect(new Set(b.map((e) => e.tenant))).toEqual(new Set(['tenant-b']));
    // Each tenant saw one new effect and then one replay.
    expect(a.filter((e) => e.type === 'retry_resolved')).toHaveLength(1);
    expect(b.filter((e) => e.type === 'retry_resolved')).toHaveLength(2);
    expect(verifyLedgerChain([...a, ...b])).toMatchObject({
      kind: 'invalid',
      index: a.length,
      reason: 'tenant_mismatch',
    });
    expect((await h.guard.verifyLedger({ tenant: 'tenant-a' })).kind).toBe('valid');
    expect((await h.guard.verifyLedger({ tenant: 'tenant-b' })).kind).toBe('valid');
    expect(await h.guard.exportLedger({ tenant: 'tenant-c' })).toBe('');
    expect(await h.guard.verifyLedger({ tenant: 'tenant-c' })).toEqual({
      kind: 'valid',
      count: 0,
      head: undefined,
    });
  });
});

describe('ledger property', () => {
  type Op =
    | { kind: 'run' | 'prepare'; order: number; cents: number }
    | { kind: 'approve'; target: number; authority: string; decision: 'approve' | 'reject' }
    | { kind: 'execute' | 'erase'; target: number }
    | { kind: 'advance'; ms: number };

  const op: fc.Arbitrary<Op> = fc.oneof(
    fc.record({
      kind: fc.constantFrom('run' as const, 'prepare' as const),
      order: fc.integer({ min: 1, max: 4 }),
      // Up to 1500.00: allowed, approval or blocked; 0 makes a malformed amount.
      cents: fc.integer({ min: 0, max: 150_000 }),
    }),
    fc.record({
      kind: fc.constant('approve' as const),
      target: fc.nat(),
      authority: fc.constantFrom('finance-a', 'finance-b', 'finance-c', 'mallory'),
      decision: fc.oneof(
        { arbitrary: fc.constant('approve' as const), weight: 4 },
        { arbitrary: fc.constant('reject' as const), weight: 1 },
      ),
    }),
    fc.record({ kind: fc.constantFrom('execute' as const, 'erase' as const), target: fc.nat() }),
    fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 400_000 }) }),
  );

  const amountOf = (cents: number) =>
    cents === 0 ? '1.5' : `${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, '0')}`;

  async function apply(h: Harness, proposals: string[], step: Op): Promise<void> {
    const pick = (target: number) => proposals[target % Math.max(proposals.length, 1)];
    switch (step.kind) {
      case 'run':
      case 'prepare': {
        const input = refundArgs({ orderId: `ord_${step.order}`, amount: amountOf(step.cents) });
        const result = await h.guard[step.kind](h.refund, {
          tenant: h.tenant,
          input,
          principal: PRINCIPAL,
        });
        if (result.status !== null) proposals.push(result.proposal);
        return;
      }
      case 'approve': {
        const proposal = pick(step.target);
        if (proposal === undefined) return;
        const record = await h.store.getProposal(h.tenant, proposal);
        if (record?.snapshot === null) return;
        await decide(h, proposal, step.authority, { decision: step.decision });
        return;
      }
      case 'execute': {
        const proposal = pick(step.target);
        if (proposal !== undefined) await h.guard.execute(h.refund, { tenant: h.tenant, proposal });
        return;
      }
      case 'erase': {
        const proposal = pick(step.target);
        if (proposal !== undefined) {
          await h.guard.erase(h.refund, { tenant: h.tenant, proposal, reader: ERASER });
        }
        return;
      }
      case 'advance':
        h.clock.advance(step.ms);
        return;
    }
  }

  it('keeps the ledger verifiable and gapless, and its last status equal to the store, for any operations', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(op, { minLength: 1, maxLength: 3 }), { maxLength: 8 }),
        async (batches) => {
          const h = createHarness();
          const proposals: string[] = [];
          for (const batch of batches) {
            // Operations in a batch run concurrently; the chain must stay linear.
            await Promise.all(batch.map((step) => apply(h, proposals, step)));
          }
          const events = await ledgerOf(h);
          expect(events.map((e) => e.sequence)).toEqual(events.map((_, i) => i + 1));
          expect(await h.guard.verifyLedger({ tenant: h.tenant })).toMatchObject({
            kind: 'valid',
            count: events.length,
          });
          expect(
            verifyLedgerChain(parseJsonl(await h.guard.exportLedger({ tenant: h.tenant }))),
          ).toMatchObject({ kind: 'valid', count: events.length });
          for (const proposal of new Set(proposals)) {
            const record = await h.store.getProposal(h.tenant, proposal);
            expect(replayProposal(events, proposal)?.status).toBe(record?.status);
          }
        },
      ),
      { numRuns: 80 },
    );
  });
});
