// Sideguard under the OpenAI Agents SDK, offline: a scripted model (the SDK's `Model` interface)
// calls a refund tool twice (a retry); the run stops with interruptions that carry the proposal;
// the approver approves on the run state; resuming refunds exactly once in the sandbox's
// Stripe-shaped API (sent with the official `stripe` client). Prints the ledger's decision path.
// Run with: npm run demo:openai-agents   (after npm install, which builds the package)

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, run, setTracingDisabled, Usage } from '@openai/agents';
import {
  approvals,
  createDevelopmentKeyRing,
  createGuard,
  createMemoryStore,
  defineAction,
} from 'sideguard';
import { createExecutorTransport } from 'sideguard/executor-kit';
import {
  approveInterruption,
  describeInterruption,
  sideguardAgentTool,
} from 'sideguard/openai-agents';
import { startSandbox } from 'sideguard/sandbox';
import { stripeClientSettings, stripeRefundPair } from 'sideguard/stripe';
import Stripe from 'stripe';
import { z } from 'zod';

setTracingDisabled(true); // offline: no trace export

// A local Stripe-shaped API that ignores idempotency keys: only Sideguard stands between a
// retry and a second refund.
const stateDir = await mkdtemp(join(tmpdir(), 'sideguard-demo-'));
const sandbox = await startSandbox({
  stateDir,
  seed: 42,
  providers: ['payments'],
  idempotency: { payments: 'ignore' },
});
const transport = createExecutorTransport();
const { hostname, port } = new URL(sandbox.dataUrl);
const stripe = new Stripe('sk_test_sideguard_agent', {
  host: hostname,
  port: Number(port),
  protocol: 'http',
  ...stripeClientSettings(transport), // no hidden retries: Sideguard decides what is resent
});

// The action: refunds over 1.00 need finance-ana's approval.
const refund = defineAction({
  type: { namespace: 'support', name: 'refund', version: 1 },
  input: z.object({
    orderId: z.string(),
    chargeId: z.string(),
    amountMinor: z.number().int().positive(),
  }),
  protectedFields: ['orderId', 'chargeId', 'amountMinor'],
  policy: (input) =>
    input.amountMinor <= 100
      ? { decision: 'allow', reason: 'within_auto_limit' }
      : { decision: 'require_approval', reason: 'over_auto_limit' },
  approval: approvals.single('finance-ana'),
  preview: (input) => `Refund ${(input.amountMinor / 100).toFixed(2)} on order ${input.orderId}`,
  ...stripeRefundPair({
    stripe,
    provider: 'payments',
    refund: (input) => ({
      charge: input.chargeId,
      amount: input.amountMinor,
      metadata: { order_id: input.orderId },
    }),
  }),
});
const guard = createGuard({ store: createMemoryStore(), keyRing: createDevelopmentKeyRing() });
const tenant = 'acme';

// A scripted model: it calls refund twice with the same arguments, then says it is done.
const args = JSON.stringify({ orderId: 'ord_1001', chargeId: 'ch_sg_001', amountMinor: 500 });
const steps = [
  ['call-1', 'call-2'].map((callId) => ({
    type: 'function_call',
    callId,
    name: 'refund',
    arguments: args,
    status: 'completed',
  })),
  [
    {
      type: 'message',
      role: 'assistant',
      status: 'completed',
      content: [{ type: 'output_text', text: 'The refund is done.' }],
    },
  ],
];
const model = {
  async getResponse() {
    return { usage: new Usage(), output: steps.shift() };
  },
  getStreamedResponse() {
    throw new Error('not streamed in this demo');
  },
};

const agent = new Agent({
  name: 'support',
  instructions: 'Refund when asked.',
  model,
  // One line: the action becomes an Agents SDK tool.
  tools: [sideguardAgentTool(refund, { guard, tenant, principal: 'support-agent' })],
});

try {
  const first = await run(agent, 'Refund 5.00 on order ord_1001, please.');
  console.log(
    `1. the model called refund twice -> ${first.interruptions.length} interruptions, refunds so far: 0`,
  );
  for (const item of first.interruptions) {
    const about = await describeInterruption(item);
    console.log(`   interruption for ${about.proposal}: "${about.preview}"`);
    // 2. finance-ana, logged in to the approval screen, approves exactly that proposal.
    const recorded = await approveInterruption(first.state, item, {
      authority: 'finance-ana',
      channelAssurance: 'medium',
      proposal: about.proposal,
    });
    console.log(
      `2. approved on the run state, recorded as bound evidence -> ${recorded.outcome ?? recorded.reasonCode}`,
    );
  }

  // 3. Resuming runs the approved calls: one refund, the retry gets the same refund back.
  const resumed = await run(agent, first.state);
  const results = resumed.newItems
    .filter((item) => item.type === 'tool_call_output_item')
    .map((item) => (typeof item.output === 'string' ? JSON.parse(item.output) : item.output));
  for (const result of results) {
    console.log(
      `3. tool result -> ${result.status} (${result.outcome}${result.duplicate ? ', duplicate' : ''}) ${result.result?.id ?? ''}`,
    );
  }
  console.log(`   the agent says: ${resumed.finalOutput}`);

  const observations = await sandbox.control.observations();
  const refunds = observations.writes.byOperation['payments.create_refund'] ?? 0;
  console.log(`4. refunds in the sandbox: ${refunds}`);

  const replay = await guard.replay({ tenant, proposal: results[0].proposal });
  console.log(`5. decision path: ${replay.decisionPath.join(' -> ')}`);
  const verdict = await guard.verifyLedger({ tenant });
  console.log(`   ledger: ${verdict.kind}, ${verdict.count} hash-chained events`);
  if (refunds !== 1) {
    console.error('Expected exactly one refund');
    process.exitCode = 1;
  }
} finally {
  await transport.close();
  await sandbox.close();
  await rm(stateDir, { recursive: true, force: true });
}
