/**
 * The requestState round trip over stdio: `sideguard mcp` spawned as the built CLI, the official
 * SDK v2 client pinned to 2026-07-28, and an SQLite store the test's own guard approves in (as a
 * console in another process would). The retry carrying the state executes the approved proposal
 * once; a forged state runs nothing.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import {
  buildAuthorityEvidence,
  createGuard,
  type Guard,
  keyRingFromEnvironmentValue,
} from 'sideguard';
import { createSqliteStore, type SqliteStore } from 'sideguard/sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refund } from '../cli/fixtures/approvals.config.mjs';
import { cliPath, projectRoot } from '../support/cli.js';
import { structured } from './mcp/mcp-test-kit.js';

const CONFIG = join(import.meta.dirname, '..', 'cli', 'fixtures', 'approvals.config.mjs');
const KEYS = `current=k1:1;effect=k1:1;k1:1=${Buffer.alloc(32, 11).toString('base64url')}`;
const AGENT_KEY = 'sk_agent_stdio_support_0123';
const TOOL = 'support.refund.v1';

let dir: string;
let store: SqliteStore;
let guard: Guard;
let client: Client;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'sideguard-mcp-approvals-stdio-'));
  const storePath = join(dir, 'gateway.db');
  store = createSqliteStore({ path: storePath });
  guard = createGuard({ store, keyRing: keyRingFromEnvironmentValue(KEYS) });
  client = new Client(
    { name: 'stdio-agent', version: '1.0.0' },
    { versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [cliPath, 'mcp', '--config', CONFIG],
      cwd: projectRoot,
      env: {
        ...(process.env as Record<string, string>),
        SIDEGUARD_KEYS: KEYS,
        SIDEGUARD_AGENT_KEY: AGENT_KEY,
        TEST_AGENT_KEY: AGENT_KEY,
        TEST_STORE: storePath,
      },
      stderr: 'ignore',
    }),
  );
}, 60_000);

afterAll(async () => {
  await client?.close();
  await store?.close();
  await rm(dir, { recursive: true, force: true });
});

async function approveAs(authority: string, proposal: string): Promise<string | null> {
  const view = await guard.read(refund, { tenant: 'acme', proposal, reader: authority });
  if (view.evidenceBindings === undefined) throw new Error('no bindings');
  const result = await guard.recordAuthority(refund, {
    tenant: 'acme',
    authenticatedAuthority: authority,
    evidence: buildAuthorityEvidence(view.evidenceBindings, {
      authority,
      decision: 'approve',
      channelAssurance: 'medium',
      issuedAt: Date.now(),
    }),
  });
  return result.status;
}

describe('requestState over stdio', () => {
  it('stays pending through one approval of two, executes once after the second, and refuses a forged state', async () => {
    const args = { orderId: 'ord_stdio', amount: '250' };
    const first = await client.callTool({ name: TOOL, arguments: args });
    const { proposal, requestState } = structured(first);
    expect(structured(first)).toMatchObject({
      code: 'approval_required',
      status: 'awaiting_authority',
    });
    expect(typeof requestState).toBe('string');
    const retry = () => client.callTool({ name: TOOL, arguments: args, requestState } as never);

    expect(await approveAs('finance-a', proposal)).toBe('awaiting_authority');
    expect(structured(await retry())).toMatchObject({ code: 'approval_required', proposal });

    expect(await approveAs('finance-b', proposal)).toBe('authorized');
    const forged = await client.callTool({
      name: TOOL,
      arguments: args,
      requestState: requestState.replace(/\.[^.]+$/, '.AAAA'),
    } as never);
    expect(structured(forged)).toMatchObject({ code: 'request_state_invalid' });
    expect((await store.getProposal('acme', proposal))?.status).toBe('authorized');

    const done = await retry();
    expect(done.isError).toBeFalsy();
    expect(structured(done)).toMatchObject({
      code: 'completed',
      proposal,
      receipt: { id: 're_direct' },
    });
    const again = await retry();
    expect(structured(again)).toMatchObject({ code: 'completed', proposal, duplicate: true });

    const ledger = (await guard.exportLedger({ tenant: 'acme' }))
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as { proposal: string; type: string });
    const commits = ledger.filter(
      (event) => event.proposal === proposal && event.type === 'commit_started',
    );
    expect(commits).toHaveLength(1);
  }, 60_000);
});
