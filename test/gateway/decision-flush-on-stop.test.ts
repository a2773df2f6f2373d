/**
 * `sideguard serve` stopped with SIGTERM right after a burst of calls, inside the decision log's
 * batching window: every decision is in the SQLite ledger once the process has exited, and the
 * chain verifies (decision 070: closing flushes). The process's own shutdown may outlast the
 * window, so this proves the end state of a real stop; `decision-log-queue.test.ts` proves that
 * close flushes with a window that never fires.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { verifyLedgerChain } from 'sideguard';
import { createSqliteStore } from 'sideguard/sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSandbox } from '../sandbox/sandbox-helpers.js';
import { agentCall, fixtureConfig, type TestSandbox } from './gateway-helpers.js';
import { startServeProcess } from './serve-process.js';

let sandbox: TestSandbox;
let dir: string;

beforeAll(async () => {
  sandbox = await startTestSandbox();
  dir = await mkdtemp(join(tmpdir(), 'sideguard-flush-'));
});
afterAll(async () => {
  await sandbox?.stop();
  await rm(dir, { recursive: true, force: true });
});

describe('stopping the gateway', () => {
  it('flushes every decision of a burst into the ledger before it exits', async () => {
    const store = join(dir, 'gateway.db');
    const served = await startServeProcess(
      ['serve', '--config', fixtureConfig, '--port', '0', '--upstream-port', 'payments=0'],
      {
        SG_TEST_SANDBOX_URL: sandbox.dataUrl,
        SG_TEST_STORE: store,
        SIDEGUARD_KEYS: `current=k1:1;effect=k1:1;k1:1=${randomBytes(32).toString('base64url')}`,
      },
    );
    const payments = served.upstreams.payments ?? '';
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, index) =>
        agentCall(payments, 'GET', index % 3 === 0 ? '/v1/customers/c' : '/v1/refunds/re_sg_001'),
      ),
    );
    expect(answers.filter((answer) => answer.status === 200)).toHaveLength(20);
    // At once: well inside the 100 ms batching window.
    expect(await served.stop()).toBe(0);
    const opened = createSqliteStore({ path: store });
    try {
      const events = await opened.readLedger({ tenant: 'acme' });
      const decided = events.filter((event) => event.type === 'gateway_decided');
      expect(decided.filter((event) => event.data.decision === 'forward')).toHaveLength(20);
      expect(decided.filter((event) => event.data.decision === 'miss')).toHaveLength(10);
      expect(verifyLedgerChain(events)).toMatchObject({ kind: 'valid', count: events.length });
    } finally {
      await opened.close();
    }
  });
});
