/**
 * `sideguard console`: the approvals console alone, on a store a library host shares. A proposal
 * prepared by another process appears in its inbox and is approved through it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ActionDefinition, createGuard, keyRingFromEnvironmentValue } from 'sideguard';
import { createSqliteStore } from 'sideguard/sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashApproverSecret } from '../../src/approvals/approver-secret.js';
import { type ServeProcess, startServeProcess } from '../gateway/serve-process.js';
import { projectRoot } from '../support/cli.js';
import { ConsoleClient } from './console-client.js';

const CONFIG = join(projectRoot, 'e2e', 'fixtures', 'approvals.config.ts');
const KEYS = `current=k1:1;effect=k1:1;k1:1=${Buffer.alloc(32, 9).toString('base64url')}`;

describe('sideguard console', () => {
  let directory: string;
  let running: ServeProcess | undefined;
  const environment: Record<string, string> = {};

  beforeAll(async () => {
    directory = mkdtempSync(join(tmpdir(), 'sg-console-cli-'));
    const approvers = [
      {
        id: 'finance-a',
        secretHash: await hashApproverSecret('finance-a-cli-secret', { cost: 1024 }),
      },
    ];
    Object.assign(environment, {
      SG_E2E_STORE: join(directory, 'shared.db'),
      SG_E2E_SANDBOX_URL: 'http://127.0.0.1:9',
      SG_E2E_APPROVERS: JSON.stringify(approvers),
      SIDEGUARD_KEYS: KEYS,
    });
    running = await startServeProcess(['console', '--config', CONFIG, '--port', '0'], environment);
  });

  afterAll(async () => {
    const code = await running?.stop();
    expect(code).toBe(0);
    rmSync(directory, { recursive: true, force: true });
  });

  it('serves the console on its own and logs the approver in', async () => {
    expect(running?.output()).toContain('approvals console at http://127.0.0.1:');
    const client = new ConsoleClient(running?.url ?? '');
    expect((await client.login('finance-a', 'finance-a-cli-secret')).status).toBe(303);
    const inbox = await client.get('/');
    expect(inbox.status).toBe(200);
    expect(inbox.body).toContain('Nothing waits for your approval');
    expect((await client.login('finance-a', 'wrong-secret-value')).status).toBe(401);
  });

  it('shows a proposal another process prepared on the shared store and records the approval', async () => {
    // The host process: the same action (from the same config file) and store file.
    Object.assign(process.env, environment);
    const config = (await import(CONFIG)).default as { actions: ActionDefinition[] };
    const refund = config.actions[0] as ActionDefinition;
    const store = createSqliteStore({ path: environment.SG_E2E_STORE as string });
    try {
      const guard = createGuard({ store, keyRing: keyRingFromEnvironmentValue(KEYS) });
      const prepared = await guard.prepare(refund, {
        tenant: 'acme',
        input: { charge: 'ch_sg_005', amount: '4000' },
        principal: 'host-app',
      });
      expect(prepared.status).toBe('awaiting_authority');
      const client = new ConsoleClient(running?.url ?? '');
      await client.login('finance-a', 'finance-a-cli-secret');
      expect((await client.get('/')).body).toContain(`data-proposal="${prepared.proposal}"`);
      const csrf = await client.csrf();
      const approved = await client.post(`/proposals/${prepared.proposal}/approve`, { csrf });
      expect(approved.status).toBe(303);
      const events = await store.readLedger({ tenant: 'acme', proposal: prepared.proposal });
      expect(
        events.filter((e) => e.type === 'authority_recorded').map((e) => e.data.authority),
      ).toEqual(['finance-a']);
    } finally {
      await store.close();
    }
  });
});
