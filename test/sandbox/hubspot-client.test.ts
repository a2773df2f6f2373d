/**
 * The official `@hubspot/api-client` against the sandbox's CRM provider, unchanged but for its
 * `basePath`: reads, a PATCH that carries the effect, and errors as the client's own exceptions.
 */
import { Client } from '@hubspot/api-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keys, startTestSandbox } from './sandbox-helpers.js';

type Sandbox = Awaited<ReturnType<typeof startTestSandbox>>;

describe('the official HubSpot client against the sandbox', () => {
  let sandbox: Sandbox;
  let hubspot: Client;
  beforeAll(async () => {
    sandbox = await startTestSandbox();
    // No retries of its own: an unknown outcome is for the guard to verify, not to resend.
    hubspot = new Client({
      accessToken: keys.crmWriter,
      basePath: sandbox.dataUrl,
      numberOfApiCallRetries: 0,
    });
  });
  afterAll(async () => {
    await sandbox.stop();
  });

  it('reads a ticket and patches it, with the effect recorded as the sandbox’s own evidence', async () => {
    const ticket = await hubspot.crm.tickets.basicApi.getById('5001', ['subject', 'order_id']);
    expect(ticket.id).toBe('5001');
    expect(ticket.properties.order_id).toBe('ord_1001');

    const updated = await hubspot.crm.tickets.basicApi.update('5001', {
      properties: { hs_pipeline_stage: '4', sideguard_effect: 'hubspot-client-1' },
    });
    expect(updated.properties.hs_pipeline_stage).toBe('4');
    const observations = await sandbox.control.observations();
    expect(observations.writes.byEffect['hubspot-client-1']).toEqual({
      count: 1,
      byOperation: { 'crm.update_ticket': 1 },
    });
  });

  it('raises the client’s own error with HubSpot’s status and category', async () => {
    const error = await hubspot.crm.tickets.basicApi
      .getById('999999')
      .catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 404 });
    expect(JSON.stringify((error as { body?: unknown }).body)).toContain('OBJECT_NOT_FOUND');
    const writesBefore = (await sandbox.control.observations()).writes.total;
    const reader = new Client({
      accessToken: keys.crmReader,
      basePath: sandbox.dataUrl,
      numberOfApiCallRetries: 0,
    });
    await expect(
      reader.crm.tickets.basicApi.update('5002', { properties: { hs_ticket_priority: 'HIGH' } }),
    ).rejects.toMatchObject({ code: 403 });
    expect((await sandbox.control.observations()).writes.total).toBe(writesBefore);
  });
});
