import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type RunningSandbox, startSandbox } from 'sideguard/sandbox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

let sandbox: RunningSandbox;
let stateDir: string;

beforeAll(async () => {
  stateDir = await mkdtemp(join(tmpdir(), 'sideguard-reset-'));
  sandbox = await startSandbox({ stateDir, seed: 1 });
});
afterAll(async () => {
  await sandbox.close();
  await rm(stateDir, { recursive: true, force: true });
});

const refund = (key: string) =>
  fetch(`${sandbox.dataUrl}/v1/refunds`, {
    method: 'POST',
    headers: {
      authorization: 'Bearer sk_test_sideguard_agent',
      'content-type': 'application/x-www-form-urlencoded',
      'idempotency-key': key,
    },
    body: 'charge=ch_sg_001&amount=100&metadata[sideguard_effect]=effect-old-world',
  });

describe('a reset while requests are in flight', () => {
  it('ends a hung request at once and keeps it out of the new observations', async () => {
    await sandbox.control.setFaults({
      version: 1,
      rules: [
        {
          provider: 'payments',
          operation: 'create_refund',
          requests: [0],
          fault: { kind: 'hang_after_write', hangMs: 60_000 },
        },
      ],
    });
    const hung = refund('k-hung').then(
      () => 'answered',
      () => 'connection closed',
    );
    await new Promise((resolve) => setTimeout(resolve, 200));
    const started = Date.now();
    await sandbox.control.reset();
    expect(await hung).toBe('connection closed');
    expect(Date.now() - started).toBeLessThan(5_000);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const observations = await sandbox.control.observations();
    expect(observations.requests).toEqual([]);
    expect(observations.trace).toEqual([]);
    expect(observations.receipts).toEqual([]);
  });

  it('never executes a delayed request that was waiting when the reset came', async () => {
    await sandbox.control.setFaults({
      version: 1,
      rules: [
        {
          provider: 'payments',
          operation: 'create_refund',
          requests: [0],
          fault: { kind: 'latency', latencyMs: 60_000 },
        },
      ],
    });
    const delayed = refund('k-delayed').then(
      () => 'answered',
      () => 'connection closed',
    );
    await new Promise((resolve) => setTimeout(resolve, 200));
    await sandbox.control.reset();
    expect(await delayed).toBe('connection closed');
    const observations = await sandbox.control.observations();
    expect(observations.writes.total).toBe(0);
    expect(observations.requests).toEqual([]);
  });
});
