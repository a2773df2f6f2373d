/**
 * An agent's support tools behind the gateway: Stripe-shaped refunds and HubSpot-shaped ticket
 * updates, served by the built-in sandbox. Run it with
 *
 *   export SIDEGUARD_KEYS="$(npx sideguard keys generate)"
 *   npx sideguard serve --config examples/gateway/sideguard.config.ts
 *
 * then point the agent's clients at the gateway: Stripe at http://127.0.0.1:4401, the CRM at
 * http://127.0.0.1:4400/crm, with the agent's key (`SIDEGUARD_AGENT_KEY`) as the API key.
 */
import { approvals, defineAction, defineConfig } from 'sideguard';
import { jsonOutput } from 'sideguard/gateway';
import { z } from 'zod';

/** A Stripe-shaped refund: the effect is (charge, amount); retry metadata stays out of it. */
const refund = defineAction({
  type: { namespace: 'support', name: 'refund', version: 1 },
  input: z.object({
    charge: z.string().regex(/^ch_[A-Za-z0-9_]+$/),
    amount: z.string().regex(/^\d{1,9}$/, 'amount is in minor units, e.g. "2500"'),
    reason: z.enum(['duplicate', 'fraudulent', 'requested_by_customer']).optional(),
    requestId: z.string().max(255).optional(),
  }),
  protectedFields: ['charge', 'amount'],
  policy: (input) => {
    const minor = Number(input.amount);
    if (minor > 100_000) return { decision: 'block', reason: 'over_hard_limit' };
    if (minor > 5_000) return { decision: 'require_approval', reason: 'over_auto_limit' };
    return { decision: 'allow', reason: 'within_auto_limit' };
  },
  approval: approvals.single({ id: 'finance-lead', requiredAssurance: 'high' }),
  preview: (input) => ({ summary: `Refund ${input.amount} (minor units) on ${input.charge}` }),
  // The gateway executes and verifies this action through the bindings below.
  execute: async () => ({ kind: 'failed_known', reason: 'call_through_the_gateway' }),
  verify: async () => ({ kind: 'unknown', reason: 'call_through_the_gateway' }),
});

/** Moving a ticket to a pipeline stage. */
const updateTicket = defineAction({
  type: { namespace: 'support', name: 'update_ticket', version: 1 },
  input: z.object({
    ticketId: z.string().regex(/^\d{1,12}$/),
    stage: z.enum(['1', '2', '3', '4']),
  }),
  protectedFields: ['ticketId', 'stage'],
  policy: () => ({ decision: 'allow', reason: 'ticket_updates_allowed' }),
  execute: async () => ({ kind: 'failed_known', reason: 'call_through_the_gateway' }),
  verify: async () => ({ kind: 'unknown', reason: 'call_through_the_gateway' }),
});

type RefundInput = z.output<typeof refund.config.input>;
type TicketInput = z.output<typeof updateTicket.config.input>;

export default defineConfig({
  store: process.env.SIDEGUARD_GATEWAY_STORE ?? '.sideguard/gateway.db',
  tenant: 'acme',
  actions: [refund, updateTicket],
  sandbox: { stateDir: process.env.SIDEGUARD_SANDBOX_DIR ?? '.sideguard/sandbox', seed: 1 },
  upstreams: {
    // The stripe client takes only host and port: Stripe gets a port of its own.
    payments: { kind: 'http', mode: 'sandbox', sandboxProvider: 'payments', mount: { port: 4401 } },
    crm: { kind: 'http', mode: 'sandbox', sandboxProvider: 'crm', mount: { prefix: '/crm' } },
  },
  bindings: [
    {
      name: 'refund',
      upstream: 'payments',
      route: 'POST /v1/refunds',
      action: refund,
      toInput: (request) => {
        const body = (request.body ?? {}) as Record<string, unknown>;
        return {
          charge: body.charge,
          amount: body.amount,
          ...(body.reason === undefined ? {} : { reason: body.reason }),
          ...(request.headers['idempotency-key'] === undefined
            ? {}
            : { requestId: request.headers['idempotency-key'] }),
        };
      },
      toRequest: (input: RefundInput, context) => ({
        path: '/v1/refunds',
        form: {
          charge: input.charge,
          amount: input.amount,
          ...(input.reason === undefined ? {} : { reason: input.reason }),
          'metadata[sideguard_effect]': context.semanticEffectKey,
        },
      }),
      // After a lost response or a timeout: the charge's refunds say whether it happened.
      verify: async (input: RefundInput, context) => {
        const reply = await context.upstream.request({
          method: 'GET',
          path: '/v1/refunds',
          query: { charge: input.charge, limit: '100' },
        });
        if (reply.kind !== 'response' || reply.status !== 200) {
          return { kind: 'unknown', reason: 'refund_list_unavailable' };
        }
        const refunds = (
          reply.json() as { data?: { id: string; metadata?: Record<string, string> }[] }
        ).data;
        const found = refunds?.find(
          (entry) => entry.metadata?.sideguard_effect === context.semanticEffectKey,
        );
        if (found === undefined) return { kind: 'absent', final: true };
        const output = jsonOutput(found);
        return {
          kind: 'present',
          receipt: { id: found.id, provider: 'payments' },
          ...(output ? { output } : {}),
        };
      },
    },
    { name: 'refund-read', upstream: 'payments', route: 'GET /v1/refunds/:id', read: true },
    { name: 'charge-read', upstream: 'payments', route: 'GET /v1/charges/:id', read: true },
    {
      name: 'ticket-update',
      upstream: 'crm',
      route: 'PATCH /crm/v3/objects/tickets/:id',
      action: updateTicket,
      toInput: (request) => ({
        ticketId: request.params.id,
        stage: (request.body as { properties?: { hs_pipeline_stage?: unknown } } | undefined)
          ?.properties?.hs_pipeline_stage,
      }),
      toRequest: (input: TicketInput, context) => ({
        path: `/crm/v3/objects/tickets/${input.ticketId}`,
        json: {
          properties: {
            hs_pipeline_stage: input.stage,
            sideguard_effect: context.semanticEffectKey,
          },
        },
      }),
      verify: async (input: TicketInput, context) => {
        const reply = await context.upstream.request({
          method: 'GET',
          path: `/crm/v3/objects/tickets/${input.ticketId}`,
          query: { properties: 'sideguard_effect' },
        });
        if (reply.kind !== 'response' || reply.status !== 200) return { kind: 'unknown' };
        const properties = (reply.json() as { properties?: Record<string, string | null> })
          .properties;
        return properties?.sideguard_effect === context.semanticEffectKey
          ? { kind: 'present', receipt: { id: input.ticketId, provider: 'crm' } }
          : { kind: 'absent', final: false };
      },
    },
    { name: 'ticket-read', upstream: 'crm', route: 'GET /crm/v3/objects/tickets/:id', read: true },
  ],
  agents: [
    {
      id: 'support-agent',
      principal: 'support-team',
      // A demo key for a gateway on loopback; set SIDEGUARD_AGENT_KEY for anything else.
      key: process.env.SIDEGUARD_AGENT_KEY ?? 'sg_demo_support_agent_key',
      roles: ['support'],
    },
  ],
  roles: { support: { bindings: ['payments:*', 'crm:*'] } },
});
