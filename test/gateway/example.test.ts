/**
 * examples/gateway runs as documented: `sideguard serve --config examples/gateway/sideguard.config.ts`
 * starts the sandbox and the gateway, and the example agent (the official stripe client and
 * fetch) refunds once, gets the original refund when it asks again, is told to wait for approval
 * over the limit, updates a ticket, and is refused an unbound write.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from '../sandbox/sandbox-helpers.js';
import { projectRoot } from '../support/cli.js';
import { type ServeProcess, startServeProcess } from './serve-process.js';

let gateway: ServeProcess | undefined;
let directory: Awaited<ReturnType<typeof tempDir>> | undefined;
afterAll(async () => {
  expect(await gateway?.stop()).toBe(0);
  await directory?.cleanup();
});

describe('examples/gateway', () => {
  it('serves the example config and the example agent gets one refund, a replay and its refusals', async () => {
    directory = await tempDir('sideguard-example-gateway-');
    gateway = await startServeProcess(
      [
        'serve',
        '--config',
        join('examples', 'gateway', 'sideguard.config.ts'),
        '--port',
        '0',
        '--upstream-port',
        'payments=0',
      ],
      {
        SIDEGUARD_KEYS: `current=k1:1;effect=k1:1;k1:1=${randomBytes(32).toString('base64url')}`,
        SIDEGUARD_GATEWAY_STORE: join(directory.dir, 'gateway.db'),
        SIDEGUARD_SANDBOX_DIR: join(directory.dir, 'sandbox'),
      },
    );
    expect(gateway.output()).toContain('sandbox data plane:');
    const output = execFileSync(
      process.execPath,
      [join(projectRoot, 'examples', 'gateway', 'agent.mjs')],
      {
        cwd: projectRoot,
        encoding: 'utf8',
        env: {
          ...process.env,
          GATEWAY_PAYMENTS_URL: gateway.upstreams.payments ?? '',
          GATEWAY_CRM_URL: gateway.upstreams.crm ?? '',
        },
      },
    );
    expect(output).toMatch(/^refund re_\w+: 2500 usd, succeeded$/m);
    expect(output).toContain('asked again -> the original refund');
    expect(output).toMatch(/large refund -> 202 approval_required \(proposal prop_\w+\)/);
    expect(output).toContain('ticket 5001 -> stage 4 (verified)');
    expect(output).toContain('unbound delete -> 403 write_not_bound');
  });
});
