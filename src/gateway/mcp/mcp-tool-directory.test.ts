import { describe, expect, it } from 'vitest';
import { testGatewayConfig, testRefund } from '../../../test/support/gateway-config.js';
import { compileGatewayConfig } from '../config-compile.js';
import type { GatewayConfig } from '../config-types.js';
import { actionExecutables } from './mcp-action-executables.js';
import { actionToolName, buildMcpToolDirectory } from './mcp-tool-directory.js';

function compiled(config: GatewayConfig) {
  const result = compileGatewayConfig(config);
  if (result.kind !== 'compiled') throw new Error(JSON.stringify(result.problems));
  return result.table;
}

describe('the names the MCP door serves', () => {
  it('serves each declared action, each tool binding by its name, and sideguard_proposal last', () => {
    const directory = buildMcpToolDirectory(compiled(testGatewayConfig()));
    expect(directory.problems).toEqual([]);
    expect([...directory.targets.keys()]).toEqual([
      'support.refund.v1',
      'support.update_ticket.v1',
      'memory-read',
      'memory-write',
      'sideguard_proposal',
    ]);
    expect(actionToolName(testRefund)).toMatch(/^[A-Za-z0-9_.-]{1,128}$/);
  });

  it('reports a binding that would take an action’s tool name or the gateway’s own', () => {
    const config = testGatewayConfig();
    const bindings = config.bindings.map((binding) =>
      binding.name === 'memory-read'
        ? { ...binding, name: 'support.refund.v1' }
        : binding.name === 'memory-write'
          ? { ...binding, name: 'sideguard_proposal' }
          : binding,
    );
    const renamed = {
      ...config,
      bindings,
      roles: { support: { bindings: ['*'] }, reader: { bindings: [] } },
    };
    const directory = buildMcpToolDirectory(compiled(renamed), renamed);
    expect(directory.problems.map((problem) => problem.path)).toEqual([
      `bindings[${bindings.findIndex((b) => b.name === 'support.refund.v1')}].name`,
      `bindings[${bindings.findIndex((b) => b.name === 'sideguard_proposal')}].name`,
    ]);
    expect(directory.problems[0]?.message).toContain('already action support.refund@1');
  });
});

describe('what runs a declared action called as a tool', () => {
  it('is its one write binding, its own execute when it has none, and unavailable when that binding cannot run here', () => {
    const table = compiled(testGatewayConfig());
    const viaTool = testRefund; // stands in for a binding's executable action
    const executables = actionExecutables(table, new Map([['memory-write', viaTool]]), new Map());
    // support.refund@1 has one HTTP write binding (refund) whose upstream is not open here.
    expect(executables.get('support.refund@1')).toEqual({
      kind: 'unavailable',
      binding: 'refund',
      upstream: 'payments',
    });
    // support.update_ticket@1 is bound twice (a route and a tool): its own execute.
    expect(executables.get('support.update_ticket@1')).toMatchObject({
      kind: 'ready',
      binding: null,
    });
    const withHttp = actionExecutables(table, new Map(), new Map([['refund', viaTool]]));
    expect(withHttp.get('support.refund@1')).toEqual({
      kind: 'ready',
      action: viaTool,
      binding: 'refund',
    });
  });
});
