/**
 * Actors every workload composes: agents that propose and retry, duplicate agents, sweepers,
 * approvers (honest, vetoing, late or tampering), compensators, a bystander who refunds the same
 * charge elsewhere (drift), and dry runs. Every decision comes from the tape.
 */
import type { ActionDefinition } from '../../core/action.js';
import { buildAuthorityEvidence } from '../../core/evidence.js';
import type { Guard, GuardResult, PrepareOptions } from '../../core/guard.js';
import type { Actor } from '../scheduler.js';
import type { AgentRequest, World } from '../world.js';

/** A workload: declares its actions, seeds the provider and spawns the fault-phase actors. */
export interface WorkloadDefinition {
  readonly name: string;
  setup(world: World): void;
}

/** Outcomes after which an agent tries again (nothing final happened yet). */
const RETRY_OUTCOMES = new Set([
  'failed_unknown',
  'in_progress',
  'verification_pending',
  'conflict',
  'resend_allowed',
  'authorized',
]);

/**
 * The options of one `run` of `request` under `requestId`, with `facts` when read. Built without
 * spreads: V8 defines a property that follows a spread in a literal through the runtime, and this
 * runs for every agent attempt.
 */
export function runOptions(
  tenant: string,
  request: AgentRequest,
  requestId: string,
  facts: unknown,
): Omit<PrepareOptions, 'mode'> {
  const options: { -readonly [K in keyof Omit<PrepareOptions, 'mode'>]: PrepareOptions[K] } = {
    tenant,
    input: Object.assign({}, request.input, { requestId }),
    principal: request.principal,
  };
  if (facts !== undefined) options.facts = facts;
  return options;
}

/** One agent attempt: read the facts, then `run` (prepare + execute) with a fresh request id. */
export async function agentAttempt(
  world: World,
  guard: Guard,
  actor: Actor,
  request: AgentRequest,
  attempt: number,
): Promise<GuardResult | undefined> {
  const facts = request.facts === undefined ? undefined : await request.facts();
  const result = await world.call(actor, 'run', null, () =>
    guard.run(request.action, runOptions(world.tenant, request, `${actor.name}-${attempt}`, facts)),
  );
  world.remember(result, request);
  return result;
}

/** Spawns an agent that proposes `request` and retries up to `retries` times. */
export function spawnAgent(
  world: World,
  request: AgentRequest,
  options: { readonly name: string; readonly retries: number; readonly duplicate?: boolean },
): void {
  world.addRequest(request);
  world.spawn(
    options.duplicate ? 'duplicate_agent' : 'agent',
    options.name,
    'app',
    async (guard, actor) => {
      for (let attempt = 0; attempt <= options.retries; attempt++) {
        const result = await agentAttempt(world, guard, actor, request, attempt);
        if (result !== undefined && !RETRY_OUTCOMES.has(result.outcome)) return;
      }
    },
  );
}

/** Spawns a sweeper in the worker process: `rounds` sweeps over every action. */
export function spawnSweeper(world: World, name: string, rounds: number): void {
  world.spawn('sweeper', name, 'worker', async (guard, actor) => {
    for (let round = 0; round < rounds; round++) {
      for (const action of world.actions.values()) {
        const results = await world.call(actor, 'sweep', null, () =>
          guard.sweep(action, { tenant: world.tenant }),
        );
        for (const result of results ?? []) world.remember(result, undefined);
      }
    }
  });
}

/** How an approver behaves. */
export interface ApproverPlan {
  readonly authority: string;
  readonly assurance: 'low' | 'medium' | 'high';
  readonly decision: 'approve' | 'reject';
  readonly validForMs: number;
  /** Presents evidence bound to a different commitment (tampered). */
  readonly tamper: boolean;
}

/** Draws an approver's behaviour for a 2-of-3 rule. */
export function drawApprover(
  world: World,
  authority: string,
  assurance: 'medium' | 'high',
): ApproverPlan {
  const { tape } = world;
  return {
    authority,
    assurance,
    decision: tape.chance(8) ? 'reject' : 'approve',
    validForMs: [600_000, 5_000, 60_000][tape.weighted([80, 12, 8])] ?? 600_000,
    tamper: tape.chance(4),
  };
}

/** Spawns an approver who reads the proposal and records bound evidence. */
export function spawnApprover(
  world: World,
  action: ActionDefinition,
  proposal: string,
  plan: ApproverPlan,
): void {
  world.spawn('approver', `approver:${plan.authority}`, 'app', async (guard, actor) => {
    const view = await world.call(actor, 'read', proposal, () =>
      guard.read(action, { tenant: world.tenant, proposal, reader: plan.authority }),
    );
    const bindings = view?.evidenceBindings;
    if (bindings === undefined) return;
    const evidence = buildAuthorityEvidence(bindings, {
      authority: plan.authority,
      decision: plan.decision,
      channelAssurance: plan.assurance,
      issuedAt: world.clock.now(),
      validForMs: plan.validForMs,
    });
    const presented = plan.tamper
      ? {
          ...evidence,
          proposalCommitment: {
            ...evidence.proposalCommitment,
            value: `${evidence.proposalCommitment.value.slice(0, -1)}${evidence.proposalCommitment.value.endsWith('A') ? 'B' : 'A'}`,
          },
        }
      : evidence;
    const result = await world.call(actor, 'recordAuthority', proposal, () =>
      guard.recordAuthority(action, {
        tenant: world.tenant,
        evidence: presented,
        authenticatedAuthority: plan.authority,
      }),
    );
    world.remember(result, undefined);
  });
}

/** Spawns a compensator (worker) that compensates every proposal that needs it, `rounds` times. */
export function spawnCompensator(world: World, name: string, rounds: number): void {
  world.spawn('compensator', name, 'worker', async (guard, actor) => {
    for (let round = 0; round < rounds; round++) {
      for (const record of [...world.log.records.values()]) {
        const action = world.actions.get(record.actionType);
        if (record.status !== 'compensation_required' || action?.config.compensate === undefined)
          continue;
        const result = await world.call(actor, 'compensate', record.proposal, () =>
          guard.compensate(action, { tenant: world.tenant, proposal: record.proposal }),
        );
        world.remember(result, undefined);
      }
      await world.scheduler.point(`${name}: wait`, 'store_read');
    }
  });
}

/**
 * Spawns a bystander who refunds part of the charge outside the guard and lowers the order's
 * eligible amount: material drift for proposals that have not executed yet.
 */
export function spawnBystander(
  world: World,
  orderId: string,
  chargeId: string,
  leftMinor: number,
): void {
  world.spawn('bystander', 'bystander', 'app', async () => {
    await world.provider.write(
      {
        operation: 'create_refund',
        kind: 'create',
        collection: 'refunds',
        fields: { charge: chargeId, amount: 100, reason: 'duplicate' },
      },
      'kit',
    );
    await world.provider.write(
      {
        operation: 'update_order',
        kind: 'set',
        collection: 'orders',
        objectId: orderId,
        fields: { eligible_refund_amount_minor: leftMinor },
      },
      'kit',
    );
  });
}

/** Spawns a dry run of `request` (it must never write or claim). */
export function spawnDryRun(world: World, request: AgentRequest): void {
  world.spawn('agent', 'dry-run', 'app', async (guard, actor) => {
    const facts = request.facts === undefined ? undefined : await request.facts();
    await world.call(actor, 'prepare(dry_run)', null, () =>
      guard.prepare(request.action, {
        tenant: world.tenant,
        input: { ...request.input, requestId: 'dry-run' },
        principal: request.principal,
        mode: 'dry_run',
        ...(facts === undefined ? {} : { facts }),
      }),
    );
  });
}
