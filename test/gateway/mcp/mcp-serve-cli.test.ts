import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../support/cli.js';
import { startServeProcess } from '../serve-process.js';
import {
  connectModern,
  MEMORY_AGENT_KEY,
  MEMORY_CONFIG,
  memoryEnvironment,
  structured,
  tempDir,
} from './mcp-test-kit.js';

const CONFIG = MEMORY_CONFIG;
/** Each test starts several Node processes; on a loaded machine that takes a while. */
const STARTS_PROCESSES_MS = 180_000;

describe('the MCP door through sideguard config check and sideguard serve', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  let env: Record<string, string>;

  beforeAll(async () => {
    ({ dir, cleanup } = await tempDir());
    env = memoryEnvironment(dir, 'order-7');
  });

  afterAll(async () => {
    await cleanup();
  });

  it(
    'config check names a pin that differs, with the digest to pin, and passes once pinned',
    () => {
      const unpinned = runCli(['config', 'check', '--config', CONFIG], { env });
      expect(unpinned.status).toBe(2);
      const digestOf = (path: string, tool: string) =>
        new RegExp(
          `${path}: tool "${tool}" of upstream "memory" is now (sha256:[0-9a-f]{64})`,
        ).exec(unpinned.stdout)?.[1];
      const note = digestOf('bindings\\[0\\]\\.toolDigest', 'add_observations');
      const open = digestOf('bindings\\[1\\]\\.toolDigest', 'open_nodes');
      expect(note).toMatch(/^sha256:/);
      expect(open).toMatch(/^sha256:/);
      env.TEST_NOTE_DIGEST = note ?? '';
      env.TEST_OPEN_DIGEST = open ?? '';

      const pinned = runCli(['config', 'check', '--config', CONFIG], { env });
      expect(pinned.status).toBe(0);
      expect(pinned.stdout).toContain(
        'mcp tools (served at /mcp and by `sideguard mcp`): crm.note.v1, memory.note, memory.open, sideguard_proposal',
      );
      expect(pinned.stdout).toMatch(
        /add_observations {2}sha256:[0-9a-f]{64} {2}pinned by binding memory\.note/,
      );

      // Without starting the servers the pins cannot be checked, and the check says so.
      const offline = runCli(['config', 'check', '--no-upstreams', '--config', CONFIG], {
        env: { ...env, TEST_NOTE_DIGEST: `sha256:${'1'.repeat(64)}` },
      });
      expect(offline.status).toBe(0);
      expect(offline.stdout).toContain('mcp upstreams: not started (--no-upstreams)');
    },
    STARTS_PROCESSES_MS,
  );

  it(
    'serve mounts /mcp: a guarded call through it reaches the memory server once',
    async () => {
      const served = await startServeProcess(['serve', '--config', CONFIG, '--port', '0'], env);
      try {
        expect(served.output()).toContain('MCP clients (streamable HTTP) at');
        const url = new URL(`${served.url.replace('127.0.0.1', 'localhost')}/mcp`);
        const client = await connectModern(url, MEMORY_AGENT_KEY);
        try {
          const args = { observations: [{ entityName: 'order-7', contents: ['refund promised'] }] };
          const first = await client.callTool({ name: 'memory.note', arguments: args });
          expect(structured(first)).toMatchObject({ code: 'completed', duplicate: false });
          const again = await client.callTool({ name: 'memory.note', arguments: args });
          expect(structured(again)).toMatchObject({ code: 'completed', duplicate: true });
        } finally {
          await client.close();
        }
      } finally {
        expect(await served.stop()).toBe(0);
      }
    },
    STARTS_PROCESSES_MS,
  );
});
