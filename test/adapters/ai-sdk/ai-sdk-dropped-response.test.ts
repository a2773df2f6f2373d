/**
 * A refund through the AI SDK tool whose response is dropped after Stripe wrote it, with keys
 * honoured and ignored: the model is told the refund is in doubt (not to retry), a retry sends
 * nothing, and once the guard verifies it from Stripe's own list the retry gets the one refund.
 */
import { generateText } from 'ai';
import {
  createDevelopmentKeyRing,
  createGuard,
  createManualClock,
  createMemoryStore,
} from 'sideguard';
import { sideguardTool } from 'sideguard/ai-sdk';
import { describe, expect, it } from 'vitest';
import { approvalRefundAction, PRINCIPAL, refundCall, TENANT } from '../agent-harness.js';
import {
  firstRequestFault,
  type IdempotencyMode,
  SETTLING_MS,
  useStripeTestBed,
} from '../stripe/stripe-harness.js';
import { scriptedModel } from './scripted-model.js';

const bed = useStripeTestBed();

describe.each<IdempotencyMode>(['honour', 'ignore'])(
  'an AI SDK refund call whose response is dropped after the write (keys %s)',
  (idempotency) => {
    it('answers in_doubt, a retry sends nothing, and after verification the retry gets the one refund', async () => {
      const sandbox = await bed.sandbox({
        idempotency,
        faults: firstRequestFault('create_refund', { kind: 'drop_after_write' }),
      });
      const { stripe } = bed.kit(sandbox.dataUrl);
      const action = approvalRefundAction(stripe, SETTLING_MS);
      const clock = createManualClock();
      const guard = createGuard({
        store: createMemoryStore(),
        keyRing: createDevelopmentKeyRing('sideguard-adapter-tests'),
        clock,
      });
      const tools = {
        refund: sideguardTool(action, { guard, tenant: TENANT, principal: PRINCIPAL }),
      };
      // 1.00 is within the auto limit: no approval, the first call writes.
      const call = refundCall({ amountMinor: 100 });
      const ask = async () => {
        const result = await generateText({
          model: scriptedModel([{ calls: [call] }]),
          tools,
          prompt: 'Refund 1.00 on ord_1001',
        });
        return result.toolResults[0]?.output as Record<string, unknown>;
      };
      const refunds = async () =>
        (await sandbox.control.observations()).writes.byOperation['payments.create_refund'] ?? 0;

      const first = await ask();
      expect(first).toMatchObject({ status: 'in_doubt', outcome: 'failed_unknown' });
      expect(first.message).toMatch(/Do not retry/);
      expect(await refunds()).toBe(1);

      const retried = await ask();
      expect(retried).toMatchObject({ status: 'in_doubt', proposal: first.proposal });
      expect(await refunds()).toBe(1);

      clock.advance(action.verificationDelayMs);
      const settled = await guard.reconcile(action, {
        tenant: TENANT,
        proposal: String(first.proposal),
      });
      expect(settled.status).toBe('verified');
      const afterwards = await ask();
      const [receipt] = (await sandbox.control.observations()).receipts;
      expect(afterwards).toMatchObject({
        status: 'done',
        duplicate: true,
        result: { id: receipt?.objectId, object: 'refund' },
      });
      expect(await refunds()).toBe(1);
    });
  },
);
