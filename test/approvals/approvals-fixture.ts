/**
 * A guard on a real store with the harness refund (2-of-3: finance-a needs high assurance,
 * finance-b, finance-c; operator ops-oncall), an approver registry and the approvals service.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type ApproverConfig,
  type AuthenticatedApprover,
  createApprovalsService,
  createApproverRegistry,
  hashApproverSecret,
} from '../../src/approvals/index.js';
import { createGuard } from '../../src/create-guard.js';
import {
  createDevelopmentKeyRing,
  createManualClock,
  createSequentialIds,
  type GuardStore,
} from '../../src/index.js';
import { createSqliteStore } from '../../src/stores/sqlite/index.js';
import { createFakeProvider, refundAction, refundArgs } from '../support/guard-harness.js';

export const TENANT = 'acme';
export const PROPOSER = 'agent-svc';
export const OPERATOR = 'ops-oncall';
/** Every test approver's secret is `${id}-secret-pw`. */
export const secretOf = (id: string) => `${id}-secret-pw`;

/** Hash lines for the fixture's people (cheap scrypt cost: tests only). */
export async function fixtureApprovers(
  overrides: Partial<Record<string, Partial<ApproverConfig>>> = {},
): Promise<ApproverConfig[]> {
  const people = ['finance-a', 'finance-b', 'finance-c', OPERATOR, 'outsider'];
  return Promise.all(
    people.map(async (id) => ({
      id,
      secretHash: await hashApproverSecret(secretOf(id), { cost: 1024 }),
      tenants: [TENANT],
      ...(id === 'finance-a' ? { assurance: 'high' as const } : {}),
      ...overrides[id],
    })),
  );
}

/** Everything a service test needs, on a fresh SQLite file (or the given store). */
export async function createApprovalsFixture(
  options: { store?: GuardStore; approvers?: ApproverConfig[] } = {},
) {
  const directory = mkdtempSync(join(tmpdir(), 'sg-approvals-'));
  const store = options.store ?? createSqliteStore({ path: join(directory, 'guard.db') });
  const clock = createManualClock(Date.UTC(2026, 11, 1, 9));
  const provider = createFakeProvider();
  const refund = refundAction(provider, { operators: [OPERATOR] });
  const guard = createGuard({
    store,
    keyRing: createDevelopmentKeyRing('approvals-tests'),
    clock,
    ids: createSequentialIds(),
  });
  const registry = createApproverRegistry(options.approvers ?? (await fixtureApprovers()), {
    defaultTenant: TENANT,
  });
  const service = createApprovalsService({ guard, store, actions: [refund], clock });
  const login = (id: string): Promise<AuthenticatedApprover> =>
    registry.authenticate(id, secretOf(id), 'cli');
  const propose = async (overrides: Record<string, unknown> = {}, principal = PROPOSER) => {
    const result = await guard.prepare(refund, {
      tenant: TENANT,
      input: refundArgs({ amount: '500.00', ...overrides }),
      principal,
      agent: 'support-bot',
    });
    return result.proposal;
  };
  const ledger = (proposal?: string) =>
    store.readLedger({ tenant: TENANT, ...(proposal === undefined ? {} : { proposal }) });
  const close = async () => {
    await store.close();
    rmSync(directory, { recursive: true, force: true });
  };
  return {
    store,
    clock,
    provider,
    refund,
    guard,
    registry,
    service,
    login,
    propose,
    ledger,
    close,
  };
}

export type ApprovalsFixture = Awaited<ReturnType<typeof createApprovalsFixture>>;
