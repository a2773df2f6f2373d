/**
 * `sideguard mcp` (the built CLI, stdio) in front of a real MCP server from npm,
 * `@modelcontextprotocol/server-memory`: pin its tools with `--print-tools`, call its
 * `add_observations` as a guarded write from both protocol eras through two gateway processes on
 * one SQLite store, and count its writes from the server's own file (it rewrites the file on
 * every call it executes, so a second execution would show even though it ignores repeated
 * observation text). Bad agent keys and a missing key ring stop the command before it serves.
 */
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport as V1StdioTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { verifyLedgerChain } from 'sideguard';
import { createSqliteStore } from 'sideguard/sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliPath } from '../../support/cli.js';
import {
  MEMORY_AGENT_KEY,
  MEMORY_CONFIG,
  memoryEnvironment,
  structured,
  tempDir,
} from './mcp-test-kit.js';

const CONFIG = MEMORY_CONFIG;
/** These tests start several Node processes each; on a loaded machine that takes a while. */
const STARTS_PROCESSES_MS = 180_000;

interface MemoryGraphLine {
  readonly type: string;
  readonly name?: string;
  readonly observations?: readonly string[];
}

describe('sideguard mcp on stdio in front of the real memory server', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  let env: Record<string, string>;
  const memoryFile = () => join(dir, 'memory.jsonl');
  const inode = () => statSync(memoryFile()).ino;
  const observations = (entity: string) =>
    readFileSync(memoryFile(), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as MemoryGraphLine)
      .find((line) => line.type === 'entity' && line.name === entity)?.observations ?? [];

  const runMcp = (extraArgs: string[], extraEnv: Record<string, string | undefined>) =>
    spawnSync(process.execPath, [cliPath, 'mcp', '--config', CONFIG, ...extraArgs], {
      env: { ...process.env, ...env, ...extraEnv },
      encoding: 'utf8',
      input: '',
      timeout: 60_000,
    });

  const transportParameters = () => ({
    command: process.execPath,
    args: [cliPath, 'mcp', '--config', CONFIG, '--quiet-upstreams'],
    env: { ...(process.env as Record<string, string>), ...env },
    stderr: 'ignore' as const,
  });

  beforeAll(async () => {
    ({ dir, cleanup } = await tempDir());
    env = { ...memoryEnvironment(dir, 'ticket-42'), SIDEGUARD_AGENT_KEY: MEMORY_AGENT_KEY };
    // The operator's review: print the current digests, then pin them.
    const printed = runMcp(['--print-tools', '--quiet-upstreams'], {});
    expect(printed.status).toBe(1);
    const digestOf = (tool: string) =>
      new RegExp(`^  ${tool}  (sha256:[0-9a-f]{64})  DIFFERS`, 'm').exec(printed.stdout)?.[1];
    const note = digestOf('add_observations');
    const open = digestOf('open_nodes');
    expect(note).toBeDefined();
    expect(open).toBeDefined();
    env.TEST_NOTE_DIGEST = note ?? '';
    env.TEST_OPEN_DIGEST = open ?? '';
    const pinned = runMcp(['--print-tools', '--quiet-upstreams'], {});
    expect(pinned.status).toBe(0);
    expect(pinned.stdout).toContain('add_observations');
    expect(pinned.stdout).toContain('pinned by binding memory.note');
  }, STARTS_PROCESSES_MS);

  afterAll(async () => {
    await cleanup();
  });

  it(
    'serves a 2026-07-28 client and a 2025-11-25 client; a duplicate through a second gateway process writes nothing',
    async () => {
      const modern = new Client(
        { name: 'agent-v2', version: '1.0.0' },
        { versionNegotiation: { mode: { pin: '2026-07-28' } } },
      );
      await modern.connect(new StdioClientTransport(transportParameters()));
      const note = {
        observations: [{ entityName: 'ticket-42', contents: ['customer asked for a refund'] }],
      };
      let afterFirst: number;
      try {
        expect(modern.getNegotiatedProtocolVersion()).toBe('2026-07-28');
        // The role grants the upstream's bindings, not the action as a tool of its own.
        expect((await modern.listTools()).tools.map((tool) => tool.name)).toEqual([
          'memory.note',
          'memory.open',
          'sideguard_proposal',
        ]);
        const before = inode();
        const first = await modern.callTool({ name: 'memory.note', arguments: note });
        expect(first.isError).toBeFalsy();
        expect(structured(first)).toMatchObject({
          decision: 'guarded',
          code: 'completed',
          duplicate: false,
          action: 'crm.note@1',
          result: {
            results: [
              { entityName: 'ticket-42', addedObservations: ['customer asked for a refund'] },
            ],
          },
        });
        afterFirst = inode();
        expect(afterFirst).not.toBe(before);
      } finally {
        await modern.close();
      }

      // Another `sideguard mcp` process (a 2025-era client), the same store: the same effect.
      const legacy = new V1Client({ name: 'agent-v1', version: '1.0.0' });
      await legacy.connect(new V1StdioTransport(transportParameters()));
      try {
        const again = await legacy.callTool({ name: 'memory.note', arguments: note });
        expect(again.isError).toBeFalsy();
        expect(structured(again)).toMatchObject({ code: 'completed', duplicate: true });
        expect(inode()).toBe(afterFirst);

        const other = await legacy.callTool({
          name: 'memory.note',
          arguments: { observations: [{ entityName: 'ticket-42', contents: ['refund sent'] }] },
        });
        expect(structured(other)).toMatchObject({ code: 'completed', duplicate: false });
        expect(inode()).not.toBe(afterFirst);

        const read = await legacy.callTool({
          name: 'memory.open',
          arguments: { names: ['ticket-42'] },
        });
        expect(read.isError).toBeFalsy();
        expect(JSON.stringify(read.structuredContent)).toContain('refund sent');
      } finally {
        await legacy.close();
      }
      expect(observations('ticket-42')).toEqual(['customer asked for a refund', 'refund sent']);
    },
    STARTS_PROCESSES_MS,
  );

  it(
    'drops malformed lines (the SDK reports them on stderr), answers nothing but JSON-RPC, and keeps serving',
    async () => {
      const child = spawn(
        process.execPath,
        [cliPath, 'mcp', '--config', CONFIG, '--quiet-upstreams'],
        {
          env: { ...process.env, ...env },
          stdio: ['pipe', 'pipe', 'ignore'],
        },
      );
      let stdout = '';
      child.stdout.on('data', (chunk: Buffer) => {
        stdout += chunk.toString('utf8');
      });
      const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
      const answered = (id: number) =>
        new Promise<Record<string, unknown>>((resolve) => {
          const check = () => {
            const line = stdout
              .split('\n')
              .filter(Boolean)
              .map((text) => JSON.parse(text) as Record<string, unknown>)
              .find((message) => message.id === id);
            if (line !== undefined) resolve(line);
            else child.stdout.once('data', check);
          };
          check();
        });
      try {
        child.stdin.write('{"jsonrpc": "2.0", "id": 1, "method": \n');
        child.stdin.write('[1, 2, 3]\n');
        child.stdin.write(
          `${JSON.stringify({
            jsonrpc: '2.0',
            id: 7,
            method: 'initialize',
            params: {
              protocolVersion: '2025-11-25',
              capabilities: {},
              clientInfo: { name: 'raw', version: '1' },
            },
          })}\n`,
        );
        const initialized = await answered(7);
        expect(initialized).toMatchObject({
          result: { protocolVersion: '2025-11-25', serverInfo: { name: 'sideguard' } },
        });
        expect(child.exitCode).toBeNull();
        // Nothing but JSON-RPC ever reaches stdout.
        for (const line of stdout.split('\n').filter(Boolean)) {
          expect(JSON.parse(line)).toMatchObject({ jsonrpc: '2.0' });
        }
      } finally {
        child.stdin.end();
        expect(await exited).toBe(0);
      }
    },
    STARTS_PROCESSES_MS,
  );

  it(
    'seals the stdio door’s decisions in the store’s ledger when the client closes: forward, guarded, deny',
    async () => {
      const readLedger = async () => {
        const store = createSqliteStore({ path: env.TEST_STORE ?? '' });
        try {
          return await store.readLedger({ tenant: 'acme' });
        } finally {
          await store.close();
        }
      };
      const before = (await readLedger()).length;
      const client = new Client({ name: 'agent-v2', version: '1.0.0' });
      await client.connect(new StdioClientTransport(transportParameters()));
      const hostileTool = 'evil\u202e<script>alert(1)</script>'.padEnd(600, 'x');
      try {
        const read = await client.callTool({ name: 'memory.open', arguments: { names: ['t-9'] } });
        expect(read.isError).toBeFalsy();
        const note = await client.callTool({
          name: 'memory.note',
          arguments: {
            observations: [{ entityName: 'ticket-42', contents: ['Jane Doe, card 4242 4242'] }],
          },
        });
        expect(structured(note)).toMatchObject({ decision: 'guarded', code: 'completed' });
        const refused = await client.callTool({ name: hostileTool, arguments: {} });
        expect(structured(refused)).toMatchObject({ decision: 'deny', code: 'tool_not_bound' });
      } finally {
        // Closing stdin ends the process, which flushes its decision log before it exits.
        await client.close();
      }
      const events = await readLedger();
      expect(verifyLedgerChain(events)).toMatchObject({ kind: 'valid' });
      const decided = events.slice(before).filter((event) => event.type === 'gateway_decided');
      expect(decided.map((event) => [event.data.decision, event.data.reason])).toEqual([
        ['forward', 'declared_read'],
        ['guarded', 'bound_write'],
        ['deny', 'tool_not_bound'],
      ]);
      for (const event of decided) {
        expect(event.data).toMatchObject({ door: 'mcp', agent: 'crm-bot', principal: 'support' });
      }
      expect(decided[0]?.data).toMatchObject({ subject: 'open_nodes', binding: 'memory.open' });
      expect(decided[1]?.data).toMatchObject({
        subject: 'add_observations',
        binding: 'memory.note',
        proposal: expect.stringMatching(/^prop_/),
        requestDigest: expect.any(String),
      });
      // The hostile name is kept bounded, as text, and the ledger holds no argument value.
      expect(String(decided[2]?.data.subject)).toHaveLength(256);
      expect(String(decided[2]?.data.subject).startsWith('evil\u202e<script>')).toBe(true);
      expect(JSON.stringify(events)).not.toContain('Jane Doe');
      expect(JSON.stringify(events)).not.toContain(MEMORY_AGENT_KEY);
    },
    STARTS_PROCESSES_MS,
  );

  it(
    'answers a write to an upstream in shadow mode without sending it, and seals a shadow_write decision',
    async () => {
      const store = () => createSqliteStore({ path: env.TEST_STORE ?? '' });
      const opened = store();
      const before = (await opened.readLedger({ tenant: 'acme' })).length;
      await opened.close();
      const inodeBefore = inode();
      const client = new Client({ name: 'agent-v2', version: '1.0.0' });
      await client.connect(
        new StdioClientTransport({
          ...transportParameters(),
          env: { ...transportParameters().env, TEST_MEMORY_MODE: 'shadow' },
        }),
      );
      try {
        const note = await client.callTool({
          name: 'memory.note',
          arguments: { observations: [{ entityName: 'ticket-42', contents: ['only rehearsed'] }] },
        });
        expect(note.isError).toBeFalsy();
        expect(structured(note)).toMatchObject({ decision: 'shadow_write' });
      } finally {
        await client.close();
      }
      expect(inode()).toBe(inodeBefore);
      expect(observations('ticket-42')).not.toContain('only rehearsed');
      const reopened = store();
      try {
        const decided = (await reopened.readLedger({ tenant: 'acme', afterSequence: before }))
          .filter((event) => event.type === 'gateway_decided')
          .map((event) => event.data);
        expect(decided).toEqual([
          expect.objectContaining({
            door: 'mcp',
            decision: 'shadow_write',
            reason: 'shadow_mode_write',
            subject: 'add_observations',
            requestDigest: expect.any(String),
          }),
        ]);
        expect(JSON.stringify(decided)).not.toContain('only rehearsed');
      } finally {
        await reopened.close();
      }
    },
    STARTS_PROCESSES_MS,
  );

  it(
    'refuses to start without a known agent key or without the key ring, and says what to set',
    () => {
      const missing = runMcp([], { SIDEGUARD_AGENT_KEY: '' });
      expect(missing.status).toBe(2);
      expect(missing.stderr).toContain('SIDEGUARD_AGENT_KEY is not set');
      expect(missing.stdout).toBe('');
      const wrong = runMcp([], { SIDEGUARD_AGENT_KEY: 'sk_agent_nobody_000000000' });
      expect(wrong.status).toBe(2);
      expect(wrong.stderr).toContain('is not the key of any agent');
      const noKeys = runMcp([], { SIDEGUARD_KEYS: '' });
      expect(noKeys.status).toBe(2);
      expect(noKeys.stderr).toContain('SIDEGUARD_KEYS is not set');
      const badConfig = spawnSync(
        process.execPath,
        [cliPath, 'mcp', '--config', join(dir, 'none.mjs')],
        {
          env: { ...process.env, ...env },
          encoding: 'utf8',
        },
      );
      expect(badConfig.status).toBe(2);
      expect(badConfig.stderr).toContain('the file does not exist');
    },
    STARTS_PROCESSES_MS,
  );
});
