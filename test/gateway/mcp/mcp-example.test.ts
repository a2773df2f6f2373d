/**
 * The MCP part of examples/gateway runs as documented: `sideguard serve` on the example config
 * serves `/mcp`, and the example MCP agent (SDK v2, 2026-07-28) gets one refund and the original
 * on a retry, a pending answer with a proposal, the memory server's tools wrapped, and a refusal
 * for an unbound tool. The example's pinned digests match the memory server the repo installs,
 * and `sideguard mcp` serves the same config on stdio next to the running `serve`.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterAll, describe, expect, it } from 'vitest';
import { cliPath, projectRoot, runCli } from '../../support/cli.js';
import { type ServeProcess, startServeProcess } from '../serve-process.js';
import { structured, tempDir } from './mcp-test-kit.js';

const CONFIG = join('examples', 'gateway', 'sideguard.config.ts');
/** Starts the sandbox, the gateway and the memory server: a while on a loaded machine. */
const STARTS_PROCESSES_MS = 180_000;

const KEYS = `current=k1:1;effect=k1:1;k1:1=${randomBytes(32).toString('base64url')}`;
let gateway: ServeProcess | undefined;
let directory: Awaited<ReturnType<typeof tempDir>> | undefined;
afterAll(async () => {
  expect(await gateway?.stop()).toBe(0);
  await directory?.cleanup();
});

describe('examples/gateway over MCP', () => {
  it(
    'passes config check with its pinned memory-server tools',
    async () => {
      directory = await tempDir('sideguard-example-mcp-');
      const checked = runCli(['config', 'check', '--config', CONFIG], {
        env: { SIDEGUARD_MEMORY_FILE: join(directory.dir, 'memory.jsonl') },
      });
      expect(checked.status).toBe(0);
      expect(checked.stdout).toContain('create_entities');
      expect(checked.stdout).toContain('pinned by binding memory.remember');
      expect(checked.stdout).toContain('pinned by binding memory.open');
    },
    STARTS_PROCESSES_MS,
  );

  it(
    'serves the example agent over /mcp: one refund, its original on a retry, a proposal, wrapped tools',
    async () => {
      directory ??= await tempDir('sideguard-example-mcp-');
      gateway = await startServeProcess(
        ['serve', '--config', CONFIG, '--port', '0', '--upstream-port', 'payments=0'],
        {
          SIDEGUARD_KEYS: KEYS,
          SIDEGUARD_GATEWAY_STORE: join(directory.dir, 'gateway.db'),
          SIDEGUARD_SANDBOX_DIR: join(directory.dir, 'sandbox'),
          SIDEGUARD_MEMORY_FILE: join(directory.dir, 'memory.jsonl'),
        },
      );
      const output = execFileSync(
        process.execPath,
        [join(projectRoot, 'examples', 'gateway', 'mcp-agent.mjs')],
        {
          cwd: projectRoot,
          encoding: 'utf8',
          env: {
            ...process.env,
            GATEWAY_MCP_URL: `${gateway.url.replace('127.0.0.1', 'localhost')}/mcp`,
          },
        },
      );
      expect(output).toContain(
        'tools: support.refund.v1, memory.remember, memory.open, sideguard_proposal',
      );
      expect(output).toMatch(/^refund -> completed \(receipt re_\w+\)$/m);
      expect(output).toContain('asked again -> the original refund');
      expect(output).toMatch(/large refund -> approval_required \(proposal prop_\w+\)/);
      expect(output).toContain('proposal status -> awaiting_authority, needs 1 more approval');
      expect(output).toContain('remember -> completed');
      expect(output).toContain('open -> refund requested');
      expect(output).toContain('unbound tool -> refused tool_not_bound');
    },
    STARTS_PROCESSES_MS,
  );

  it(
    'runs the same config on stdio with sideguard mcp, sharing the store (and, given its URL, the sandbox)',
    async () => {
      if (gateway === undefined || directory === undefined)
        throw new Error('needs the gateway above');
      const sandboxUrl = /sandbox data plane:\s+(http:\/\/\S+)/.exec(gateway.output())?.[1] ?? '';
      const env = {
        ...(process.env as Record<string, string>),
        SIDEGUARD_KEYS: KEYS,
        SIDEGUARD_AGENT_KEY: 'sg_demo_support_agent_key',
        SIDEGUARD_GATEWAY_STORE: join(directory.dir, 'gateway.db'),
        SIDEGUARD_MEMORY_FILE: join(directory.dir, 'memory.jsonl'),
      };
      const connect = async (extra: string[]) => {
        const client = new Client({ name: 'stdio-agent', version: '1.0.0' });
        await client.connect(
          new StdioClientTransport({
            command: process.execPath,
            args: [cliPath, 'mcp', '--config', CONFIG, '--quiet-upstreams', ...extra],
            cwd: projectRoot,
            env,
            stderr: 'ignore',
          }),
        );
        return client;
      };
      const withSandbox = await connect(['--sandbox-url', sandboxUrl]);
      try {
        // The refund the /mcp agent made above: the same effect, from another process.
        const same = await withSandbox.callTool({
          name: 'support.refund.v1',
          arguments: { charge: 'ch_sg_003', amount: '1500' },
        });
        expect(structured(same)).toMatchObject({ code: 'completed', duplicate: true });
      } finally {
        await withSandbox.close();
      }
      const without = await connect([]);
      try {
        const refused = await without.callTool({
          name: 'support.refund.v1',
          arguments: { charge: 'ch_sg_001', amount: '700' },
        });
        expect(refused.isError).toBe(true);
        expect(structured(refused)).toMatchObject({ code: 'upstream_unavailable' });
        expect(structured(refused).hint).toContain('--sandbox-url');
        const read = await without.callTool({
          name: 'memory.open',
          arguments: { names: ['ticket-5001'] },
        });
        expect(JSON.stringify(read.structuredContent)).toContain('refund requested');
      } finally {
        await without.close();
      }
    },
    STARTS_PROCESSES_MS,
  );
});
