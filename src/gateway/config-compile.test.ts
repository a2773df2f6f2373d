import { describe, expect, it } from 'vitest';
import { testGatewayConfig, testRefund } from '../../test/support/gateway-config.js';
import { compileGatewayConfig, GatewayConfigError } from './config-compile.js';
import type { GatewayConfig } from './config-types.js';

const problemsOf = (config: unknown) => {
  const compiled = compileGatewayConfig(config);
  return compiled.kind === 'invalid' ? compiled.problems : [];
};

describe('compileGatewayConfig', () => {
  it('compiles the test config: routes most specific first, keys hashed, defaults applied', () => {
    const compiled = compileGatewayConfig(testGatewayConfig());
    expect(compiled.kind).toBe('compiled');
    if (compiled.kind !== 'compiled') return;
    const { table } = compiled;
    expect(table.server).toEqual({
      host: '127.0.0.1',
      port: 4400,
      bodyLimitBytes: 262_144,
      inProgressWaitMs: 15_000,
    });
    expect(table.upstreams.get('crm')?.mode).toBe('shadow');
    expect(table.agents[0]?.keySha256).toHaveLength(32);
    expect(JSON.stringify(table.agents)).not.toContain('sk_agent_support');
  });

  it('refuses a route bound twice, naming both bindings', () => {
    const config = testGatewayConfig();
    const problems = problemsOf({
      ...config,
      bindings: [
        ...config.bindings,
        { ...config.bindings[0], name: 'refund-again', route: 'post /v1/refunds' },
      ],
    });
    expect(problems).toEqual([
      {
        path: 'bindings[7].route',
        message:
          'post /v1/refunds on upstream "payments" is bound twice (also bindings[0]); bind each route once',
      },
    ]);
  });

  it('treats two routes with the same shape but other parameter names as the same route', () => {
    const config = testGatewayConfig();
    const problems = problemsOf({
      ...config,
      bindings: [
        ...config.bindings,
        {
          name: 'refund-read-2',
          upstream: 'payments',
          route: 'GET /v1/refunds/:refund',
          read: true,
        },
      ],
    });
    expect(problems.map((p) => p.path)).toEqual(['bindings[7].route']);
  });

  it('reports every problem at once with its path and what to change', () => {
    const config = testGatewayConfig();
    const broken: GatewayConfig = {
      ...config,
      upstreams: {
        ...config.upstreams,
        payments: { kind: 'http', mount: { prefix: '/crm/sub' } },
      },
      bindings: [
        { ...config.bindings[0], upstream: 'nowhere' } as GatewayConfig['bindings'][number],
        {
          name: 'x',
          upstream: 'crm',
          route: 'GET /a',
          action: 'support.nothing@1',
          toInput: () => ({}),
          toRequest: () => ({ path: '/a' }),
        },
        { name: 'y', upstream: 'crm', route: 'POST /b', read: true },
      ],
      agents: [{ id: 'a', principal: 'p', keySha256: 'nothex', roles: ['ghost'] }],
      roles: { support: { bindings: ['no-such-binding'] } },
    };
    const problems = problemsOf(broken);
    const paths = problems.map((p) => p.path);
    expect(paths).toEqual(
      expect.arrayContaining([
        'upstreams.payments.baseUrl',
        'upstreams.crm.mount.prefix',
        'bindings[0].upstream',
        'bindings[1].action',
        'bindings[1].route',
        'bindings[2].route',
        'agents[0].keySha256',
        'agents[0].roles[0]',
        'roles.support.bindings[0]',
      ]),
    );
    for (const problem of problems) expect(problem.message.length).toBeGreaterThan(15);
  });

  it('reports structural problems with paths: unknown keys, wrong types, missing functions', () => {
    const config = testGatewayConfig();
    const problems = problemsOf({
      ...config,
      sever: {},
      bindings: [{ ...config.bindings[0], toRequest: 'nope' }],
      server: { port: 'eighty' },
    });
    expect(problems.map((p) => p.path)).toEqual(
      expect.arrayContaining(['(root)', 'bindings[0].toRequest', 'server.port']),
    );
    expect(problems.find((p) => p.path === '(root)')?.message).toContain('remove it');
    expect(problemsOf(null)).toEqual([
      expect.objectContaining({ path: '(root)', message: expect.stringContaining('defineConfig') }),
    ]);
  });

  it('refuses agents sharing a key, short keys, and actions declared twice', () => {
    const config = testGatewayConfig();
    const problems = problemsOf({
      ...config,
      actions: [...config.actions, testRefund],
      agents: [
        { id: 'a', principal: 'p', key: 'same-key-0123456789', roles: ['support'] },
        { id: 'b', principal: 'p', key: 'same-key-0123456789', roles: ['support'] },
        { id: 'c', principal: 'p', key: 'short', roles: ['support'] },
      ],
    });
    expect(problems.map((p) => p.path)).toEqual(['actions[2]', 'agents[1]', 'agents[2].key']);
  });

  it('formats a GatewayConfigError naming the file and each problem', () => {
    const error = new GatewayConfigError('/srv/sideguard.config.ts', [
      { path: 'bindings[1].route', message: 'bound twice' },
    ]);
    expect(error.code).toBe('gateway_config_invalid');
    expect(error.message).toBe(
      '/srv/sideguard.config.ts: 1 problem:\n  bindings[1].route: bound twice',
    );
  });
});

describe('compileGatewayConfig: approvers', () => {
  it('refuses a plain secret, a duplicate id and an unknown field, each with its path', async () => {
    const { hashApproverSecret } = await import('../approvals/approver-secret.js');
    const secretHash = await hashApproverSecret('finance-secret-pw', { cost: 1024 });
    const config = testGatewayConfig();
    expect(problemsOf({ ...config, approvers: [{ id: 'finance', secretHash }] })).toEqual([]);
    expect(
      problemsOf({
        ...config,
        approvers: [
          { id: 'finance', secretHash },
          { id: 'finance', secretHash: 'hunter2-plain-secret' },
        ],
      }),
    ).toEqual([
      { path: 'approvers[1].id', message: 'finance is declared twice' },
      {
        path: 'approvers[1].secretHash',
        message:
          'must be a scrypt$… line from `sideguard approvers hash` (never the secret itself)',
      },
    ]);
    const shape = problemsOf({
      ...config,
      approvers: [{ id: 'finance', secretHash, secret: 'x' }],
    });
    expect(shape[0]?.path).toBe('approvers[0]');
  });
});

describe('compileGatewayConfig: the console address', () => {
  it('links pending answers to the configured console URL, else to the console port', () => {
    const urlOf = (approvals: GatewayConfig['approvals']) => {
      const compiled = compileGatewayConfig({ ...testGatewayConfig(), approvals });
      return compiled.kind === 'compiled' ? compiled.table.consoleUrl : 'invalid';
    };
    expect(urlOf({ port: 4402 })).toBe('http://127.0.0.1:4402');
    expect(urlOf({ port: 4402, consoleUrl: 'https://approve.example.com' })).toBe(
      'https://approve.example.com',
    );
    expect(urlOf({ port: 0 })).toBeUndefined();
    expect(urlOf(undefined)).toBeUndefined();
  });
});
