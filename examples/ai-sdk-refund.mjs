// Sideguard under the Vercel AI SDK, offline: the AI SDK's own mock model calls a refund tool
// twice (a retry), the user approves in the chat, and exactly one refund lands in the sandbox's
// Stripe-shaped API (sent with the official `stripe` client). Prints the ledger's decision path.
// Run with: npm run demo:ai-sdk   (after npm install, which builds the package)

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateText } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import {
  approvals,
  createDevelopmentKeyRing,
  createGuard,
  createMemoryStore,
  defineAction,
} from 'sideguard';
import { recordToolApprovals, sideguardTool } from 'sideguard/ai-sdk';
import { createExecutorTransport } from 'sideguard/executor-kit';
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

// One line: the action becomes an AI SDK tool.
const tools = { refund: sideguardTool(refund, { guard, tenant, principal: 'support-agent' }) };

// The AI SDK's mock model: it calls refund twice with the same arguments, then says it is done.
const args = JSON.stringify({ orderId: 'ord_1001', chargeId: 'ch_sg_001', amountMinor: 500 });
const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 1, text: 1, reasoning: 0 },
};
const model = new MockLanguageModelV3({
  doGenerate: [
    {
      content: [
        { type: 'tool-call', toolCallId: 'call-1', toolName: 'refund', input: args },
        { type: 'tool-call', toolCallId: 'call-2', toolName: 'refund', input: args },
      ],
      finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
      usage,
      warnings: [],
    },
    {
      content: [{ type: 'text', text: 'The refund is done.' }],
      finishReason: { unified: 'stop', raw: 'stop' },
      usage,
      warnings: [],
    },
  ],
});

try {
  const messages = [{ role: 'user', content: 'Refund 5.00 on order ord_1001, please.' }];
  const first = await generateText({ model, tools, messages });
  messages.push(...first.response.messages);
  const requests = first.content.filter((part) => part.type === 'tool-approval-request');
  console.log(
    `1. the model called refund twice -> ${requests.length} approval requests, refunds so far: 0`,
  );

  // 2. The user (finance-ana, logged in to the chat) approves both in the chat.
  messages.push({
    role: 'tool',
    content: requests.map((r) => ({
      type: 'tool-approval-response',
      approvalId: r.approvalId,
      approved: true,
    })),
  });
  const recorded = await recordToolApprovals({
    tools,
    messages,
    authority: 'finance-ana',
    channelAssurance: 'medium',
  });
  console.log(
    `2. approvals recorded as bound evidence -> ${recorded.map((r) => r.outcome ?? r.reasonCode).join(', ')}`,
  );

  // 3. The SDK runs the approved calls: one refund, the retry gets the same refund back.
  const second = await generateText({ model, tools, messages });
  const results = second.response.messages
    .filter((m) => m.role === 'tool')
    .flatMap((m) => m.content.map((p) => p.output.value));
  for (const result of results) {
    console.log(
      `3. tool result -> ${result.status} (${result.outcome}${result.duplicate ? ', duplicate' : ''}) ${result.result?.id ?? ''}`,
    );
  }

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
