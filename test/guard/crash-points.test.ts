/**
 * Crash points: a worker process is killed with SIGKILL at each step boundary of `execute` and
 * `reconcile`; the test process then reopens the store, moves its clock past the lease and
 * reconciles. The provider (a counting HTTP endpoint that also answers verification by
 * idempotency key) must see at most one write per effect, every proposal must end in a
 * definite status that matches what the provider saw, and the ledger chain must verify.
 */
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createManualClock } from '../../src/core/clock.js';
import type { GuardResult } from '../../src/core/guard.js';
import { createDevelopmentKeyRing } from '../../src/core/key-ring.js';
import type { GuardStore } from '../../src/core/store.js';
import type { LedgerEventType, ProposalStatus } from '../../src/core/vocabulary.js';
import { createGuard } from '../../src/create-guard.js';
import { createPostgresStore } from '../../src/stores/postgres/postgres-store.js';
import { createSqliteStore } from '../../src/stores/sqlite/sqlite-store.js';
import { freshTestSchema, postgresTestUrl } from '../support/postgres.js';
import { buildGuardWorkers } from './fixtures/build-guard-worker.js';
import { startCountingEndpoint } from './fixtures/counting-endpoint.js';
import type { CrashPoint, CrashWorkerConfig } from './fixtures/crash-worker.js';
import { httpRefundAction } from './fixtures/http-refund-action.js';
import type { WorkerStoreConfig } from './fixtures/worker-store.js';

const START_MS = Date.UTC(2026, 0, 1);
const LEASE_MS = 60_000;
/** Each process (crashed workers, then the recovering test) runs one lease and a bit later. */
const STEP_MS = LEASE_MS + 1_000;

const directory = mkdtempSync(join(tmpdir(), 'sideguard-guard-crashes-'));
const workers = buildGuardWorkers('crashes');
const endpoint = await startCountingEndpoint();
const url = await postgresTestUrl();
const keyRing = createDevelopmentKeyRing();

afterAll(async () => {
  await endpoint.close();
  workers.remove();
  rmSync(directory, { recursive: true, force: true });
});

type Recovery = 'reconcile' | 'execute' | 'resumeVerification';

interface Scenario {
  readonly name: string;
  readonly allowResendAfterFinalAbsence?: boolean;
  /** Workers run in turn; each must die at its crash point. */
  readonly crashes: readonly {
    readonly operation: 'execute' | 'reconcile' | 'run';
    readonly crash: CrashPoint;
  }[];
  /** The proposal's last ledger event after the last crash: proof of where it died. */
  readonly lastEventAfterCrash: LedgerEventType;
  readonly writesAfterCrash: number;
  /** What the restarted process does, in order. */
  readonly recovery: readonly Recovery[];
  readonly finalStatus: ProposalStatus;
  readonly finalReason: string;
  readonly writes: number;
}

const afterProviderCall = {
  operation: 'execute',
  crash: { kind: 'hook', hook: 'afterProviderCall' },
} as const;

const scenarios: readonly Scenario[] = [
  {
    name: 'execute, before admission (commit_started never committed): nothing claimed, the restart executes once',
    crashes: [
      { operation: 'execute', crash: { kind: 'before_commit_of', eventType: 'commit_started' } },
    ],
    lastEventAfterCrash: 'idempotency_decided',
    writesAfterCrash: 0,
    recovery: ['reconcile', 'execute'],
    finalStatus: 'verified',
    finalReason: 'provider_confirmed',
    writes: 1,
  },
  {
    // The provider authoritatively says the write is absent, but this action does not declare
    // resends safe, so I5 forbids a blind resend: it waits for a human as unresolved.
    name: 'execute, after admission, before the provider call: verification finds no write and, without declared resends, ends verification_unresolved with no write',
    crashes: [{ operation: 'execute', crash: { kind: 'hook', hook: 'beforeProviderCall' } }],
    lastEventAfterCrash: 'commit_started',
    writesAfterCrash: 0,
    recovery: ['reconcile', 'resumeVerification'],
    finalStatus: 'verification_unresolved',
    finalReason: 'absent_but_resend_not_declared',
    writes: 0,
  },
  {
    name: 'execute, after admission, before the provider call, with resends declared safe: the final absence allows one resend, which is verified',
    allowResendAfterFinalAbsence: true,
    crashes: [{ operation: 'execute', crash: { kind: 'hook', hook: 'beforeProviderCall' } }],
    lastEventAfterCrash: 'commit_started',
    writesAfterCrash: 0,
    recovery: ['reconcile', 'execute'],
    finalStatus: 'verified',
    finalReason: 'provider_confirmed',
    writes: 1,
  },
  {
    name: 'execute, after the provider call returned, before the result is recorded: reconcile verifies the write without resending',
    crashes: [afterProviderCall],
    lastEventAfterCrash: 'commit_started',
    writesAfterCrash: 1,
    recovery: ['reconcile'],
    finalStatus: 'verified',
    finalReason: 'provider_confirmed',
    writes: 1,
  },
  {
    name: 'execute, during verification (verify called, provider not yet asked): reconcile verifies the write',
    crashes: [{ operation: 'execute', crash: { kind: 'hook', hook: 'beforeVerifyCall' } }],
    lastEventAfterCrash: 'commit_started',
    writesAfterCrash: 1,
    recovery: ['reconcile'],
    finalStatus: 'verified',
    finalReason: 'provider_confirmed',
    writes: 1,
  },
  {
    name: 'execute, verification answered but `committed` not yet sealed: reconcile verifies the write',
    crashes: [
      { operation: 'execute', crash: { kind: 'before_commit_of', eventType: 'committed' } },
    ],
    lastEventAfterCrash: 'commit_started',
    writesAfterCrash: 1,
    recovery: ['reconcile'],
    finalStatus: 'verified',
    finalReason: 'provider_confirmed',
    writes: 1,
  },
  {
    // Decision 124: the outcome commit is deferred. Lost (as an OS crash may lose it), it
    // leaves the state a crash before it leaves.
    name: 'execute, the deferred outcome commit handed to the store but never written: reconcile verifies the write without resending',
    crashes: [
      { operation: 'execute', crash: { kind: 'in_flight_commit_of', eventType: 'committed' } },
    ],
    lastEventAfterCrash: 'commit_started',
    writesAfterCrash: 1,
    recovery: ['reconcile'],
    finalStatus: 'verified',
    finalReason: 'provider_confirmed',
    writes: 1,
  },
  {
    name: 'execute, right after the deferred outcome commit returned (not yet synced): it survived the process, and reconcile keeps it',
    crashes: [{ operation: 'execute', crash: { kind: 'after_commit_of', eventType: 'committed' } }],
    lastEventAfterCrash: 'verification_observed',
    writesAfterCrash: 1,
    recovery: ['reconcile'],
    finalStatus: 'verified',
    finalReason: 'provider_confirmed',
    writes: 1,
  },
  {
    // Decision 124: `run` inserts the allowed proposal already claimed, in one commit.
    name: 'run, right after the insert and claim commit, before the provider call: verification finds no write and, without declared resends, ends verification_unresolved with no write',
    crashes: [{ operation: 'run', crash: { kind: 'hook', hook: 'beforeProviderCall' } }],
    lastEventAfterCrash: 'commit_started',
    writesAfterCrash: 0,
    recovery: ['reconcile', 'resumeVerification'],
    finalStatus: 'verification_unresolved',
    finalReason: 'absent_but_resend_not_declared',
    writes: 0,
  },
  {
    name: 'run, after the provider call with the deferred outcome commit in flight (never written): reconcile verifies the write without resending',
    crashes: [{ operation: 'run', crash: { kind: 'in_flight_commit_of', eventType: 'committed' } }],
    lastEventAfterCrash: 'commit_started',
    writesAfterCrash: 1,
    recovery: ['reconcile'],
    finalStatus: 'verified',
    finalReason: 'provider_confirmed',
    writes: 1,
  },
  {
    name: 'reconcile, before the expired lease is recorded: a second reconcile verifies the write',
    crashes: [
      afterProviderCall,
      { operation: 'reconcile', crash: { kind: 'before_commit_of', eventType: 'lease_expired' } },
    ],
    lastEventAfterCrash: 'commit_started',
    writesAfterCrash: 1,
    recovery: ['reconcile'],
    finalStatus: 'verified',
    finalReason: 'provider_confirmed',
    writes: 1,
  },
  {
    name: 'reconcile, during verification (verification lease taken, provider not yet asked): a second reconcile verifies the write',
    crashes: [
      afterProviderCall,
      { operation: 'reconcile', crash: { kind: 'hook', hook: 'beforeVerifyCall' } },
    ],
    lastEventAfterCrash: 'verification_started',
    writesAfterCrash: 1,
    recovery: ['reconcile'],
    finalStatus: 'verified',
    finalReason: 'provider_confirmed',
    writes: 1,
  },
  {
    name: 'reconcile, provider answered but the observation not yet recorded: a second reconcile verifies the write',
    crashes: [
      afterProviderCall,
      {
        operation: 'reconcile',
        crash: { kind: 'before_commit_of', eventType: 'verification_observed' },
      },
    ],
    lastEventAfterCrash: 'verification_started',
    writesAfterCrash: 1,
    recovery: ['reconcile'],
    finalStatus: 'verified',
    finalReason: 'provider_confirmed',
    writes: 1,
  },
];

/** Runs one worker and resolves with the signal that ended it. */
function runCrashWorker(config: CrashWorkerConfig): Promise<NodeJS.Signals | null> {
  const child = fork(workers.path('crash-worker'), [JSON.stringify(config)], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    execArgv: [],
  });
  return new Promise((resolve, reject) => {
    let message: unknown;
    child.on('message', (received) => {
      message = received;
    });
    child.once('error', reject);
    child.once('exit', (_code, signal) => {
      if (signal === null)
        reject(new Error(`crash worker did not crash: ${JSON.stringify(message)}`));
      else resolve(signal);
    });
  });
}

interface Target {
  readonly name: string;
  readonly skip: boolean;
  open(): Promise<{ config: WorkerStoreConfig; dispose(): Promise<void> }>;
  reopen(config: WorkerStoreConfig): Promise<GuardStore>;
}

const targets: Target[] = [
  {
    name: 'SQLite',
    skip: false,
    async open() {
      return {
        config: { kind: 'sqlite', path: join(directory, 'crashes.db') },
        async dispose() {},
      };
    },
    async reopen(config) {
      if (config.kind !== 'sqlite') throw new Error('expected a SQLite config');
      return createSqliteStore({ path: config.path });
    },
  },
  {
    name: 'PostgreSQL',
    skip: url === undefined,
    async open() {
      const run = freshTestSchema(url as string, 'crashes');
      return {
        config: { kind: 'postgres', url: url as string, schema: run.schema },
        dispose: () => run.drop(),
      };
    },
    reopen(config) {
      if (config.kind !== 'postgres') throw new Error('expected a PostgreSQL config');
      return createPostgresStore({ connectionString: config.url, schema: config.schema });
    },
  },
];

for (const target of targets) {
  describe.skipIf(target.skip)(`${target.name}: SIGKILL at each step boundary`, () => {
    let opened: Awaited<ReturnType<Target['open']>> | undefined;
    afterAll(async () => {
      await opened?.dispose();
    });

    scenarios.forEach((scenario, index) => {
      it(scenario.name, async () => {
        opened ??= await target.open();
        const storeConfig = opened.config;
        const tenant = `tenant-crash-${index}`;
        const orderId = `order-crash-${target.name}-${index}`;
        const action = httpRefundAction({
          endpointUrl: endpoint.url,
          executionLeaseMs: LEASE_MS,
          allowResendAfterFinalAbsence: scenario.allowResendAfterFinalAbsence ?? false,
        });

        const input = { orderId, amountMinor: 500, requestId: `req-${index}` };
        let store = await target.reopen(storeConfig);
        // A `run` scenario's worker prepares the proposal itself.
        const runs = scenario.crashes[0]?.operation === 'run';
        const prepared = runs
          ? undefined
          : await createGuard({
              store,
              keyRing,
              clock: createManualClock(START_MS),
            }).prepare(action, { tenant, principal: 'agent:planner', input });
        if (prepared !== undefined) expect(prepared.status).toBe('authorized');
        await store.close();

        for (const [stage, { operation, crash }] of scenario.crashes.entries()) {
          const signal = await runCrashWorker({
            store: storeConfig,
            tenant,
            proposal: prepared?.proposal ?? '',
            input,
            endpointUrl: endpoint.url,
            nowMs: START_MS + stage * STEP_MS,
            executionLeaseMs: LEASE_MS,
            allowResendAfterFinalAbsence: scenario.allowResendAfterFinalAbsence ?? false,
            operation,
            crash,
          });
          expect(signal).toBe('SIGKILL');
        }
        expect(endpoint.writesFor(orderId)).toHaveLength(scenario.writesAfterCrash);

        // The restart: a fresh store handle and a clock past every lease the dead held.
        store = await target.reopen(storeConfig);
        try {
          const clock = createManualClock(START_MS + scenario.crashes.length * STEP_MS);
          const guard = createGuard({ store, keyRing, clock });
          const proposal = prepared?.proposal ?? (await store.readLedger({ tenant }))[0]?.proposal;
          if (typeof proposal !== 'string') throw new Error('the worker stored no proposal');
          const address = { tenant, proposal };
          const before = await store.readLedger(address);
          expect(before.at(-1)?.type).toBe(scenario.lastEventAfterCrash);
          if (runs) {
            // Inserted already claimed: commit_started is sealed with the insert's events.
            expect(before.slice(0, 4).map((event) => event.type)).toEqual([
              'contract_validated',
              'policy_decided',
              'idempotency_decided',
              'commit_started',
            ]);
          }

          let result: GuardResult | undefined;
          for (const step of scenario.recovery) result = await guard[step](action, address);
          expect(result).toMatchObject({
            proposal,
            status: scenario.finalStatus,
            reasonCode: scenario.finalReason,
          });

          const writes = endpoint.writesFor(orderId);
          expect(writes).toHaveLength(scenario.writes);
          const record = await store.getProposal(tenant, proposal);
          expect(record?.status).toBe(scenario.finalStatus);
          const ledger = await store.readLedger(address);
          const started = ledger.filter((event) => event.type === 'commit_started');
          if (scenario.writes === 1) {
            // The write carried the key of the admission that sent it, and its receipt is the
            // one the guard recorded.
            expect(writes[0]?.idempotencyKey).toBe(started.at(-1)?.data.providerIdempotencyKey);
            expect(record?.receipts.map((receipt) => receipt.id)).toEqual([writes[0]?.receiptId]);
          } else {
            expect(record?.receipts).toEqual([]);
          }
          expect(await guard.verifyLedger({ tenant })).toMatchObject({ kind: 'valid' });
        } finally {
          await store.close();
        }
      }, 30_000);
    });
  });
}
