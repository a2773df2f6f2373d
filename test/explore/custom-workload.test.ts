/**
 * A user's own declared action explored against the provider model: a CRM note that must be
 * created once, with agents racing, retrying and a sweeper reconciling under every fault.
 */

import { defineAction } from 'sideguard';
import {
  ChoiceTape,
  runAndCheck,
  spawnAgent,
  spawnSweeper,
  type WorkloadDefinition,
} from 'sideguard/explore';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';

function noteWorkload(freshKeyPerCall: boolean): WorkloadDefinition {
  return {
    name: freshKeyPerCall ? 'crm-note-fresh-keys' : 'crm-note',
    setup(world) {
      let calls = 0;
      const action = defineAction({
        type: { namespace: 'crm', name: 'note', version: 1 },
        input: z.object({
          ticketId: z.string(),
          text: z.string(),
          requestId: z.string().optional(),
        }),
        protectedFields: ['ticketId', 'text'],
        policy: () => ({ decision: 'allow', reason: 'notes_are_allowed' }),
        execute: async (input, context) => {
          calls += 1;
          const reply = await world.provider.write(
            {
              operation: 'create_note',
              kind: 'create',
              collection: 'notes',
              idempotencyKey: freshKeyPerCall ? `random-${calls}` : context.providerIdempotencyKey,
              effect: context.semanticEffectKey,
              proposal: context.proposal,
              fields: { ticket: input.ticketId, text: input.text },
            },
            'kit',
          );
          if (reply.kind === 'response' && reply.status === 200) {
            return {
              kind: 'accepted',
              receipt: { id: (reply.body as { id: string }).id, provider: 'notes' },
            };
          }
          return reply.kind === 'response' && reply.status < 500 && reply.status !== 409
            ? { kind: 'failed_known', reason: `http_${reply.status}` }
            : { kind: 'failed_unknown', reason: 'no_answer' };
        },
        verify: async (_input, context) => {
          const reply = await world.provider.read({
            operation: 'list_notes',
            collection: 'notes',
            where: (note) => note.effect === context.semanticEffectKey,
          });
          if (reply.kind !== 'response' || reply.status !== 200) return { kind: 'unknown' };
          const [found] = (reply.body as { data: { id: string }[] }).data;
          return found === undefined
            ? { kind: 'absent', final: false }
            : { kind: 'present', receipt: { id: found.id, provider: 'notes' } };
        },
      });
      world.actions.set(action.typeName, action);
      const request = {
        action,
        input: { ticketId: 't1', text: 'called back' },
        principal: 'agent',
        label: 'note:t1',
      };
      spawnAgent(world, request, { name: 'agent1', retries: 2 });
      spawnAgent(world, request, { name: 'agent2', retries: 1, duplicate: true });
      spawnSweeper(world, 'sweeper', 3);
    },
  };
}

describe('a user-declared workload against the provider model', () => {
  it('an executor that sends the guard key stays at one note per effect over 60 seeds', async () => {
    for (let seed = 1; seed <= 60; seed++) {
      const { violations } = await runAndCheck(ChoiceTape.fromSeed(seed), {
        workload: noteWorkload(false),
      });
      expect(violations.filter((v) => v.invariant === 'one_write_per_effect')).toEqual([]);
    }
  });
});
