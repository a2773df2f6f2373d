/**
 * `sideguard sandbox serve` as a user runs it (the built CLI): banner, a working data plane,
 * the token source, clean shutdown on SIGTERM, and one-line errors.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { SandboxControlClient } from 'sideguard/sandbox';
import { describe, expect, it } from 'vitest';
import { call, keys, tempDir } from './sandbox-helpers.js';

const cli = join(process.cwd(), 'dist', 'cli', 'main.js');

function run(args: string[], env: Record<string, string> = {}) {
  const child = spawn(process.execPath, [cli, ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const output = () => ({ stdout, stderr });
  const waitFor = async (text: string, timeoutMs = 10_000) => {
    const deadline = Date.now() + timeoutMs;
    while (!stdout.includes(text)) {
      if (Date.now() > deadline || child.exitCode !== null)
        throw new Error(`CLI did not print ${JSON.stringify(text)}: ${stdout}${stderr}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };
  return { child, exited, output, waitFor };
}

describe('sideguard sandbox serve', () => {
  it('prints the URLs, the token source and a curl example, serves, and stops cleanly on SIGTERM', async () => {
    const { dir, cleanup } = await tempDir();
    try {
      const tokenFile = join(dir, 'token');
      await writeFile(tokenFile, 'cli-test-token-0123456789\n');
      const state = join(dir, 'state');
      const serve = run([
        'sandbox',
        'serve',
        '--state-dir',
        state,
        '--port',
        '0',
        '--control-port',
        '0',
        '--token-file',
        tokenFile,
        '--seed',
        '3',
      ]);
      await serve.waitFor('stop with Ctrl-C');
      const { stdout } = serve.output();
      const dataUrl = /data plane:\s+(\S+)/.exec(stdout)?.[1] ?? '';
      const controlUrl = /control plane:\s+(\S+)/.exec(stdout)?.[1] ?? '';
      expect(stdout).toContain(`control token: from ${tokenFile}`);
      expect(stdout).not.toContain('cli-test-token');
      expect(stdout).toContain(
        `try: curl -s '${dataUrl}/v1/refunds?limit=3' -H 'Authorization: Bearer sk_test_sideguard_agent'`,
      );
      const listed = await call(dataUrl, 'GET', '/v1/refunds?limit=3', {
        key: keys.paymentsWriter,
      });
      expect(listed.status).toBe(200);
      expect(
        (
          await new SandboxControlClient({
            url: controlUrl,
            token: 'cli-test-token-0123456789',
          }).health()
        ).seed,
      ).toBe(3);
      serve.child.kill('SIGTERM');
      expect(await serve.exited).toBe(0);
      expect(existsSync(join(state, 'sandbox.lock'))).toBe(false);
      expect(existsSync(join(state, 'state.json'))).toBe(true);
    } finally {
      await cleanup();
    }
  });

  it('prints a generated token once and ignores idempotency keys when asked', async () => {
    const { dir, cleanup } = await tempDir();
    try {
      const serve = run(
        [
          'sandbox',
          'serve',
          '--state-dir',
          dir,
          '--port',
          '0',
          '--control-port',
          '0',
          '--ignore-idempotency',
          'payments',
        ],
        {
          SIDEGUARD_SANDBOX_TOKEN: '',
        },
      );
      await serve.waitFor('stop with Ctrl-C');
      const token = /generated, shown once: (\S+)/.exec(serve.output().stdout)?.[1] ?? '';
      const controlUrl = /control plane:\s+(\S+)/.exec(serve.output().stdout)?.[1] ?? '';
      expect(
        (await new SandboxControlClient({ url: controlUrl, token }).health()).idempotency,
      ).toEqual({ payments: 'ignore' });
      serve.child.kill('SIGINT');
      expect(await serve.exited).toBe(0);
    } finally {
      await cleanup();
    }
  });

  it('serves the data plane on --host and keeps the control plane on loopback', async () => {
    const { dir, cleanup } = await tempDir();
    try {
      const serve = run(
        [
          'sandbox',
          'serve',
          '--state-dir',
          dir,
          '--host',
          '127.0.0.2',
          '--port',
          '0',
          '--control-port',
          '0',
        ],
        { SIDEGUARD_SANDBOX_TOKEN: 'host-test-token-0123456789' },
      );
      await serve.waitFor('stop with Ctrl-C');
      const { stdout } = serve.output();
      const dataUrl = /data plane:\s+(\S+)/.exec(stdout)?.[1] ?? '';
      const controlUrl = /control plane:\s+(\S+)/.exec(stdout)?.[1] ?? '';
      expect(dataUrl).toMatch(/^http:\/\/127\.0\.0\.2:\d+$/);
      expect(controlUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const port = new URL(dataUrl).port;
      expect(
        (await call(dataUrl, 'GET', '/v1/charges/ch_sg_001', { key: keys.paymentsReader })).status,
      ).toBe(200);
      // Bound to 127.0.0.2 only: the same port on 127.0.0.1 is not this sandbox.
      const elsewhere = await fetch(`http://127.0.0.1:${port}/v1/charges/ch_sg_001`).then(
        (response) => response.status,
        () => 'refused',
      );
      expect(elsewhere).toBe('refused');
      const health = await new SandboxControlClient({
        url: controlUrl,
        token: 'host-test-token-0123456789',
      }).health();
      expect(health.dataUrl).toBe(dataUrl);
      serve.child.kill('SIGTERM');
      expect(await serve.exited).toBe(0);
    } finally {
      await cleanup();
    }
  });

  it('serves only the providers named by --provider, with a first request for one of them', async () => {
    const { dir, cleanup } = await tempDir();
    let serve: ReturnType<typeof run> | undefined;
    try {
      serve = run([
        'sandbox',
        'serve',
        '--state-dir',
        join(dir, 'state'),
        '--port',
        '0',
        '--control-port',
        '0',
        '--provider',
        'retail',
      ]);
      await serve.waitFor('stop with Ctrl-C');
      const { stdout } = serve.output();
      expect(stdout).toMatch(/^sideguard sandbox: retail \(seed /m);
      const dataUrl = /data plane:\s+(\S+)/.exec(stdout)?.[1] ?? '';
      const tried = /try: curl -s '([^']+)' -H 'Authorization: Bearer ([^']+)'/.exec(stdout);
      expect(tried?.[1]).toBe(`${dataUrl}/retail/v1/get_user_details?user_id=yusuf_rossi_9620`);
      const user = await fetch(tried?.[1] ?? '', {
        headers: { authorization: `Bearer ${tried?.[2] ?? ''}` },
      });
      expect(user.status).toBe(200);
      const details = (await user.json()) as { result: { email: string } };
      expect(details.result.email).toBe('yusuf.rossi7301@example.com');
      const payments = await call(dataUrl, 'GET', '/v1/refunds?limit=3', {
        key: keys.paymentsWriter,
      });
      expect(payments.status).toBe(404);
      serve.child.kill('SIGTERM');
      expect(await serve.exited).toBe(0);
    } finally {
      // A failed assertion must not leave the server running.
      if (serve?.child.exitCode === null) serve.child.kill('SIGKILL');
      await cleanup();
    }
  });

  it('refuses an unknown --provider with one line naming the built-in ones, exit 2', async () => {
    const { dir, cleanup } = await tempDir();
    try {
      const state = join(dir, 'state');
      const serve = run(['sandbox', 'serve', '--state-dir', state, '--provider', 'payments,bank']);
      expect(await serve.exited).toBe(2);
      const lines = serve.output().stderr.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(
        /Unknown provider "bank" \(built-in: payments, crm, issues, orders, retail\)/,
      );
      expect(existsSync(state)).toBe(false);
    } finally {
      await cleanup();
    }
  });

  it('refuses a bad --host with one line, exit 2, and no state directory', async () => {
    const { dir, cleanup } = await tempDir();
    try {
      const state = join(dir, 'state');
      const serve = run(['sandbox', 'serve', '--state-dir', state, '--host', 'not a host!']);
      expect(await serve.exited).toBe(2);
      const lines = serve.output().stderr.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/^sideguard sandbox: Invalid host "not a host!": use an IP address/);
      expect(existsSync(state)).toBe(false);
    } finally {
      await cleanup();
    }
  });

  it('fails with one clear line and a non-zero exit on a bad fault plan', async () => {
    const { dir, cleanup } = await tempDir();
    try {
      const plan = join(dir, 'plan.json');
      await writeFile(
        plan,
        JSON.stringify({
          version: 1,
          rules: [
            {
              provider: 'payments',
              operation: 'create_refund',
              fault: { kind: 'latency', latencyMs: -1 },
            },
          ],
        }),
      );
      const serve = run(['sandbox', 'serve', '--state-dir', dir, '--port', '0', '--faults', plan]);
      expect(await serve.exited).toBe(2);
      const lines = serve.output().stderr.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(
        /^sideguard sandbox: Invalid fault plan .*plan\.json: rules\[0\]\.fault\.latencyMs: /,
      );
    } finally {
      await cleanup();
    }
  });
});
