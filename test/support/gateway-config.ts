/**
 * A small config for the gateway's unit tests: a payments upstream (refund write, refund read,
 * passed reads), a CRM upstream in shadow mode, a replay upstream, an MCP upstream with a read
 * and a write tool, two roles and three agents. Not part of the public API.
 */
import { z } from 'zod';
import { approvals, defineAction } from '../../src/core/action.js';
import type { GatewayConfig } from '../../src/gateway/config-types.js';

export const testAgentKeys = {
  support: 'sk_agent_support_0123456789',
  reader: 'sk_agent_reader_0123456789',
  other: 'sk_agent_other_tenant_0123',
} as const;

export const testToolDigest = `sha256:${'a'.repeat(64)}`;

export const testRefund = defineAction({
  type: { namespace: 'support', name: 'refund', version: 1 },
  input: z.object({ charge: z.string(), amount: z.string(), requestId: z.string().optional() }),
  protectedFields: ['charge', 'amount'],
  policy: (input) =>
    Number(input.amount) > 10_000
      ? { decision: 'require_approval', reason: 'over_auto_limit' }
      : { decision: 'allow', reason: 'within_auto_limit' },
  approval: approvals.single('finance'),
  execute: async () => ({ kind: 'failed_known', reason: 'not_bound' }),
  verify: async () => ({ kind: 'absent', final: true }),
});

export const testTicketUpdate = defineAction({
  type: { namespace: 'support', name: 'update_ticket', version: 1 },
  input: z.object({ ticketId: z.string(), stage: z.string() }),
  protectedFields: ['ticketId', 'stage'],
  policy: () => ({ decision: 'allow', reason: 'ok' }),
  execute: async () => ({ kind: 'failed_known', reason: 'not_bound' }),
  verify: async () => ({ kind: 'absent', final: true }),
});

/** A valid config; tests spread and override parts of it. */
export function testGatewayConfig(): GatewayConfig {
  return {
    tenant: 'acme',
    actions: [testRefund, testTicketUpdate],
    upstreams: {
      payments: {
        kind: 'http',
        baseUrl: 'http://127.0.0.1:9',
        mount: { port: 0 },
        passReads: true,
        credentials: { headers: { authorization: 'Bearer sk_test_provider' } },
      },
      crm: {
        kind: 'http',
        baseUrl: 'http://127.0.0.1:9',
        mode: 'shadow',
        mount: { prefix: '/crm' },
      },
      archive: {
        kind: 'http',
        baseUrl: 'http://127.0.0.1:9',
        mode: 'replay',
        mount: { prefix: '/archive' },
        replayCases: 'cases.json',
      },
      memory: { kind: 'mcp', transport: { stdio: { command: 'node', args: ['server.js'] } } },
    },
    bindings: [
      {
        name: 'refund',
        upstream: 'payments',
        route: 'POST /v1/refunds',
        action: testRefund,
        toInput: (request) => request.body,
        toRequest: (input: { charge: string; amount: string }) => ({
          path: '/v1/refunds',
          form: { charge: input.charge, amount: input.amount },
        }),
      },
      { name: 'refund-read', upstream: 'payments', route: 'GET /v1/refunds/:id', read: true },
      {
        name: 'ticket-update',
        upstream: 'crm',
        route: 'PATCH /crm/v3/objects/tickets/:id',
        action: 'support.update_ticket@1',
        toInput: (request) => ({ ticketId: request.params.id, stage: 'closed' }),
        toRequest: (input: { ticketId: string }) => ({
          path: `/crm/v3/objects/tickets/${input.ticketId}`,
          json: {},
        }),
      },
      {
        name: 'ticket-read',
        upstream: 'crm',
        route: 'GET /crm/v3/objects/tickets/:id',
        read: true,
      },
      { name: 'archive-read', upstream: 'archive', route: 'GET /orders/*', read: true },
      {
        name: 'memory-read',
        upstream: 'memory',
        tool: 'read_graph',
        toolDigest: testToolDigest,
        read: true,
      },
      {
        name: 'memory-write',
        upstream: 'memory',
        tool: 'create_entities',
        toolDigest: testToolDigest,
        action: testTicketUpdate,
      },
    ],
    agents: [
      {
        id: 'support-bot',
        principal: 'support-team',
        key: testAgentKeys.support,
        roles: ['support'],
      },
      { id: 'reader-bot', principal: 'analytics', key: testAgentKeys.reader, roles: ['reader'] },
      {
        id: 'other-bot',
        principal: 'other',
        key: testAgentKeys.other,
        roles: ['support'],
        tenant: 'globex',
      },
    ],
    roles: {
      support: {
        bindings: ['payments:*', 'crm:*', 'archive-read', 'memory:*', 'action:support.refund@1'],
      },
      reader: { bindings: ['refund-read', 'ticket-read'] },
    },
    deny: [
      { upstream: 'payments', pathPrefix: '/v1/admin', reason: 'admin endpoints are off limits' },
    ],
  };
}
