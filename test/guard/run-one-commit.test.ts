/**
 * `run`'s insert and claim in one commit (decision 124): the ledger reads as before (insert
 * events, then `commit_started` at revision 2), and when the combined commit cannot be made — the
 * effect claimed by a racing proposal — `run` falls back to the insert-then-claim path: a storm
 * of 64 callers on one effect still makes one execution and gives every caller a definite answer.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createMemoryStore, type GuardStore, type StoreCommit } from '../../src/index.js';
import { createPostgresStore } from '../../src/stores/postgres/index.js';
import { createSqliteStore } from '../../src/stores/sqlite/index.js';
import {
  createHarness,
  type FakeProvider,
  refundAction,
  refundArgs,
} from '../support/guard-harness.js';
import { freshTestSchema, postgresTestUrl, type TestSchema } from '../support/postgres.js';

const principal = 'agent-svc';

/** The harness's refund without its drift check: `run` may insert it already claimed. */
const direct = (provider: FakeProvider) => refundAction(provider, { resolve: undefined } as never);

/**
 * `store` with every commit's event types recorded, one line per commit, and every call in
 * `calls` (commits as `commit`, reads by their name).
 */
function counted(store: GuardStore) {
  const commits: string[] = [];
  const calls: string[] = [];
  const commit = (write: StoreCommit) => {
    commits.push(write.events.map((event) => event.type).join('+'));
    return store.commit(write);
  };
  return {
    store: new Proxy(store, {
      get: (target, key) => {
        if (key === 'commit') {
          return (write: StoreCommit) => {
            calls.push('commit');
            return commit(write);
          };
        }
        const member = Reflect.get(target, key);
        if (typeof member !== 'function' || key === 'close' || key === 'sync') return member;
        return (...args: unknown[]) => {
          calls.push(String(key));
          return member.apply(target, args);
        };
      },
    }),
    commits,
    calls,
  };
}
/** `store` as an adapter that does not declare `refusesListedEffects`: the guard lists first. */
function listing(store: GuardStore): GuardStore {
  return new Proxy(store, {
    get: (target, key) =>
      key === 'refusesListedEffects' ? undefined : Reflect.get(target, key, target),
  });
}

/**
 * 64 concurrent `run`s of one effect on `store`: one execution and write, every caller answered
 * with the owner (verified, or replayed — also while the owner still executes), one
 * `commit_started`, and each of the 63 others recorded as superseded or `retry_resolved`.
 */
async function expectStorm(store: GuardStore): Promise<{ readonly superseded: number }> {
  const { guard, tenant, provider } = createHarness({ store });
  const refund = direct(provider);
  const results = await Promise.all(
    Array.from({ length: 64 }, (_, index) =>
      guard.run(refund, { tenant, input: refundArgs({ requestId: `req-${index}` }), principal }),
    ),
  );
  expect(provider.calls.execute).toBe(1);
  expect(provider.writes.size).toBe(1);
  const executed = results.filter((result) => result.outcome === 'verified');
  expect(executed).toHaveLength(1);
  for (const result of results) {
    expect(['verified', 'replayed']).toContain(result.outcome);
    expect(result.proposal).toBe(executed[0]?.proposal);
  }
  const ledger = await store.readLedger({ tenant });
  expect(ledger.filter((event) => event.type === 'commit_started')).toHaveLength(1);
  const superseded = ledger.filter((event) => event.type === 'superseded').length;
  const resolved = ledger.filter((event) => event.type === 'retry_resolved').length;
  expect(superseded + resolved).toBe(63);
  expect(await guard.verifyLedger({ tenant })).toMatchObject({ kind: 'valid' });
  return { superseded };
}

const directory = mkdtempSync(join(tmpdir(), 'sideguard-run-one-commit-'));
const url = await postgresTestUrl();
const schemas: TestSchema[] = [];
afterAll(async () => {
  rmSync(directory, { recursive: true, force: true });
  for (const schema of schemas) await schema.drop();
});

/** A PostgreSQL store on a schema of its own (every test uses the harness's one tenant). */
async function openPostgres(): Promise<GuardStore> {
  if (url === undefined) throw new Error('PostgreSQL is not configured');
  const schema = freshTestSchema(url, 'run_one_commit');
  schemas.push(schema);
  return createPostgresStore({ connectionString: url, schema: schema.schema });
}

const stores: readonly [string, () => GuardStore | Promise<GuardStore>][] = [
  ['memory', () => createMemoryStore()],
  ['SQLite', () => createSqliteStore({ path: join(directory, `${Math.random()}.db`) })],
  ...(url === undefined
    ? []
    : [['PostgreSQL', openPostgres] as [string, () => Promise<GuardStore>]]),
];

describe.each(stores)('run in one commit on the %s store', (_name, open) => {
  it('inserts the allowed proposal already claimed: the same events and revisions as two commits', async () => {
    const { store, commits } = counted(await open());
    const { guard, tenant, provider } = createHarness({ store });
    const result = await guard.run(direct(provider), { tenant, input: refundArgs(), principal });
    expect(result).toMatchObject({ outcome: 'verified', status: 'verified', revision: 3 });
    expect(provider.calls.execute).toBe(1);
    expect(commits).toEqual([
      'contract_validated+policy_decided+idempotency_decided+commit_started',
      'committed+verification_observed',
    ]);
    const ledger = await store.readLedger({ tenant, proposal: result.proposal });
    expect(ledger.map((event) => [event.type, event.status, event.revision])).toEqual([
      ['contract_validated', null, null],
      ['policy_decided', null, null],
      ['idempotency_decided', 'authorized', 1],
      ['commit_started', 'executing', 2],
      ['committed', null, null],
      ['verification_observed', 'verified', 3],
    ]);
    expect(await guard.verifyLedger({ tenant })).toMatchObject({ kind: 'valid' });
    await store.close();
  });

  it('reads the effect once: the claim check takes what prepare listed (decision 125)', async () => {
    const { store, calls } = counted(listing(await open()));
    const { guard, tenant, provider } = createHarness({ store });
    const result = await guard.run(direct(provider), { tenant, input: refundArgs(), principal });
    expect(result.outcome).toBe('verified');
    expect(calls).toEqual(['listProposalsByEffect', 'commit', 'commit']);
    // A second effect after a released one: still one read, and the released proposal listed
    // in it is checked for a claim it might still hold.
    provider.steps = ['fail_known'];
    const failed = await guard.run(direct(provider), {
      tenant,
      input: refundArgs({ amount: '43.00' }),
      principal,
    });
    expect(failed.status).toBe('failed_known');
    calls.length = 0;
    const again = await guard.run(direct(provider), {
      tenant,
      input: refundArgs({ amount: '43.00', requestId: 'req-2' }),
      principal,
    });
    expect(again).toMatchObject({ outcome: 'verified', status: 'verified' });
    expect(again.proposal).not.toBe(failed.proposal);
    expect(calls).toEqual(['listProposalsByEffect', 'commit', 'commit']);
    await store.close();
  });

  it('reads nothing before an effect it does not hold, and lists it when it does (decision 126)', async () => {
    const { store, calls, commits } = counted(await open());
    expect(store.refusesListedEffects).toBe(true);
    const { guard, tenant, provider } = createHarness({ store });
    const refund = direct(provider);
    const first = await guard.run(refund, { tenant, input: refundArgs(), principal });
    expect(first).toMatchObject({ outcome: 'verified', status: 'verified', revision: 3 });
    expect(calls).toEqual(['commit', 'commit']);
    // The same effect again: the unlisted insert is refused whole, then listing finds the owner.
    calls.length = 0;
    commits.length = 0;
    const again = await guard.run(refund, {
      tenant,
      input: refundArgs({ requestId: 'req-2' }),
      principal,
    });
    expect(again).toMatchObject({ outcome: 'replayed', proposal: first.proposal });
    expect(calls).toEqual(['commit', 'listProposalsByEffect', 'commit']);
    expect(commits).toEqual([
      'contract_validated+policy_decided+idempotency_decided+commit_started',
      'retry_resolved',
    ]);
    expect(provider.calls.execute).toBe(1);
    const ledger = await store.readLedger({ tenant });
    expect(ledger.filter((event) => event.proposal === again.proposal).length).toBe(7);
    expect(await guard.verifyLedger({ tenant })).toMatchObject({ kind: 'valid' });
    await store.close();
  });

  it('64 concurrent runs of one effect, no listing first: one execution, every caller verified or replayed', async () => {
    const store = await open();
    await expectStorm(store);
    await store.close();
  });

  it('64 concurrent runs of one effect: one execution, every caller verified or replayed', async () => {
    // A store that lists first (as a host's adapter without `refusesListedEffects` does), so
    // the racing callers meet the combined commit's refusal and its fall-back: every other
    // caller either found the owner while preparing, or lost the combined commit to it and was
    // superseded on the insert-then-claim path.
    const store = listing(await open());
    const { superseded } = await expectStorm(store);
    expect(superseded).toBeGreaterThan(0);
    await store.close();
  });

  it("a run while the effect's owner executes is answered with the owner, and nothing runs twice", async () => {
    const store = await open();
    const { guard, tenant, provider } = createHarness({ store });
    const refund = direct(provider);
    provider.steps = ['hang_after_write'];
    const first = guard.run(refund, { tenant, input: refundArgs(), principal });
    // Let the first run claim and reach the provider.
    while (provider.waiting.length === 0) await new Promise((resolve) => setImmediate(resolve));
    const second = await guard.run(refund, {
      tenant,
      input: refundArgs({ requestId: 'req-2' }),
      principal,
    });
    expect(second.outcome).toBe('replayed');
    provider.release();
    const answered = await first;
    expect(answered.outcome).toBe('verified');
    expect(second.proposal).toBe(answered.proposal);
    expect(provider.calls.execute).toBe(1);
    await store.close();
  });
});
