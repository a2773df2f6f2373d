import { describe, expect, it } from 'vitest';
import {
  testAgentKeys,
  testGatewayConfig,
  testToolDigest,
} from '../../test/support/gateway-config.js';
import { authenticateAgent, presentedKey } from './agent-identity.js';
import { compileGatewayConfig } from './config-compile.js';
import {
  type AgentIdentity,
  type CallSubject,
  decideCall,
  matchCall,
  stateNeeded,
} from './decide-call.js';
import type { GatewayTable } from './gateway-table.js';
import { splitPath } from './route-pattern.js';

function table(): GatewayTable {
  const compiled = compileGatewayConfig(testGatewayConfig());
  if (compiled.kind !== 'compiled') throw new Error(JSON.stringify(compiled.problems));
  return compiled.table;
}

const as = (t: GatewayTable, key: string | undefined): AgentIdentity =>
  authenticateAgent(t.agents, key);

const http = (upstream: string, method: string, path: string): CallSubject => {
  const split = splitPath(path);
  if (split.kind !== 'split') throw new Error(split.message);
  return { kind: 'http', upstream, method, segments: split.segments };
};

describe('decideCall', () => {
  const t = table();
  const support = as(t, testAgentKeys.support);
  const reader = as(t, testAgentKeys.reader);

  it('denies a missing or unknown key before anything else, with the reason an agent can act on', () => {
    const call = http('payments', 'POST', '/v1/refunds');
    expect(decideCall(t, as(t, undefined), call)).toMatchObject({
      kind: 'deny',
      reason: 'agent_key_missing',
    });
    const wrong = decideCall(t, as(t, 'sk_agent_unknown_0123456789'), call);
    expect(wrong).toMatchObject({ kind: 'deny', reason: 'agent_key_invalid' });
  });

  it('guards a bound write and names the route template, never the raw path', () => {
    const decision = decideCall(t, support, http('payments', 'POST', '/v1/refunds'));
    expect(decision).toMatchObject({
      kind: 'guarded',
      reason: 'bound_write',
      subject: 'POST /v1/refunds',
      upstream: 'payments',
    });
    if (decision.kind !== 'guarded') throw new Error('not guarded');
    expect(decision.action.typeName).toBe('support.refund@1');
  });

  it('denies an unbound write (fail closed) with a hint that names what is missing', () => {
    const decision = decideCall(t, support, http('payments', 'POST', '/v1/charges/ch_1/capture'));
    expect(decision).toMatchObject({
      kind: 'deny',
      reason: 'write_not_bound',
      subject: 'POST <unmatched>',
    });
    if (decision.kind !== 'deny') throw new Error('not deny');
    expect(decision.hint).toContain('bind the route');
    expect(decision.hint).not.toContain('ch_1');
  });

  it('forwards a declared read, and an undeclared read only where the upstream passes reads', () => {
    expect(decideCall(t, support, http('payments', 'GET', '/v1/refunds/re_1'))).toMatchObject({
      kind: 'forward',
      reason: 'declared_read',
      subject: 'GET /v1/refunds/:id',
    });
    expect(decideCall(t, support, http('payments', 'GET', '/v1/charges/ch_1'))).toMatchObject({
      kind: 'forward',
      reason: 'passed_read',
    });
    expect(decideCall(t, support, http('crm', 'GET', '/crm/v3/objects/contacts/1'))).toMatchObject({
      kind: 'miss',
      reason: 'route_not_declared',
    });
  });

  it('refuses a role using another role’s binding, and passed reads to roles without the upstream', () => {
    expect(decideCall(t, reader, http('payments', 'POST', '/v1/refunds'))).toMatchObject({
      kind: 'deny',
      reason: 'binding_not_permitted',
    });
    expect(decideCall(t, reader, http('payments', 'GET', '/v1/refunds/re_1')).kind).toBe('forward');
    expect(decideCall(t, reader, http('payments', 'GET', '/v1/charges/ch_1'))).toMatchObject({
      kind: 'miss',
      reason: 'route_not_declared',
    });
  });

  it('applies deny rules first, segment-safely', () => {
    expect(decideCall(t, support, http('payments', 'GET', '/v1/admin/keys'))).toMatchObject({
      kind: 'deny',
      reason: 'deny_rule',
    });
    expect(decideCall(t, support, http('payments', 'GET', '/v1/admin'))).toMatchObject({
      kind: 'deny',
      reason: 'deny_rule',
    });
    expect(decideCall(t, support, http('payments', 'GET', '/v1/administrators')).kind).toBe(
      'forward',
    );
  });

  it('records writes in shadow mode and answers a later read of the resource from shadow state', () => {
    const write = http('crm', 'PATCH', '/crm/v3/objects/tickets/5001');
    expect(decideCall(t, support, write)).toMatchObject({
      kind: 'shadow_write',
      reason: 'shadow_mode_write',
    });
    const read = http('crm', 'GET', '/crm/v3/objects/tickets/5001');
    expect(stateNeeded(t, read, matchCall(t, read))).toEqual({ shadow: true, replay: false });
    expect(decideCall(t, support, read, { shadowHit: true })).toMatchObject({
      kind: 'shadow_read',
      reason: 'shadow_state',
    });
    expect(decideCall(t, support, read, { shadowHit: false }).kind).toBe('forward');
  });

  it('answers replay-mode reads from cases and misses without one', () => {
    const read = http('archive', 'GET', '/orders/ord_1/items');
    expect(stateNeeded(t, read, matchCall(t, read))).toEqual({ shadow: true, replay: true });
    expect(decideCall(t, support, read, { replayHit: true })).toMatchObject({
      kind: 'replay',
      reason: 'replay_case',
    });
    expect(decideCall(t, support, read, { replayHit: false })).toMatchObject({
      kind: 'miss',
      reason: 'replay_case_missing',
    });
    expect(decideCall(t, support, read, { shadowHit: true, replayHit: true }).kind).toBe(
      'shadow_read',
    );
  });

  it('binds MCP tools: reads forward, writes guard, unbound tools and changed definitions are refused', () => {
    const read: CallSubject = { kind: 'tool', upstream: 'memory', tool: 'read_graph' };
    const write: CallSubject = { kind: 'tool', upstream: 'memory', tool: 'create_entities' };
    const state = { toolDigest: testToolDigest };
    expect(decideCall(t, support, read, state).kind).toBe('forward');
    expect(decideCall(t, support, write, state)).toMatchObject({ kind: 'guarded' });
    expect(
      decideCall(t, support, { kind: 'tool', upstream: 'memory', tool: 'delete_entities' }, state),
    ).toMatchObject({ kind: 'deny', reason: 'tool_not_bound' });
    expect(decideCall(t, support, write, { toolDigest: `sha256:${'b'.repeat(64)}` })).toMatchObject(
      { kind: 'deny', reason: 'upstream_tool_changed' },
    );
  });

  it('lets a role call a declared action as a tool only when granted', () => {
    const call: CallSubject = { kind: 'action', actionType: 'support.refund@1' };
    expect(decideCall(t, support, call)).toMatchObject({ kind: 'guarded', upstream: null });
    expect(decideCall(t, reader, call)).toMatchObject({
      kind: 'deny',
      reason: 'binding_not_permitted',
    });
    expect(
      decideCall(t, support, { kind: 'action', actionType: 'support.unknown@1' }),
    ).toMatchObject({ kind: 'deny', reason: 'tool_not_bound' });
  });
});

describe('agent keys', () => {
  const t = table();

  it('reads Bearer tokens and Basic credentials (password, or user when the password is empty)', () => {
    expect(presentedKey('Bearer abc')).toBe('abc');
    expect(presentedKey(`Basic ${Buffer.from('abc:').toString('base64')}`)).toBe('abc');
    expect(presentedKey(`Basic ${Buffer.from('me@x.io:tok').toString('base64')}`)).toBe('tok');
    expect(presentedKey('Token abc')).toBeUndefined();
    expect(presentedKey(undefined)).toBeUndefined();
    expect(presentedKey('Bearer ')).toBeUndefined();
  });

  it('maps each key to its own agent, principal and tenant', () => {
    const identity = authenticateAgent(t.agents, testAgentKeys.other);
    expect(identity).toMatchObject({
      kind: 'agent',
      agent: { id: 'other-bot', principal: 'other', tenant: 'globex' },
    });
    expect(authenticateAgent(t.agents, testAgentKeys.support)).toMatchObject({
      agent: { id: 'support-bot', tenant: 'acme' },
    });
    expect(authenticateAgent(t.agents, `${testAgentKeys.support}x`).kind).toBe('invalid');
  });
});
