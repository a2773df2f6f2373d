/**
 * An agent's support tools behind the gateway: Stripe-shaped refunds and HubSpot-shaped ticket
 * updates, served by the built-in sandbox. Run it with
 *
 *   export SIDEGUARD_KEYS="$(npx sideguard keys generate)"
 *   npx sideguard serve --config examples/gateway/sideguard.config.ts
 *
 * then point the agent's clients at the gateway: Stripe at http://127.0.0.1:4401, the CRM at
 * http://127.0.0.1:4400/crm, with the agent's key (`SIDEGUARD_AGENT_KEY`) as the API key.
 *
 * MCP clients reach the same gateway at http://127.0.0.1:4400/mcp (Authorization: Bearer with the
 * agent's key), or launch it on stdio: `npx sideguard mcp --config examples/gateway/sideguard.config.ts`
 * with SIDEGUARD_AGENT_KEY and SIDEGUARD_KEYS in the entry's env. They get the refund as a tool
 * and the memory MCP server's tools, wrapped: `create_entities` guarded, `open_nodes` a read.
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
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

/** Remembering entities in the memory MCP server's knowledge graph (its `create_entities`). */
const remember = defineAction({
  type: { namespace: 'notes', name: 'remember', version: 1 },
  input: z.object({
    entities: z
      .array(
        z.object({
          name: z.string().min(1).max(200),
          entityType: z.string().min(1).max(100),
          observations: z.array(z.string().max(2_000)).max(50),
        }),
      )
      .min(1)
      .max(20),
  }),
  protectedFields: ['entities'],
  policy: () => ({ decision: 'allow', reason: 'notes_allowed' }),
  // The gateway executes it through the `memory.remember` binding (the upstream tool).
  execute: async () => ({ kind: 'failed_known', reason: 'call_through_the_gateway' }),
  verify: async () => ({ kind: 'unknown', reason: 'call_through_the_gateway' }),
});

/**
 * The memory server from npm, started by the gateway on stdio. Outside this repository the
 * usual entry is `{ command: 'npx', args: ['-y', '@modelcontextprotocol/server-memory'] }`.
 */
const memoryServer = createRequire(import.meta.url).resolve(
  '@modelcontextprotocol/server-memory/dist/index.js',
);
const here = dirname(fileURLToPath(import.meta.url));

type RefundInput = z.output<typeof refund.config.input>;
type TicketInput = z.output<typeof updateTicket.config.input>;

export default defineConfig({
  store: process.env.SIDEGUARD_GATEWAY_STORE ?? '.sideguard/gateway.db',
  tenant: 'acme',
  actions: [refund, updateTicket, remember],
  sandbox: { stateDir: process.env.SIDEGUARD_SANDBOX_DIR ?? '.sideguard/sandbox', seed: 1 },
  upstreams: {
    // The stripe client takes only host and port: Stripe gets a port of its own.
    payments: { kind: 'http', mode: 'sandbox', sandboxProvider: 'payments', mount: { port: 4401 } },
    crm: { kind: 'http', mode: 'sandbox', sandboxProvider: 'crm', mount: { prefix: '/crm' } },
    memory: {
      kind: 'mcp',
      transport: {
        stdio: {
          command: process.execPath,
          args: [memoryServer],
          env: {
            MEMORY_FILE_PATH:
              process.env.SIDEGUARD_MEMORY_FILE ?? join(here, '.sideguard', 'memory.jsonl'),
          },
        },
      },
    },
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
    // Pinned to the tool definitions that were reviewed; `sideguard config check` prints the
    // current digests, and a tool whose description or schema changes is refused until re-pinned.
    {
      name: 'memory.remember',
      upstream: 'memory',
      tool: 'create_entities',
      toolDigest: 'sha256:d2630a8eb02f462514ccfac0c3d617b553831c6b6e4f7dcaab2f15ed5ef7a4bd',
      action: remember,
    },
    {
      name: 'memory.open',
      upstream: 'memory',
      tool: 'open_nodes',
      toolDigest: 'sha256:d0894a57d8744c34d24d5e3ccd1b973c46964acd46c36d7fdbfdb2afea6ae613',
      read: true,
    },
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
  // `action:…` serves the refund as an MCP tool too (it runs through its HTTP binding).
  roles: { support: { bindings: ['payments:*', 'crm:*', 'memory:*', 'action:support.refund@1'] } },
});
