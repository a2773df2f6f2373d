/**
 * The store is not trusted for authority (issue 8, window 7). Someone who can write to the
 * database edits it directly — SQL on the SQLite file and the PostgreSQL schema, an overlay on
 * the memory store — and the guard must refuse to act: no executor call, a
 * `StoreInvariantError` naming what was altered, and a `store_tampering_detected` event in a
 * ledger that still verifies.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { evidenceDigest } from '../../src/core/evidence.js';
import {
  type AuthorityEvidenceRecord,
  buildAuthorityEvidence,
  createMemoryStore,
  type GuardStore,
  type ProposalRecord,
  StoreInvariantError,
} from '../../src/index.js';
import { createPostgresStore } from '../../src/stores/postgres/postgres-store.js';
import { createSqliteStore } from '../../src/stores/sqlite/sqlite-store.js';
import { APPROVAL_AMOUNT, decide, ledgerOf, PRINCIPAL } from '../support/evidence-helpers.js';
import { createHarness, ERASER, refundAction, refundArgs } from '../support/guard-harness.js';
import { freshTestSchema, postgresTestUrl } from '../support/postgres.js';

/** Direct access to what a store holds, bypassing Sideguard (what an attacker with DB access has). */
interface Tamperable {
  readonly store: GuardStore;
  /** The stored record exactly as it sits in the database. */
  readRow(tenant: string, proposal: string): Promise<ProposalRecord>;
  /** Overwrites the row: status and revision columns and the record JSON. */
  writeRow(record: ProposalRecord): Promise<void>;
  insertEvidence(row: AuthorityEvidenceRecord): Promise<void>;
  /** Undefined when this store cannot have its claim deleted from outside (memory). */
  readonly deleteClaim: ((tenant: string, effectScope: string) => Promise<void>) | undefined;
  close(): Promise<void>;
}

/** The memory store has no database to edit: an overlay on its reads plays the attacker. */
function tamperableMemory(): Tamperable {
  const inner = createMemoryStore();
  const rows = new Map<string, ProposalRecord>();
  const extraEvidence: AuthorityEvidenceRecord[] = [];
  const key = (tenant: string, proposal: string) => `${tenant}\u0000${proposal}`;
  const overlay = (record: ProposalRecord | undefined) =>
    record === undefined ? undefined : (rows.get(key(record.tenant, record.proposal)) ?? record);
  const store: GuardStore = {
    ...inner,
    getProposal: async (tenant, proposal) => overlay(await inner.getProposal(tenant, proposal)),
    listProposalsByEffect: async (tenant, scope, limit) =>
      (await inner.listProposalsByEffect(tenant, scope, limit)).map((r) => overlay(r)!),
    listEvidence: async (tenant, proposal) => [
      ...(await inner.listEvidence(tenant, proposal)),
      ...extraEvidence.filter((row) => row.tenant === tenant && row.proposal === proposal),
    ],
    commit: async (write) => {
      const target = write.proposal?.record;
      const edited =
        target === undefined ? undefined : rows.get(key(write.tenant, target.proposal));
      // A compare-and-set sees the edited row, as it would in a database.
      if (write.proposal?.kind === 'update' && edited !== undefined) {
        if (
          edited.revision !== write.proposal.expectedRevision ||
          edited.status !== write.proposal.expectedStatus
        ) {
          return { kind: 'revision_conflict', current: edited };
        }
      }
      return inner.commit(write);
    },
  };
  return {
    store,
    readRow: async (tenant, proposal) => (await store.getProposal(tenant, proposal))!,
    writeRow: async (record) => {
      rows.set(key(record.tenant, record.proposal), structuredClone(record));
    },
    insertEvidence: async (row) => {
      extraEvidence.push(row);
    },
    deleteClaim: undefined,
    close: () => inner.close(),
  };
}

const directory = mkdtempSync(join(tmpdir(), 'sideguard-tampering-'));
let files = 0;

function tamperableSqlite(): Tamperable {
  files += 1;
  const path = join(directory, `store-${files}.db`);
  const store = createSqliteStore({ path });
  const db = new Database(path);
  db.pragma('busy_timeout = 5000');
  return {
    store,
    readRow: async (tenant, proposal) => {
      const row = db
        .prepare('SELECT record FROM proposals WHERE tenant = ? AND proposal = ?')
        .get(tenant, proposal) as { record: string };
      return JSON.parse(row.record) as ProposalRecord;
    },
    writeRow: async (record) => {
      db.prepare(
        'UPDATE proposals SET revision = ?, status = ?, record = ? WHERE tenant = ? AND proposal = ?',
      ).run(record.revision, record.status, JSON.stringify(record), record.tenant, record.proposal);
    },
    insertEvidence: async (row) => {
      db.prepare(
        'INSERT INTO authority_evidence (tenant, proposal, evidence_digest, record) VALUES (?, ?, ?, ?)',
      ).run(row.tenant, row.proposal, row.evidenceDigest, JSON.stringify(row));
    },
    deleteClaim: async (tenant, effectScope) => {
      db.prepare('DELETE FROM effect_claims WHERE tenant = ? AND effect_scope = ?').run(
        tenant,
        effectScope,
      );
    },
    close: async () => {
      db.close();
      await store.close();
    },
  };
}

const url = await postgresTestUrl();
const schema = url === undefined ? undefined : freshTestSchema(url, 'core_b_tampering');
afterAll(async () => {
  await schema?.drop();
  rmSync(directory, { recursive: true, force: true });
});

async function tamperablePostgres(): Promise<Tamperable> {
  if (url === undefined || schema === undefined) throw new Error('PostgreSQL is not configured');
  const store = await createPostgresStore({ connectionString: url, schema: schema.schema });
  const client = new pg.Client({ connectionString: url });
  client.on('error', () => undefined);
  await client.connect();
  const s = `"${schema.schema}"`;
  return {
    store,
    readRow: async (tenant, proposal) => {
      const result = await client.query<{ record: string }>(
        `SELECT record FROM ${s}.proposals WHERE tenant = $1 AND proposal = $2`,
        [tenant, proposal],
      );
      return JSON.parse(result.rows[0]!.record) as ProposalRecord;
    },
    writeRow: async (record) => {
      await client.query(
        `UPDATE ${s}.proposals SET revision = $1, status = $2, record = $3 WHERE tenant = $4 AND proposal = $5`,
        [record.revision, record.status, JSON.stringify(record), record.tenant, record.proposal],
      );
    },
    insertEvidence: async (row) => {
      await client.query(
        `INSERT INTO ${s}.authority_evidence (tenant, proposal, evidence_digest, record) VALUES ($1, $2, $3, $4)`,
        [row.tenant, row.proposal, row.evidenceDigest, JSON.stringify(row)],
      );
    },
    deleteClaim: async (tenant, effectScope) => {
      await client.query(`DELETE FROM ${s}.effect_claims WHERE tenant = $1 AND effect_scope = $2`, [
        tenant,
        effectScope,
      ]);
    },
    close: async () => {
      await client.end();
      await store.close();
    },
  };
}

type OpenTamperable = () => Promise<Tamperable> | Tamperable;
const STORES: readonly (readonly [string, OpenTamperable])[] = [
  ['memory', tamperableMemory],
  ['sqlite', tamperableSqlite],
  ...(url === undefined ? [] : [['postgres', tamperablePostgres] as const]),
];

let tenants = 0;

/** A guard over a tamperable store, with a tenant of its own (the PostgreSQL schema is shared). */
async function setUp(
  open: () => Promise<Tamperable> | Tamperable,
  wrap: (store: GuardStore) => GuardStore = (store) => store,
) {
  const tamper = await open();
  const h = { ...createHarness({ store: wrap(tamper.store) }), tenant: `tenant-${++tenants}` };
  return { h, tamper };
}

/**
 * Holds the first two effect lookups until both were made, so two prepares of one effect both
 * see it free and both create a proposal: the race the effect claim exists for.
 */
function racingLookups(store: GuardStore): GuardStore {
  const held: (() => void)[] = [];
  let racing = true;
  return {
    kind: store.kind,
    commit: (write) => store.commit(write),
    getProposal: (tenant, proposal) => store.getProposal(tenant, proposal),
    listProposalsByEffect: async (tenant, scope, limit) => {
      const found = await store.listProposalsByEffect(tenant, scope, limit);
      if (racing) {
        await new Promise<void>((resolve) => {
          held.push(resolve);
          if (held.length === 2) {
            racing = false;
            for (const release of held) release();
          }
        });
      }
      return found;
    },
    getEffectClaim: (tenant, scope) => store.getEffectClaim(tenant, scope),
    listProposals: (query) => store.listProposals(query),
    listEvidence: (tenant, proposal) => store.listEvidence(tenant, proposal),
    listDue: (query) => store.listDue(query),
    readLedger: (query) => store.readLedger(query),
    ledgerHead: (tenant) => store.ledgerHead(tenant),
    truncateLedger: (tenant, through) => store.truncateLedger(tenant, through),
    ledgerCheckpoint: (tenant) => store.ledgerCheckpoint(tenant),
    close: () => store.close(),
  };
}

type Setup = Awaited<ReturnType<typeof setUp>>;

/** The guard refused to act: the error, no provider write, and the ledger says why. */
async function expectRefused(
  { h, tamper }: Setup,
  attempt: Promise<unknown>,
  code: string,
  writesBefore: number,
): Promise<void> {
  const error = await attempt.then(
    () => undefined,
    (e: unknown) => e,
  );
  try {
    expect(error).toBeInstanceOf(StoreInvariantError);
    expect((error as StoreInvariantError).code).toBe(code);
    expect((error as Error).message).toMatch(/outside Sideguard/);
    expect((error as Error).message).toMatch(/Nothing was executed/);
    expect(h.provider.writes.size).toBe(writesBefore);
    const detected = (await ledgerOf(h)).filter((e) => e.type === 'store_tampering_detected');
    expect(detected.map((e) => e.data.reasonCode)).toContain(code);
    expect((await h.guard.verifyLedger({ tenant: h.tenant })).kind).toBe('valid');
  } finally {
    await tamper.close();
  }
}

/** Prepares the harness refund for `amount` and checks the status the policy gave it. */
async function prepareRefund(h: Setup['h'], amount: string, status: string, requestId = 'req-1') {
  const prepared = await h.guard.prepare(h.refund, {
    tenant: h.tenant,
    input: refundArgs({ amount, requestId }),
    principal: PRINCIPAL,
  });
  expect(prepared.status).toBe(status);
  return prepared.proposal;
}

const executing = (h: Setup['h'], proposal: string) =>
  h.guard.execute(h.refund, { tenant: h.tenant, proposal });

/**
 * Inserts approval rows that look exactly like the ones an approver's session records: the
 * attacker builds them from the bindings `read` shows, as the host would.
 */
async function insertApprovals(
  setup: Setup,
  proposal: string,
  authorities: readonly string[],
): Promise<void> {
  const { h, tamper } = setup;
  const view = await h.guard.read(h.refund, { tenant: h.tenant, proposal, reader: PRINCIPAL });
  for (const authority of authorities) {
    const evidence = buildAuthorityEvidence(view.evidenceBindings!, {
      authority,
      decision: 'approve',
      channelAssurance: 'high',
      issuedAt: h.clock.now(),
    });
    await tamper.insertEvidence({
      tenant: h.tenant,
      proposal,
      evidenceDigest: evidenceDigest(evidence),
      authority,
      decision: 'approve',
      channelAssurance: 'high',
      issuedAtMs: Date.parse(evidence.issuedAt),
      expiresAtMs: Date.parse(evidence.expiresAt),
      recordedAtMs: h.clock.now(),
      evidence: evidence as unknown as AuthorityEvidenceRecord['evidence'],
    });
  }
}

describe.each(STORES)('a %s store edited outside Sideguard', (_name, open) => {
  it('refuses to execute a verified proposal rolled back to an older revision of its record', async () => {
    const setup = await setUp(open);
    const { h, tamper } = setup;
    const proposal = await prepareRefund(h, '42.00', 'authorized');
    const authorized = await tamper.readRow(h.tenant, proposal);
    expect((await executing(h, proposal)).status).toBe('verified');
    expect(h.provider.writes.size).toBe(1);

    await tamper.writeRow(authorized);
    await expectRefused(setup, executing(h, proposal), 'record_rolled_back', 1);
  });

  it('refuses to execute a proposal awaiting approval whose policy decision was flipped to allow', async () => {
    const setup = await setUp(open);
    const { h, tamper } = setup;
    const proposal = await prepareRefund(h, APPROVAL_AMOUNT, 'awaiting_authority');
    const row = await tamper.readRow(h.tenant, proposal);
    await tamper.writeRow({
      ...row,
      status: 'authorized',
      policy: { decision: 'allow', reasonCode: 'within_auto_limit' },
    });
    await expectRefused(setup, executing(h, proposal), 'record_mac_invalid', 0);
  });

  it('refuses to execute a blocked proposal whose status column and JSON were set to authorized', async () => {
    const setup = await setUp(open);
    const { h, tamper } = setup;
    const proposal = await prepareRefund(h, '5000.00', 'blocked');
    const row = await tamper.readRow(h.tenant, proposal);
    await tamper.writeRow({ ...row, status: 'authorized' });
    await expectRefused(setup, executing(h, proposal), 'record_mac_invalid', 0);
  });

  it('refuses to execute when approval rows were inserted to revive approvals that lapsed', async () => {
    const setup = await setUp(open);
    const { h } = setup;
    const proposal = await prepareRefund(h, APPROVAL_AMOUNT, 'awaiting_authority');
    await decide(h, proposal, 'finance-a', { validForMs: 60_000 });
    expect((await decide(h, proposal, 'finance-b', { validForMs: 60_000 })).status).toBe(
      'authorized',
    );
    h.clock.advance(120_000);
    await insertApprovals(setup, proposal, ['finance-a', 'finance-c']);
    await expectRefused(setup, executing(h, proposal), 'evidence_altered', 0);
  });

  it('refuses to record authority once an evidence row was inserted behind its back', async () => {
    const setup = await setUp(open);
    const { h } = setup;
    const proposal = await prepareRefund(h, APPROVAL_AMOUNT, 'awaiting_authority');
    await decide(h, proposal, 'finance-a');
    await insertApprovals(setup, proposal, ['finance-c']);
    await expectRefused(setup, decide(h, proposal, 'finance-b'), 'evidence_altered', 0);
  });

  it('refuses to execute a record whose MAC was removed (as a 0.1 record has none)', async () => {
    const setup = await setUp(open);
    const { h, tamper } = setup;
    const proposal = await prepareRefund(h, '42.00', 'authorized');
    const { recordMac: _removed, ...row } = await tamper.readRow(h.tenant, proposal);
    await tamper.writeRow(row as ProposalRecord);
    await expectRefused(setup, executing(h, proposal), 'record_unsealed', 0);
  });

  it('refuses to execute the second of two raced proposals after the claim row was deleted', async (context) => {
    const setup = await setUp(open, racingLookups);
    const { h, tamper } = setup;
    if (tamper.deleteClaim === undefined) {
      await tamper.close();
      context.skip('the memory store keeps its claims out of reach: there is nothing to delete');
      return;
    }
    const [a, b] = await Promise.all([
      prepareRefund(h, '42.00', 'authorized', 'r-a'),
      prepareRefund(h, '42.00', 'authorized', 'r-b'),
    ]);
    expect(a).not.toBe(b);
    expect((await executing(h, a)).status).toBe('verified');
    const row = await tamper.readRow(h.tenant, a);
    await tamper.deleteClaim(h.tenant, row.effectScope);
    await expectRefused(setup, executing(h, b), 'effect_claim_altered', 1);
  });
});

describe.each(STORES)('run on a %s store reading the effect once (decision 125)', (_name, open) => {
  it("refuses run's combined claim when an erased proposal holds the effect by its record but its claim row was deleted", async (context) => {
    const setup = await setUp(open);
    const { h, tamper } = setup;
    if (tamper.deleteClaim === undefined) {
      await tamper.close();
      context.skip('the memory store keeps its claims out of reach: there is nothing to delete');
      return;
    }
    // Without a drift check, `run` inserts and claims in one commit, its claim check taking
    // what `prepare` listed for the effect.
    const direct = refundAction(h.provider, { resolve: undefined } as never);
    const run = (requestId: string) =>
      h.guard.run(direct, {
        tenant: h.tenant,
        input: refundArgs({ amount: '42.00', requestId }),
        principal: PRINCIPAL,
      });
    const first = await run('r-1');
    expect(first.outcome).toBe('verified');
    // Erased, the proposal no longer answers for its effect, but its receipt keeps the claim.
    const erased = await h.guard.erase(direct, {
      tenant: h.tenant,
      proposal: first.proposal,
      reader: ERASER,
    });
    expect(erased.status).toBe('erased');
    const row = await tamper.readRow(h.tenant, first.proposal);
    await tamper.deleteClaim(h.tenant, row.effectScope);
    await expectRefused(setup, run('r-2'), 'effect_claim_altered', 1);
  });
});

describe.each(STORES)('a %s store nobody tampered with', (_name, open) => {
  it('never mistakes approvals, reads and executes racing each other for tampering', async () => {
    const { h, tamper } = await setUp(open);
    try {
      const proposal = await prepareRefund(h, APPROVAL_AMOUNT, 'awaiting_authority');
      const outcomes = await Promise.allSettled([
        decide(h, proposal, 'finance-a'),
        executing(h, proposal),
        decide(h, proposal, 'finance-b'),
        h.guard.read(h.refund, { tenant: h.tenant, proposal, reader: PRINCIPAL }),
        executing(h, proposal),
        decide(h, proposal, 'finance-c'),
        executing(h, proposal),
      ]);
      expect(outcomes.filter((o) => o.status === 'rejected')).toEqual([]);
      const final = await executing(h, proposal);
      expect(['verified', 'replayed']).toContain(final.outcome);
      expect(h.provider.writes.size).toBe(1);
      const detected = (await ledgerOf(h)).filter((e) => e.type === 'store_tampering_detected');
      expect(detected).toEqual([]);
    } finally {
      await tamper.close();
    }
  });
});
