/**
 * A provider refusal with private text in it: a Stripe-shaped 402 `card_declined` whose message
 * names the customer, served by a real HTTP server to the official client on the kit. The guard
 * records `failed_known` with `http_402_card_declined`, and nothing of the message reaches the
 * ledger. (The sandbox has no card errors, so a raw server plays Stripe here.)
 */
import { stripeClientSettings } from 'sideguard/stripe';
import Stripe from 'stripe';
import { describe, expect, it } from 'vitest';
import { jsonResponse, type ObservedServer, startRawHttpServer } from '../../kit/socket-servers.js';
import {
  createTestGuard,
  kitRefundAction,
  runRefund,
  TENANT,
  useStripeTestBed,
} from './stripe-harness.js';

const PRIVATE_TEXT = 'Your card was declined, Jane Doe (jane.doe@example.com)';

const bed = useStripeTestBed();

async function stripeAgainst(server: ObservedServer): Promise<Stripe> {
  const transport = bed.transport();
  return new Stripe('sk_test_anything', {
    host: '127.0.0.1',
    port: server.port,
    protocol: 'http',
    ...stripeClientSettings(transport),
  });
}

describe('a card-declined-like refusal', () => {
  it('is failed_known with the provider code, sent once, and no private text in the ledger', async () => {
    const server = await startRawHttpServer({
      kind: 'respond',
      raw: jsonResponse(
        402,
        {
          error: {
            type: 'card_error',
            code: 'card_declined',
            decline_code: 'insufficient_funds',
            message: PRIVATE_TEXT,
          },
        },
        { 'Request-Id': 'req_declined_1' },
      ),
    });
    bed.defer(() => server.close());
    const { guard } = createTestGuard();
    const result = await runRefund(guard, kitRefundAction(await stripeAgainst(server)));
    expect(result).toMatchObject({
      status: 'failed_known',
      outcome: 'failed_known',
      reasonCode: 'http_402_card_declined',
    });
    expect(server.requests).toHaveLength(1);
    const ledger = await guard.exportLedger({ tenant: TENANT });
    expect(ledger).toContain('http_402_card_declined');
    for (const fragment of ['Jane', 'jane.doe', 'declined,', 'insufficient_funds']) {
      expect(ledger).not.toContain(fragment);
    }
  });

  it('a provider code that is free text is dropped from the reason, keeping only the status', async () => {
    const server = await startRawHttpServer({
      kind: 'respond',
      raw: jsonResponse(400, { error: { type: 'invalid request', code: PRIVATE_TEXT } }),
    });
    bed.defer(() => server.close());
    const { guard } = createTestGuard();
    const result = await runRefund(guard, kitRefundAction(await stripeAgainst(server)));
    expect(result).toMatchObject({ status: 'failed_known', reasonCode: 'http_400' });
    expect(await guard.exportLedger({ tenant: TENANT })).not.toContain('Jane');
  });
});
