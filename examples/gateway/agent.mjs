/**
 * What an agent's tool calls look like behind the gateway: the official `stripe` client and a
 * plain HTTP client, pointed at the gateway with the agent's key instead of a provider secret.
 * Start the gateway first (see sideguard.config.ts), then: node examples/gateway/agent.mjs
 *
 * GATEWAY_PAYMENTS_URL and GATEWAY_CRM_URL override the default addresses.
 */
import Stripe from 'stripe';

const agentKey = process.env.SIDEGUARD_AGENT_KEY ?? 'sg_demo_support_agent_key';
const payments = new URL(process.env.GATEWAY_PAYMENTS_URL ?? 'http://127.0.0.1:4401');
const crm = process.env.GATEWAY_CRM_URL ?? 'http://127.0.0.1:4400/crm';

// 1. The Stripe client, unchanged but for host and port; its own retries stay on.
const stripe = new Stripe(agentKey, {
  host: payments.hostname,
  port: Number(payments.port),
  protocol: payments.protocol.slice(0, -1),
  maxNetworkRetries: 2,
});
const refund = await stripe.refunds.create({ charge: 'ch_sg_001', amount: 2500 });
console.log(`refund ${refund.id}: ${refund.amount} ${refund.currency}, ${refund.status}`);

// 2. The agent re-plans and asks again (a new client idempotency key): the same effect.
const again = await stripe.refunds.create({ charge: 'ch_sg_001', amount: 2500 });
console.log(`asked again -> ${again.id === refund.id ? 'the original refund' : 'A SECOND REFUND'}`);

// 3. Over the automatic limit: nothing is sent; the answer names the proposal to approve.
try {
  await stripe.refunds.create({ charge: 'ch_sg_002', amount: 9000 });
} catch (error) {
  console.log(
    `large refund -> ${error.statusCode} ${error.raw?.code} (proposal ${error.raw?.proposal})`,
  );
}

// 4. A plain HTTP client against the CRM's prefix.
const update = await fetch(`${crm}/crm/v3/objects/tickets/5001`, {
  method: 'PATCH',
  headers: { authorization: `Bearer ${agentKey}`, 'content-type': 'application/json' },
  body: JSON.stringify({ properties: { hs_pipeline_stage: '4' } }),
});
const ticket = await update.json();
console.log(
  `ticket ${ticket.id} -> stage ${ticket.properties?.hs_pipeline_stage} (${update.headers.get('x-sideguard-outcome')})`,
);

// 5. A write nobody bound is refused, not forwarded.
const unbound = await fetch(`${crm}/crm/v3/objects/tickets/5001`, {
  method: 'DELETE',
  headers: { authorization: `Bearer ${agentKey}` },
});
console.log(`unbound delete -> ${unbound.status} ${(await unbound.json()).code}`);
