/**
 * A sandbox that fails to start leaves nothing behind: no state directory or files, and no
 * port still listening, whatever step failed.
 */
import { existsSync } from 'node:fs';
import { mkdir, readdir } from 'node:fs/promises';
import { createServer, type Server, Socket } from 'node:net';
import { join } from 'node:path';
import { SandboxConfigError, startSandbox } from 'sideguard/sandbox';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDir } from './sandbox-helpers.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  // Last registered first: a sandbox closes before its directory is removed.
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function scratch(): Promise<string> {
  const { dir, cleanup } = await tempDir('sideguard-start-failure-');
  cleanups.push(cleanup);
  return dir;
}

/** Occupies a loopback port until the test ends. */
async function occupyPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return (server.address() as { port: number }).port;
}

/** A port that was free a moment ago (listened on, then closed). */
async function freePort(): Promise<number> {
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

function connects(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = new Socket();
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
    socket.connect(port, '127.0.0.1');
  });
}

describe('a sandbox that fails to start', () => {
  it('creates no state directory when the fault plan names a provider that is not enabled', async () => {
    const stateDir = join(await scratch(), 'state');
    const error = await startSandbox({
      stateDir,
      providers: ['payments'],
      faults: {
        version: 1,
        rules: [{ provider: 'crm', operation: '*', fault: { kind: 'hold' } }],
      },
    }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(SandboxConfigError);
    expect(error).toMatchObject({ code: 'fault_plan_invalid' });
    expect(existsSync(stateDir)).toBe(false);
  });

  it('creates no state directory and leaves the data port closed when the control port is taken', async () => {
    const stateDir = join(await scratch(), 'state');
    const busy = await occupyPort();
    const dataPort = await freePort();
    const error = await startSandbox({ stateDir, port: dataPort, controlPort: busy }).catch(
      (caught: unknown) => caught,
    );
    expect(error).toMatchObject({ code: 'sandbox_listen_failed' });
    expect((error as Error).message).toContain(String(busy));
    expect(existsSync(stateDir)).toBe(false);
    expect(await connects(dataPort)).toBe(false);
  });

  it('creates no state directory when the data port is taken', async () => {
    const stateDir = join(await scratch(), 'state');
    const busy = await occupyPort();
    await expect(startSandbox({ stateDir, port: busy })).rejects.toMatchObject({
      code: 'sandbox_listen_failed',
    });
    expect(existsSync(stateDir)).toBe(false);
  });

  it('leaves an existing, empty state directory empty', async () => {
    const stateDir = join(await scratch(), 'state');
    await mkdir(stateDir);
    const busy = await occupyPort();
    await expect(startSandbox({ stateDir, port: busy })).rejects.toMatchObject({
      code: 'sandbox_listen_failed',
    });
    expect(await readdir(stateDir)).toEqual([]);
  });

  it('leaves an existing state alone and frees its lock, so the next start works', async () => {
    const stateDir = join(await scratch(), 'state');
    const first = await startSandbox({ stateDir, seed: 9 });
    await first.close();
    const before = (await readdir(stateDir)).sort();
    const busy = await occupyPort();
    await expect(startSandbox({ stateDir, port: busy })).rejects.toMatchObject({
      code: 'sandbox_listen_failed',
    });
    expect((await readdir(stateDir)).sort()).toEqual(before);
    const again = await startSandbox({ stateDir });
    expect(again.seed).toBe(9);
    await again.close();
  });

  it('leaves no port listening when the state directory is locked by another sandbox', async () => {
    const stateDir = join(await scratch(), 'state');
    const first = await startSandbox({ stateDir });
    cleanups.push(() => first.close());
    const dataPort = await freePort();
    const controlPort = await freePort();
    await expect(startSandbox({ stateDir, port: dataPort, controlPort })).rejects.toMatchObject({
      code: 'sandbox_state_locked',
    });
    expect(await connects(dataPort)).toBe(false);
    expect(await connects(controlPort)).toBe(false);
  });
});
