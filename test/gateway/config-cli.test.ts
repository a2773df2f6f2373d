/**
 * `sideguard config check` and `sideguard serve` on good and bad configs: problems name the file,
 * the path inside it and what to change; any problem exits 2 and starts nothing.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { fixtureConfig } from './gateway-helpers.js';

const fixtures = join('test', 'gateway', 'fixtures');

describe('sideguard config check', () => {
  it('prints the resolved routes, actions and agents of a good config and exits 0', () => {
    const run = runCli(['config', 'check', '--config', fixtureConfig]);
    expect(run.status).toBe(0);
    expect(run.stdout).toContain('test/gateway/fixtures/gateway.config.ts: ok');
    expect(run.stdout).toMatch(
      /payments\s+POST \/v1\/refunds\s+guarded → support\.refund@1\s+\(refund\)/,
    );
    expect(run.stdout).toMatch(/support-bot\s+principal support-team, tenant acme, roles support/);
    expect(run.stdout).not.toContain('sg_agent_support');
  });

  it('reports a route bound twice with its path and exits 2', () => {
    const run = runCli(['config', 'check', '--config', join(fixtures, 'bound-twice.config.mjs')]);
    expect(run.status).toBe(2);
    expect(run.stdout).toContain('bound-twice.config.mjs: 1 problem');
    expect(run.stdout).toContain(
      'bindings[1].route: GET /things/:thing on upstream "api" is bound twice (also bindings[0]); bind each route once',
    );
  });

  it('names the file when loading it fails, and a missing file', () => {
    const broken = runCli(['config', 'check', '--config', join(fixtures, 'broken.config.ts')]);
    expect(broken.status).toBe(2);
    expect(broken.stdout).toContain('broken.config.ts: 1 problem');
    expect(broken.stdout).toContain('(file): loading the file failed');
    const missing = runCli(['config', 'check', '--config', join(fixtures, 'missing.config.ts')]);
    expect(missing.status).toBe(2);
    expect(missing.stdout).toContain('(file): the file does not exist');
  });

  it('prints JSON with --json', () => {
    const run = runCli([
      'config',
      'check',
      '--json',
      '--config',
      join(fixtures, 'bound-twice.config.mjs'),
    ]);
    expect(run.status).toBe(2);
    expect(JSON.parse(run.stdout)).toMatchObject({
      ok: false,
      problems: [{ path: 'bindings[1].route' }],
    });
  });
});

describe('sideguard serve', () => {
  it('refuses a config that binds a route twice at load, exit 2, listening on nothing', () => {
    const run = runCli(
      ['serve', '--config', join(fixtures, 'bound-twice.config.mjs'), '--port', '0'],
      {
        env: {
          SIDEGUARD_KEYS:
            'current=k1:1;effect=k1:1;k1:1=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
        },
      },
    );
    expect(run.status).toBe(2);
    expect(run.stderr).toContain('bindings[1].route');
    expect(run.stdout).not.toContain('ready');
  });

  it('says how to make a key ring when SIDEGUARD_KEYS is missing, exit 2', () => {
    const run = runCli(['serve', '--config', fixtureConfig, '--port', '0'], {
      env: { SIDEGUARD_KEYS: '' },
    });
    expect(run.status).toBe(2);
    expect(run.stderr).toContain('sideguard keys generate');
  });
});
