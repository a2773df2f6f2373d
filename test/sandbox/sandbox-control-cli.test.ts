/**
 * `sideguard sandbox reset|export|observe` (the built CLI) against a running sandbox's control
 * plane: address and token from flags or the environment, readable and JSON output, and one
 * clear line with exit 2 for every kind of bad input.
 */
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runCliAsync } from '../support/cli.js';
import { call, keys, startTestSandbox, tempDir } from './sandbox-helpers.js';

type Sandbox = Awaited<ReturnType<typeof startTestSandbox>>;

const token = 'control-cli-token-0123456789';
let sandbox: Sandbox;
let scratch: { dir: string; cleanup: () => Promise<void> };
let tokenFile: string;
/** Flags that reach the test sandbox. */
let reach: string[];

beforeAll(async () => {
  scratch = await tempDir('sideguard-control-cli-');
  tokenFile = join(scratch.dir, 'token');
  await writeFile(tokenFile, `${token}\n`);
  sandbox = await startTestSandbox({ controlToken: token });
  reach = ['--control-url', sandbox.controlUrl ?? '', '--token-file', tokenFile];
});
afterAll(async () => {
  await sandbox.stop();
  await scratch.cleanup();
});
beforeEach(async () => {
  await sandbox.control.reset();
  await sandbox.control.clearFaults();
});

const refund = (effect: string) =>
  call(sandbox.dataUrl, 'POST', '/v1/refunds', {
    key: keys.paymentsWriter,
    form: { charge: 'ch_sg_001', amount: '3', 'metadata[sideguard_effect]': effect },
  });

/** Runs the CLI without inheriting a token or address from the developer's environment. */
const sideguard = (args: string[], env: Record<string, string> = {}) =>
  runCliAsync(args, {
    env: { SIDEGUARD_SANDBOX_TOKEN: '', SIDEGUARD_SANDBOX_CONTROL_URL: '', ...env },
  });

describe('sideguard sandbox reset', () => {
  it('returns the sandbox to its seed and says so', async () => {
    await refund('before-reset');
    const seeded = await sandbox.control.digest();
    expect(seeded.writeCount).toBe(1);
    const run = await sideguard(['sandbox', 'reset', ...reach]);
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/^reset: seed 42, state digest [0-9a-f]{12}…\n$/);
    expect((await sandbox.control.digest()).writeCount).toBe(0);
    const json = await sideguard(['sandbox', 'reset', ...reach, '--json']);
    expect(JSON.parse(json.stdout)).toMatchObject({ status: 'reset', seed: 42 });
  });

  it('takes the address and the token from the environment', async () => {
    await refund('env');
    const run = await sideguard(['sandbox', 'reset'], {
      SIDEGUARD_SANDBOX_TOKEN: token,
      SIDEGUARD_SANDBOX_CONTROL_URL: sandbox.controlUrl ?? '',
    });
    expect(run.status).toBe(0);
    expect((await sandbox.control.digest()).writeCount).toBe(0);
  });
});

describe('sideguard sandbox export', () => {
  it('prints the export document, or writes it to --output', async () => {
    await refund('exported');
    const printed = await sideguard(['sandbox', 'export', ...reach]);
    expect(printed.status).toBe(0);
    const document = JSON.parse(printed.stdout);
    expect(document).toMatchObject({ format: 'sideguard-sandbox-export', version: 1, seed: 42 });
    expect(document.observations.writes.byEffect.exported.count).toBe(1);

    const file = join(scratch.dir, 'export.json');
    const written = await sideguard(['sandbox', 'export', ...reach, '--output', file]);
    expect(written.status).toBe(0);
    expect(written.stdout).toMatch(/^export: .*export\.json \(seed 42, 1 write, 1 request\)\n$/);
    const saved = JSON.parse(await readFile(file, 'utf8'));
    expect(saved.digest).toBe(document.digest);
  });
});

describe('sideguard sandbox observe', () => {
  it('summarises writes, requests, faults and what is still in flight', async () => {
    await sandbox.control.setFaults({
      version: 1,
      rules: [
        {
          provider: 'payments',
          operation: 'create_refund',
          requests: [1],
          fault: { kind: 'hold' },
        },
      ],
    });
    await refund('observed');
    const held = refund('held');
    await sandbox.control.waitForHeld(1);
    const run = await sideguard(['sandbox', 'observe', ...reach]);
    expect(run.status).toBe(0);
    const lines = run.stdout.trim().split('\n');
    expect(lines[0]).toBe('writes: 1 (payments.create_refund 1)');
    expect(lines[1]).toBe('requests: 1 finished, 1 in flight, 0 dropped from the log');
    expect(lines[2]).toMatch(
      /^ {2}in flight: req_\S+ POST payments\.create_refund held \(fault hold, write not_dispatched\)$/,
    );
    expect(lines[3]).toBe('faults: 1 decision (none 1)');
    const json = await sideguard(['sandbox', 'observe', ...reach, '--json']);
    const observations = JSON.parse(json.stdout);
    expect(observations.inFlight).toHaveLength(1);
    expect(observations.writes.total).toBe(1);
    await sandbox.control.releaseAll();
    expect((await held).status).toBe(200);
  });

  it('works over a Unix socket control plane', async () => {
    const { dir, cleanup } = await tempDir();
    const socket = join(dir, 'control.sock');
    const onSocket = await startTestSandbox({ controlSocket: socket, controlToken: token });
    try {
      const run = await sideguard(['sandbox', 'observe', '--control-socket', socket], {
        SIDEGUARD_SANDBOX_TOKEN: token,
      });
      expect(run.stderr).toBe('');
      expect(run.stdout).toMatch(/^writes: 0\n/);
    } finally {
      await onSocket.stop();
      await cleanup();
    }
  });
});

describe('bad input: one line on stderr, exit 2', () => {
  const observe = (...flags: string[]) => sideguard(['sandbox', 'observe', ...flags]);
  const expectUsage = (run: { status: number | null; stderr: string; stdout: string }) => {
    expect(run.status).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    return run.stderr.trim();
  };

  it('no token anywhere', async () => {
    const line = expectUsage(await observe('--control-url', sandbox.controlUrl ?? ''));
    expect(line).toMatch(
      /^sideguard: no control token: pass --token-file FILE or set SIDEGUARD_SANDBOX_TOKEN/,
    );
  });

  it('a token the control plane refuses', async () => {
    const wrong = join(scratch.dir, 'wrong-token');
    await writeFile(wrong, 'not-the-token-at-all-0123');
    const line = expectUsage(
      await sideguard([
        'sandbox',
        'reset',
        '--control-url',
        sandbox.controlUrl ?? '',
        '--token-file',
        wrong,
      ]),
    );
    expect(line).toMatch(
      /^sideguard: the control plane at http:\/\/127\.0\.0\.1:\d+ refused the token \(401\)/,
    );
    expect((await sandbox.control.health()).status).toBe('ok');
  });

  it('an address where no sandbox listens', async () => {
    const { createServer } = await import('node:net');
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    await new Promise<void>((resolve) => server.close(() => resolve()));
    const line = expectUsage(
      await observe('--control-url', `http://127.0.0.1:${port}`, '--token-file', tokenFile),
    );
    expect(line).toMatch(
      new RegExp(
        `^sideguard: cannot reach the sandbox control plane at http://127\\.0\\.0\\.1:${port} \\(ECONNREFUSED\\)`,
      ),
    );
  });

  it('a malformed URL, both a URL and a socket, an unreadable token file', async () => {
    expect(
      expectUsage(await observe('--control-url', 'ftp://x', '--token-file', tokenFile)),
    ).toMatch(/^sideguard: --control-url "ftp:\/\/x" is not an http:\/\/ URL/);
    expect(
      expectUsage(
        await observe(
          '--control-url',
          sandbox.controlUrl ?? '',
          '--control-socket',
          '/tmp/x.sock',
          '--token-file',
          tokenFile,
        ),
      ),
    ).toMatch(/^sideguard: use --control-url or --control-socket, not both/);
    expect(
      expectUsage(
        await observe(
          '--control-url',
          sandbox.controlUrl ?? '',
          '--token-file',
          join(scratch.dir, 'missing'),
        ),
      ),
    ).toMatch(/^sideguard: cannot read the token file .*missing \(ENOENT\)/);
  });

  it('an --output file in a directory that does not exist (nothing is written)', async () => {
    const target = join(scratch.dir, 'no', 'such', 'dir', 'export.json');
    expect(
      expectUsage(await sideguard(['sandbox', 'export', ...reach, '--output', target])),
    ).toMatch(/^sideguard: cannot write .*export\.json \(ENOENT\)/);
    expect(existsSync(target)).toBe(false);
  });
});
