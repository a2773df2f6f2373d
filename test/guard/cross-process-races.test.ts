/**
 * Races across OS processes through the whole guard: 4 processes × 16 concurrent callers execute
 * one authorized proposal, or prepare separate proposals for one semantic effect and execute
 * them, against one SQLite file and one PostgreSQL schema. The provider is a counting HTTP
 * endpoint: it must see exactly one write per effect, and every caller a definite outcome.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createDevelopmentKeyRing } from '../../src/core/key-ring.js';
import type { GuardStore } from '../../src/core/store.js';
import { createGuard } from '../../src/create-guard.js';
import { createPostgresStore } from '../../src/stores/postgres/postgres-store.js';
import { createSqliteStore } from '../../src/stores/sqlite/sqlite-store.js';
import { freshTestSchema, postgresTestUrl } from '../support/postgres.js';
import { buildGuardWorkers } from './fixtures/build-guard-worker.js';
import { startCountingEndpoint } from './fixtures/counting-endpoint.js';
import { httpRefundAction } from './fixtures/http-refund-action.js';
import type { CallerOutcome, RaceWorkerConfig, RaceWorkerReport } from './fixtures/race-worker.js';
import type { WorkerStoreConfig } from './fixtures/worker-store.js';

const PROCESSES = 4;
const CALLERS = 16;
const DEFINITE = ['verified', 'replayed', 'in_progress', 'conflict'];

const directory = mkdtempSync(join(tmpdir(), 'sideguard-guard-races-'));
const workers = buildGuardWorkers('races');
const endpoint = await startCountingEndpoint();
const url = await postgresTestUrl();
const action = httpRefundAction({ endpointUrl: endpoint.url });
const keyRing = createDevelopmentKeyRing();

afterAll(async () => {
  await endpoint.close();
  workers.remove();
  rmSync(directory, { recursive: true, force: true });
});

/** Rejects when the worker exits before it sent its report. */
function exitedEarly(child: ChildProcess): Promise<never> {
  return new Promise((_, reject) => {
    let reported = false;
    child.on('message', (message: Record<string, unknown>) => {
      if (message.report !== undefined) reported = true;
    });
    child.once('exit', (code, signal) => {
      if (!reported) reject(new Error(`race worker exited early (code ${code}, signal ${signal})`));
    });
  });
}

/** Forks the workers, releases them together, and collects their reports. */
async function race(base: Omit<RaceWorkerConfig, 'worker'>): Promise<readonly RaceWorkerReport[]> {
  const children = Array.from({ length: PROCESSES }, (_, worker) =>
    fork(workers.path('race-worker'), [JSON.stringify({ ...base, worker })], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      execArgv: [],
    }),
  );
  const early = children.map(exitedEarly);
  const next = (kind: 'ready' | 'prepared' | 'report') =>
    Promise.race([
      Promise.all(
        children.map(
          (child) =>
            new Promise<unknown>((resolve, reject) => {
              const listener = (message: Record<string, unknown>) => {
                if (message.fatal !== undefined) reject(new Error(String(message.fatal)));
                if (message[kind] === undefined) return;
                child.off('message', listener);
                resolve(message[kind]);
              };
              child.on('message', listener);
            }),
        ),
      ),
      ...early,
    ]);
  try {
    await next('ready');
    const prepared = base.scenario.kind === 'same_effect' ? next('prepared') : undefined;
    const reports = next('report');
    for (const child of children) child.send('go');
    if (prepared !== undefined) {
      await prepared;
      for (const child of children) child.send('execute');
    }
    return (await reports) as RaceWorkerReport[];
  } finally {
    for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  }
}

function expectDefiniteOutcomes(reports: readonly RaceWorkerReport[]): CallerOutcome[] {
  expect(reports.flatMap((report) => report.errors)).toEqual([]);
  const outcomes = reports.flatMap((report) => report.outcomes);
  expect(outcomes).toHaveLength(PROCESSES * CALLERS);
  for (const outcome of outcomes) expect(DEFINITE).toContain(outcome.outcome);
  expect(outcomes.filter((outcome) => outcome.outcome === 'verified')).toHaveLength(1);
  return outcomes;
}

async function expectOneWrite(store: GuardStore, tenant: string, orderId: string) {
  const writes = endpoint.writesFor(orderId);
  expect(writes).toHaveLength(1);
  const started = (await store.readLedger({ tenant })).filter(
    (event) => event.type === 'commit_started',
  );
  // One admission, and the one write carried the key it recorded.
  expect(started).toHaveLength(1);
  expect(writes[0]?.idempotencyKey).toBe(started[0]?.data.providerIdempotencyKey);
  const guard = createGuard({ store, keyRing });
  expect(await guard.verifyLedger({ tenant })).toMatchObject({ kind: 'valid' });
}

interface Target {
  readonly name: string;
  readonly skip: boolean;
  open(label: string): Promise<{
    store: GuardStore;
    config: WorkerStoreConfig;
    dispose(): Promise<void>;
  }>;
}

const targets: Target[] = [
  {
    name: 'SQLite (one shared file)',
    skip: false,
    async open(label) {
      const path = join(directory, `${label}.db`);
      const store = createSqliteStore({ path, busyTimeoutMs: 20_000 });
      return { store, config: { kind: 'sqlite', path }, dispose: () => store.close() };
    },
  },
  {
    name: 'PostgreSQL (one fresh schema)',
    skip: url === undefined,
    async open(label) {
      const run = freshTestSchema(url as string, `races_${label}`);
      const store = await createPostgresStore({
        connectionString: url as string,
        schema: run.schema,
      });
      return {
        store,
        config: { kind: 'postgres', url: url as string, schema: run.schema },
        async dispose() {
          await store.close();
          await run.drop();
        },
      };
    },
  },
];

for (const target of targets) {
  describe.skipIf(target.skip)(
    `${target.name}: ${PROCESSES} processes × ${CALLERS} callers`,
    () => {
      it('all executing one authorized proposal make one provider write; one caller verifies, the rest get replayed or in_progress', async () => {
        const { store, config, dispose } = await target.open('same-proposal');
        try {
          const tenant = 'tenant-same-proposal';
          const orderId = `order-same-proposal-${config.kind}`;
          const guard = createGuard({ store, keyRing });
          const prepared = await guard.prepare(action, {
            tenant,
            principal: 'agent:planner',
            input: { orderId, amountMinor: 1250, requestId: 'req-original' },
          });
          expect(prepared).toMatchObject({ outcome: 'authorized', status: 'authorized' });

          const reports = await race({
            store: config,
            tenant,
            callers: CALLERS,
            endpointUrl: endpoint.url,
            scenario: { kind: 'same_proposal', proposal: prepared.proposal },
          });

          const outcomes = expectDefiniteOutcomes(reports);
          expect(new Set(outcomes.map((outcome) => outcome.proposal))).toEqual(
            new Set([prepared.proposal]),
          );
          expect((await store.getProposal(tenant, prepared.proposal))?.status).toBe('verified');
          await expectOneWrite(store, tenant, orderId);
        } finally {
          await dispose();
        }
      }, 60_000);

      it('separately prepared proposals for one semantic effect (different request ids) make one provider write; every other proposal ends superseded or replayed', async () => {
        const { store, config, dispose } = await target.open('same-effect');
        try {
          const tenant = 'tenant-same-effect';
          const orderId = `order-same-effect-${config.kind}`;
          const reports = await race({
            store: config,
            tenant,
            callers: CALLERS,
            endpointUrl: endpoint.url,
            scenario: { kind: 'same_effect', orderId, amountMinor: 990 },
          });

          const outcomes = expectDefiniteOutcomes(reports);
          for (const outcome of outcomes)
            expect(['authorized', 'replayed']).toContain(outcome.prepared);
          const verified = outcomes.find((outcome) => outcome.outcome === 'verified');
          const winner = await store.getProposal(tenant, verified?.proposal ?? '');
          expect(winner?.status).toBe('verified');
          const proposals = await store.listProposalsByEffect(
            tenant,
            winner?.effectScope ?? '',
            100,
          );
          // Callers that prepared before any proposal was visible each created one (typically
          // dozens: SQLite answers every caller's read before its batch commits); all of those
          // but the winner lost the claim race and were superseded by it.
          expect(proposals.length).toBeGreaterThan(1);
          for (const proposal of proposals) {
            if (proposal.proposal === winner?.proposal) continue;
            expect(proposal).toMatchObject({
              status: 'superseded',
              supersededBy: winner?.proposal,
            });
          }
          await expectOneWrite(store, tenant, orderId);
        } finally {
          await dispose();
        }
      }, 60_000);
    },
  );
}
