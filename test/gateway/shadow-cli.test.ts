/**
 * `sideguard shadow export` and `shadow reset` read the shadow state a gateway recorded in the
 * configured store (SQLite here), decrypting it with SIDEGUARD_KEYS; a wrong key ring cannot.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { keyRingFromEnvironmentValue } from 'sideguard';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSandbox, tempDir } from '../sandbox/sandbox-helpers.js';
import { runCli } from '../support/cli.js';
import { agentCall, fixtureConfig, serveFixture, type TestSandbox } from './gateway-helpers.js';

const keys = `current=k1:1;effect=k1:1;k1:1=${randomBytes(32).toString('base64url')}`;
let sandbox: TestSandbox;
let directory: Awaited<ReturnType<typeof tempDir>>;
let environment: Record<string, string>;

beforeAll(async () => {
  sandbox = await startTestSandbox();
  directory = await tempDir('sideguard-shadow-cli-');
  const store = join(directory.dir, 'gateway.db');
  environment = {
    SG_TEST_STORE: store,
    SG_TEST_SANDBOX_URL: sandbox.dataUrl,
    SIDEGUARD_KEYS: keys,
  };
  const gateway = await serveFixture(
    sandbox,
    { SG_TEST_STORE: store },
    { store: { kind: 'sqlite', path: store }, keyRing: keyRingFromEnvironmentValue(keys) },
  );
  try {
    const write = await agentCall(gateway.url, 'PATCH', '/crm-shadow/crm/v3/objects/tickets/5003', {
      json: { properties: { hs_pipeline_stage: '2' } },
    });
    expect(write.status).toBe(202);
  } finally {
    await gateway.close();
  }
});
afterAll(async () => {
  await sandbox?.stop();
  await directory?.cleanup();
});

describe('sideguard shadow', () => {
  it('exports the shadowed writes as JSON, decrypted with the key ring', () => {
    const run = runCli(['shadow', 'export', '--config', fixtureConfig], { env: environment });
    expect(run.status).toBe(0);
    const document = JSON.parse(run.stdout);
    expect(document).toMatchObject({ format: 'sideguard-shadow-export', version: 1 });
    expect(document.writes).toEqual([
      expect.objectContaining({
        tenant: 'acme',
        upstream: 'crm-shadow',
        method: 'PATCH',
        resource: '/crm/v3/objects/tickets/5003?',
      }),
    ]);
    expect(document.writes[0].content.body.text).toBe('{"properties":{"hs_pipeline_stage":"2"}}');
  });

  it('refuses to export with another key ring, and resets the state', () => {
    const other = `current=k9:1;effect=k9:1;k9:1=${randomBytes(32).toString('base64url')}`;
    const wrong = runCli(['shadow', 'export', '--config', fixtureConfig], {
      env: { ...environment, SIDEGUARD_KEYS: other },
    });
    expect(wrong.status).not.toBe(0);
    expect(wrong.stdout).not.toContain('hs_pipeline_stage');
    const reset = runCli(['shadow', 'reset', '--config', fixtureConfig], { env: environment });
    expect(reset.status).toBe(0);
    expect(reset.stdout).toContain('removed 1 shadowed write(s)');
    const after = runCli(['shadow', 'export', '--config', fixtureConfig], { env: environment });
    expect(JSON.parse(after.stdout).writes).toEqual([]);
  });
});
