/**
 * The control plane (token, health, export, snapshots, Unix socket) and file-backed state that
 * survives a restart of the sandbox.
 */
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { SandboxControlClient, startSandbox } from 'sideguard/sandbox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, keys, rawRequest, startTestSandbox, tempDir } from './sandbox-helpers.js';

type Sandbox = Awaited<ReturnType<typeof startTestSandbox>>;

describe('control plane', () => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await startTestSandbox();
  });
  afterAll(async () => {
    await sandbox.stop();
  });

  it('requires the bearer token: 401 without it or with a wrong one', async () => {
    const url = sandbox.controlUrl ?? '';
    const none = await rawRequest(url, 'GET', '/health');
    expect(none.kind === 'response' && none.status).toBe(401);
    const wrong = await rawRequest(url, 'POST', '/reset', {
      headers: { Authorization: 'Bearer not-the-token-at-all' },
    });
    expect(wrong.kind === 'response' && wrong.status).toBe(401);
    expect(wrong.kind === 'response' && JSON.parse(wrong.body).error.code).toBe('unauthorized');
    await expect(
      new SandboxControlClient({ url, token: 'wrong-token-wrong-token' }).health(),
    ).rejects.toMatchObject({ status: 401 });
  });

  it('reports health with the data URL, providers and idempotency modes', async () => {
    expect(await sandbox.control.health()).toEqual({
      status: 'ok',
      seed: 42,
      dataUrl: sandbox.dataUrl,
      providers: ['payments', 'crm', 'issues', 'orders'],
      idempotency: { payments: 'honour' },
      faultPlanActive: false,
      heldCount: 0,
    });
  });

  it('exports state, observations and trace in one document', async () => {
    await call(sandbox.dataUrl, 'POST', '/v1/refunds', {
      key: keys.paymentsWriter,
      form: { charge: 'ch_sg_002', amount: '77', 'metadata[sideguard_effect]': 'exported' },
    });
    const exported = await sandbox.control.export();
    expect(exported).toMatchObject({
      format: 'sideguard-sandbox-export',
      version: 1,
      seed: 42,
      faultPlan: null,
    });
    expect(exported.digest).toBe((await sandbox.control.digest()).digest);
    const refunds = exported.state.payments?.refunds ?? [];
    expect(refunds.some(([, refund]) => refund.amount === 77)).toBe(true);
    expect(exported.observations.writes.byEffect.exported?.count).toBe(1);
    expect(exported.observations.trace.at(-1)).toMatchObject({
      operation: 'create_refund',
      writeOutcome: 'committed',
    });
    expect(Object.keys(exported.state).sort()).toEqual(['crm', 'issues', 'orders', 'payments']);
  });

  it('takes and restores named snapshots; receipts already issued stay', async () => {
    await sandbox.control.reset();
    await sandbox.control.snapshot('clean');
    const clean = await sandbox.control.digest();
    await call(sandbox.dataUrl, 'POST', '/v1/refunds', {
      key: keys.paymentsWriter,
      form: { charge: 'ch_sg_003', amount: '5' },
    });
    expect((await sandbox.control.digest()).digest).not.toBe(clean.digest);
    expect(await sandbox.control.listSnapshots()).toEqual({ snapshots: ['clean'] });
    expect((await sandbox.control.restore('clean')).digest).toBe(clean.digest);
    expect((await sandbox.control.digest()).writeCount).toBe(1);
    await expect(sandbox.control.restore('nope')).rejects.toMatchObject({
      code: 'sandbox_snapshot_missing',
    });
    await expect(sandbox.control.snapshot('../escape')).rejects.toMatchObject({
      status: 400,
      code: 'sandbox_snapshot_name_invalid',
    });
    await expect(sandbox.control.snapshot('bad name')).rejects.toMatchObject({
      code: 'sandbox_snapshot_name_invalid',
    });
  });

  it('never repeats a Request-Id, not even after a reset', async () => {
    const ids: string[] = [];
    for (let round = 0; round < 3; round++) {
      await sandbox.control.reset();
      for (let index = 0; index < 3; index++) {
        const answer = await call(sandbox.dataUrl, 'GET', '/v1/charges/ch_sg_001', {
          key: keys.paymentsWriter,
        });
        ids.push(answer.headers.get('request-id') ?? '');
      }
    }
    expect(ids.every((id) => /^req_/.test(id))).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('reset returns to the seed digest and clears observations', async () => {
    const seeded = (await sandbox.control.reset()).digest;
    await call(sandbox.dataUrl, 'POST', '/v1/refunds', {
      key: keys.paymentsWriter,
      form: { charge: 'ch_sg_003', amount: '5' },
    });
    const again = await sandbox.control.reset();
    expect(again.digest).toBe(seeded);
    const observations = await sandbox.control.observations();
    expect(observations.writes.total).toBe(0);
    expect(observations.requests).toHaveLength(0);
  });
});

describe('control plane on a Unix socket', () => {
  it('listens with mode 0600 and serves the same client API', async () => {
    const { dir, cleanup } = await tempDir();
    const socket = join(dir, 'control.sock');
    const sandbox = await startSandbox({ stateDir: join(dir, 'state'), controlSocket: socket });
    try {
      expect(sandbox.controlUrl).toBeUndefined();
      expect(sandbox.controlTokenSource).toBe('generated');
      expect((await stat(socket)).mode & 0o777).toBe(0o600);
      expect((await sandbox.control.health()).status).toBe('ok');
      const wrong = new SandboxControlClient({
        socketPath: socket,
        token: 'another-token-entirely',
      });
      await expect(wrong.health()).rejects.toMatchObject({ status: 401 });
    } finally {
      await sandbox.close();
      await cleanup();
    }
  });
});

describe('file-backed state', () => {
  it('survives a restart on the same state directory, with receipts and idempotency keys', async () => {
    const { dir, cleanup } = await tempDir();
    try {
      const first = await startSandbox({ stateDir: dir, seed: 5 });
      const created = await call(first.dataUrl, 'POST', '/v1/refunds', {
        key: keys.paymentsWriter,
        form: { charge: 'ch_sg_001', amount: '123', 'metadata[sideguard_effect]': 'durable' },
        headers: { 'Idempotency-Key': 'restart-key' },
      });
      expect(created.status).toBe(200);
      const digest = (await first.control.digest()).digest;
      await first.close();

      const second = await startSandbox({ stateDir: dir });
      try {
        expect(second.seed).toBe(5);
        const fetched = await call(second.dataUrl, 'GET', `/v1/refunds/${created.body.id}`, {
          key: keys.paymentsWriter,
        });
        expect(fetched.body).toEqual(created.body);
        expect((await second.control.digest()).digest).toBe(digest);
        expect((await second.control.observations()).writes.byEffect.durable?.count).toBe(1);
        const replay = await call(second.dataUrl, 'POST', '/v1/refunds', {
          key: keys.paymentsWriter,
          form: { charge: 'ch_sg_001', amount: '123', 'metadata[sideguard_effect]': 'durable' },
          headers: { 'Idempotency-Key': 'restart-key' },
        });
        expect(replay.headers.get('idempotent-replayed')).toBe('true');
        expect(replay.body.id).toBe(created.body.id);
      } finally {
        await second.close();
      }
      await expect(startSandbox({ stateDir: dir, seed: 6 })).rejects.toMatchObject({
        code: 'sandbox_seed_mismatch',
      });
    } finally {
      await cleanup();
    }
  });

  it('refuses a second sandbox on a directory in use', async () => {
    const { dir, cleanup } = await tempDir();
    const first = await startSandbox({ stateDir: dir });
    try {
      await expect(startSandbox({ stateDir: dir })).rejects.toMatchObject({
        code: 'sandbox_state_locked',
      });
    } finally {
      await first.close();
      await cleanup();
    }
  });
});
