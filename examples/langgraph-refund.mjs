// Sideguard in a LangGraph graph, offline: a scripted model node calls a refund tool; the graph
// pauses with an interrupt() carrying the proposal; the approver decides and the graph resumes
// with Command({ resume }); the model retries the call and gets the same refund back. Exactly one
// refund lands in the sandbox's Stripe-shaped API (sent with the official `stripe` client).
// Prints the ledger's decision path.
// Run with: npm run demo:langgraph   (after npm install, which builds the package)

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AIMessage, HumanMessage } from '@langchain/core/messages';
import {
  Command,
  END,
  MemorySaver,
  MessagesAnnotation,
  START,
  StateGraph,
} from '@langchain/langgraph';
import { ToolNode } from '@langchain/langgraph/prebuilt';
import {
  approvals,
  createDevelopmentKeyRing,
  createGuard,
  createMemoryStore,
  defineAction,
} from 'sideguard';
import { createExecutorTransport } from 'sideguard/executor-kit';
import { decideApproval, sideguardGraphTool } from 'sideguard/langgraph';
import { startSandbox } from 'sideguard/sandbox';
import { stripeClientSettings, stripeRefundPair } from 'sideguard/stripe';
import Stripe from 'stripe';
import { z } from 'zod';

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

// One line: the action becomes a LangGraph tool.
const refundTool = sideguardGraphTool(refund, { guard, tenant, principal: 'support-agent' });

// A scripted model node: refund, then the same refund again (a retry), then a closing text.
const args = { orderId: 'ord_1001', chargeId: 'ch_sg_001', amountMinor: 500 };
const script = [{ call: args }, { call: args }, { text: 'The refund is done.' }];
const model = (state) => {
  const turn = state.messages.filter((m) => AIMessage.isInstance(m)).length;
  const step = script[turn];
  if (step.text) return { messages: [new AIMessage(step.text)] };
  return {
    messages: [
      new AIMessage({
        content: '',
        tool_calls: [{ id: `call-${turn}`, name: 'refund', args: step.call, type: 'tool_call' }],
      }),
    ],
  };
};
const graph = new StateGraph(MessagesAnnotation)
  .addNode('agent', model)
  .addNode('tools', new ToolNode([refundTool]))
  .addEdge(START, 'agent')
  .addConditionalEdges('agent', (state) =>
    state.messages.at(-1)?.tool_calls?.length ? 'tools' : END,
  )
  .addEdge('tools', 'agent')
  .compile({ checkpointer: new MemorySaver() });
const config = { configurable: { thread_id: 'demo' } };

try {
  const first = await graph.invoke(
    { messages: [new HumanMessage('Refund 5.00 on order ord_1001, please.')] },
    config,
  );
  const request = first.__interrupt__[0].value;
  console.log(
    `1. the model called refund -> interrupt for ${request.proposal}: "${request.preview}"`,
  );

  // 2. finance-ana, logged in to the approval screen, approves; the graph resumes.
  const decided = await decideApproval(refundTool, request, {
    decision: 'approve',
    authority: 'finance-ana',
    channelAssurance: 'medium',
  });
  console.log(
    `2. approval recorded as bound evidence -> ${decided.recorded.outcome ?? decided.recorded.reasonCode}`,
  );
  const done = await graph.invoke(new Command({ resume: decided.resume }), config);

  // 3. The tool node re-ran from its start on resume and refunded; the model's retry got the same refund.
  const results = done.messages
    .filter((m) => m.getType() === 'tool')
    .map((m) => JSON.parse(m.content));
  for (const result of results) {
    console.log(
      `3. tool result -> ${result.status} (${result.outcome}${result.duplicate ? ', duplicate' : ''}) ${result.result?.id ?? ''}`,
    );
  }
  console.log(`   the agent says: ${done.messages.at(-1).content}`);

  const observations = await sandbox.control.observations();
  const refunds = observations.writes.byOperation['payments.create_refund'] ?? 0;
  console.log(`4. refunds in the sandbox: ${refunds}`);

  const replay = await guard.replay({ tenant, proposal: request.proposal });
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
