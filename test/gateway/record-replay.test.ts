/**
 * `sideguard record` captures forwarded responses from a live session to a cases file; the same
 * upstream in `replay` mode then answers those requests from the file (query order does not
 * matter, repeated values keep theirs) and misses everything else, sending nothing upstream.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ServedGateway } from 'sideguard/gateway';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSandbox, tempDir } from '../sandbox/sandbox-helpers.js';
import { agentCall, fixtureConfig, serveFixture, type TestSandbox } from './gateway-helpers.js';
import { startServeProcess } from './serve-process.js';

let sandbox: TestSandbox;
let directory: { dir: string; cleanup: () => Promise<void> };
let casesFile: string;
let recorded: { first: string; list: string };

beforeAll(async () => {
  sandbox = await startTestSandbox();
  directory = await tempDir('sideguard-record-');
  casesFile = join(directory.dir, 'cases.json');
  const recorder = await startServeProcess(
    [
      'record',
      '--config',
      fixtureConfig,
      '--out',
      casesFile,
      '--session',
      's1',
      '--port',
      '0',
      '--upstream-port',
      'payments=0',
    ],
    {
      SG_TEST_SANDBOX_URL: sandbox.dataUrl,
      SG_TEST_STORE: join(directory.dir, 'gateway.db'),
      SG_TEST_REPLAY_MODE: 'live',
      SIDEGUARD_KEYS: `current=k1:1;effect=k1:1;k1:1=${randomBytes(32).toString('base64url')}`,
    },
  );
  const first = await agentCall(recorder.url, 'GET', '/payments-replay/v1/refunds/re_sg_001');
  const list = await agentCall(
    recorder.url,
    'GET',
    '/payments-replay/v1/refunds?limit=2&charge=ch_sg_005',
  );
  expect(first.headers.get('x-sideguard-decision')).toBe('forward');
  recorded = { first: first.text, list: list.text };
  expect(await recorder.stop()).toBe(0);
  expect(recorder.output()).toContain(`recorded 2 case(s) of session s1 to ${casesFile}`);
});
afterAll(async () => {
  await sandbox?.stop();
  await directory?.cleanup();
});

describe('record and replay', () => {
  it('writes a cases file holding what was forwarded (and no credentials)', () => {
    const text = readFileSync(casesFile, 'utf8');
    const document = JSON.parse(text) as { format: string; cases: { resource: string }[] };
    expect(document.format).toBe('sideguard-replay-cases');
    expect(document.cases.map((entry) => entry.resource)).toEqual([
      '/v1/refunds/re_sg_001?',
      '/v1/refunds?charge=ch_sg_005&limit=2',
    ]);
    expect(text).not.toContain('sk_test_sideguard_agent');
    expect(text).not.toContain('sg_agent_support');
  });

  describe('an upstream in replay mode', () => {
    let gateway: ServedGateway;
    beforeAll(async () => {
      gateway = await serveFixture(sandbox, { SG_TEST_REPLAY_CASES: casesFile });
    });
    afterAll(async () => {
      await gateway?.close();
    });

    it('answers recorded requests from the file, whatever the query order, and sends nothing', async () => {
      const before = (await sandbox.control.observations()).requests.length;
      const first = await agentCall(gateway.url, 'GET', '/payments-replay/v1/refunds/re_sg_001');
      expect(first.status).toBe(200);
      expect(first.headers.get('x-sideguard-decision')).toBe('replay');
      expect(first.text).toBe(recorded.first);
      const list = await agentCall(
        gateway.url,
        'GET',
        '/payments-replay/v1/refunds?charge=ch_sg_005&limit=2',
      );
      expect(list.text).toBe(recorded.list);
      expect((await sandbox.control.observations()).requests.length).toBe(before);
    });

    it('misses a request with no recorded case (404 replay_case_missing)', async () => {
      const missing = await agentCall(gateway.url, 'GET', '/payments-replay/v1/refunds/re_sg_002');
      expect(missing.status).toBe(404);
      expect(missing.body).toMatchObject({ code: 'replay_case_missing', decision: 'miss' });
      const otherQuery = await agentCall(
        gateway.url,
        'GET',
        '/payments-replay/v1/refunds?limit=3&charge=ch_sg_005',
      );
      expect(otherQuery.body.code).toBe('replay_case_missing');
    });
  });
});
