/**
 * The built-in workloads over the support workflow's actions: `refund`, `refund-and-close`,
 * `approvals` (2-of-3 with veto, expiry and tampered evidence) and `compensation`; `mix` draws one
 * of them per schedule. Every shape decision (how many requests, duplicates, retries, sweeps,
 * approvers) is drawn first, so shrinking drops actors and retries by lowering choices.
 */
import type { ActionDefinition } from '../../core/action.js';
import type { JsonValue } from '../../core/canonical-json.js';
import type { WorkloadName } from '../explore-vocabulary.js';
import type { AgentRequest, World } from '../world.js';
import {
  defineModelRefundAction,
  defineModelRefundAndCloseAction,
  MODEL_INPUT_BINDINGS,
  type ModelActionOptions,
  readOrderFacts,
} from './model-actions.js';
import {
  agentAttempt,
  drawApprover,
  spawnAgent,
  spawnApprover,
  spawnBystander,
  spawnCompensator,
  spawnDryRun,
  spawnSweeper,
  type WorkloadDefinition,
} from './workload-kit.js';

/** The seeded orders (the provider's initial state). */
const ORDERS = [
  { orderId: 'ord_1001', chargeId: 'ch_1001', customerId: 'cus_1001', ticketId: '5001' },
  { orderId: 'ord_1002', chargeId: 'ch_1002', customerId: 'cus_1002', ticketId: '5002' },
] as const;

/** Private details of the synthetic case: kept encrypted, never in the ledger (I8). */
const PRIVATE_NOTE = 'Customer Ada Lovelace <ada.lovelace@example.test> says the parcel never came';

function seedProvider(world: World, refusesClose: boolean): void {
  for (const order of ORDERS) {
    world.provider.seed('orders', order.orderId, {
      eligible_refund_amount_minor: 190_000,
      currency: 'usd',
    });
    world.provider.seed('charges', order.chargeId, { amount: 200_000, currency: 'usd' });
    // Fields assigned after the literal, not spread into it: V8 defines what follows a spread
    // through the runtime, and every schedule seeds these.
    const ticket: Record<string, JsonValue> = { hs_pipeline_stage: '1' };
    if (refusesClose) ticket.refuses = 'update_ticket';
    world.provider.seed('tickets', order.ticketId, ticket);
  }
  world.privateValues.push(PRIVATE_NOTE, 'ada.lovelace@example.test');
}

const INPUT_BINDINGS = Object.entries(MODEL_INPUT_BINDINGS);

function useActions(world: World, actions: readonly ActionDefinition[]): void {
  for (const action of actions) world.actions.set(action.typeName, action);
  for (const [operation, binding] of INPUT_BINDINGS) world.inputBindings.set(operation, binding);
}

/** The provider model of the schedule running now (one schedule runs at a time per process). */
let currentProvider: World['provider'] | undefined;

/** Defined actions, by {@link variantIndex}. */
const definitions: ActionDefinition[] = [];

/** The executor variant as one small integer: no key string and no options object per schedule. */
const variantIndex = (world: World, kind: 'refund' | 'refund-and-close', driftCheck: boolean) =>
  (kind === 'refund' ? 0 : 1) |
  (world.breakages.has('retrying_transport') ? 2 : 0) |
  (world.breakages.has('executor_ignores_signal') ? 4 : 0) |
  (driftCheck ? 8 : 0);

/**
 * The action for this schedule, defined once per process and executor variant: defining one
 * builds its strict schema (and zod compiles it on first use), which would otherwise be paid
 * on every schedule. Its provider is read through the schedule now running. Its executors talk
 * to the provider through the executor kit (one attempt, no hidden retries) and honour the
 * lease's signal, as a real executor must; the `retrying_transport` and `executor_ignores_signal`
 * breakages switch either off.
 */
function actionFor(
  world: World,
  kind: 'refund' | 'refund-and-close',
  driftCheck = true,
): ActionDefinition {
  currentProvider = world.provider;
  const index = variantIndex(world, kind, driftCheck);
  let action = definitions[index];
  if (action === undefined) {
    const options: ModelActionOptions = {
      get provider() {
        if (currentProvider === undefined) throw new Error('no schedule is running');
        return currentProvider;
      },
      transport: (index & 2) === 0 ? 'kit' : 'retrying',
      ignoresSignal: (index & 4) !== 0,
      driftCheck,
    };
    action =
      kind === 'refund'
        ? (defineModelRefundAction(options) as unknown as ActionDefinition)
        : (defineModelRefundAndCloseAction(options) as unknown as ActionDefinition);
    definitions[index] = action;
  }
  return action;
}

function requestFor(
  world: World,
  action: ActionDefinition,
  amounts: readonly string[],
  withTicket: boolean,
): AgentRequest {
  const order = ORDERS[world.tape.choose(ORDERS.length)] ?? ORDERS[0];
  const amount = amounts[world.tape.choose(amounts.length)] ?? '25.00';
  const input: Record<string, JsonValue> = {
    caseId: 'case_explore',
    orderId: order.orderId,
    chargeId: order.chargeId,
    customerId: order.customerId,
    amount,
    currency: 'usd',
    reason: 'requested_by_customer',
    note: PRIVATE_NOTE,
  };
  if (withTicket) input.ticketId = order.ticketId;
  return {
    action,
    input,
    principal: 'support-agent',
    label: `${action.type.name}:${order.orderId}:${amount}`,
    facts: () => readOrderFacts(world.provider, order.orderId),
  };
}

/** Agents (with duplicates and retries), sweepers, and now and then a bystander and a dry run. */
function spawnDirectWorkload(world: World, action: ActionDefinition, withTicket: boolean): void {
  const { tape } = world;
  const requests = 1 + tape.choose(2);
  for (let index = 0; index < requests; index++) {
    const request = requestFor(world, action, ['25.00', '80.00'], withTicket);
    spawnAgent(world, request, { name: `agent${index + 1}`, retries: tape.choose(3) });
    if (tape.chance(35)) {
      spawnAgent(world, request, {
        name: `agent${index + 1}-dup`,
        retries: tape.choose(2),
        duplicate: true,
      });
    }
    if (tape.chance(8)) spawnDryRun(world, request);
  }
  spawnSweeper(world, 'sweeper', 2 + tape.choose(4));
  if (tape.chance(10)) spawnBystander(world, ORDERS[0].orderId, ORDERS[0].chargeId, 1_000);
}

const refund: WorkloadDefinition = {
  name: 'refund',
  setup(world) {
    seedProvider(world, false);
    const action = actionFor(world, 'refund');
    useActions(world, [action]);
    spawnDirectWorkload(world, action, false);
  },
};

/** `refund` with no drift check: `run`'s one-commit insert and claim under faults. */
const refundNoDriftCheck: WorkloadDefinition = {
  name: 'refund-no-drift-check',
  setup(world) {
    seedProvider(world, false);
    const action = actionFor(world, 'refund', false);
    useActions(world, [action]);
    spawnDirectWorkload(world, action, false);
  },
};

const refundAndClose: WorkloadDefinition = {
  name: 'refund-and-close',
  setup(world) {
    seedProvider(world, false);
    const action = actionFor(world, 'refund-and-close');
    useActions(world, [action]);
    spawnDirectWorkload(world, action, true);
    if (world.tape.chance(50)) spawnCompensator(world, 'compensator', 2 + world.tape.choose(3));
  },
};

const compensation: WorkloadDefinition = {
  name: 'compensation',
  setup(world) {
    // The ticket refuses to close, so every refund that lands needs compensation.
    seedProvider(world, true);
    const action = actionFor(world, 'refund-and-close');
    useActions(world, [action]);
    spawnDirectWorkload(world, action, true);
    spawnCompensator(world, 'compensator', 2 + world.tape.choose(3));
    if (world.tape.chance(40)) spawnCompensator(world, 'compensator-2', 1 + world.tape.choose(3));
  },
};

const AUTHORITIES = [
  { id: 'finance-lead', assurance: 'high' },
  { id: 'support-manager', assurance: 'medium' },
  { id: 'risk-officer', assurance: 'medium' },
] as const;

const approvalsWorkload: WorkloadDefinition = {
  name: 'approvals',
  setup(world) {
    const { tape } = world;
    seedProvider(world, false);
    const action = actionFor(world, 'refund');
    useActions(world, [action]);
    const request = requestFor(world, action, ['150.00', '900.00'], false);
    world.addRequest(request);
    const approvers = AUTHORITIES.filter((_, index) => index < 2 || tape.chance(50)).map(
      (authority) => drawApprover(world, authority.id, authority.assurance),
    );
    const polls = 1 + tape.choose(3);
    world.spawn('agent', 'agent1', 'app', async (guard, actor) => {
      const prepared = await agentAttempt(world, guard, actor, request, 0);
      if (prepared?.outcome !== 'authority_pending') return;
      for (const approver of approvers) spawnApprover(world, action, prepared.proposal, approver);
      for (let poll = 0; poll < polls; poll++) {
        await world.scheduler.point('agent1: wait for approval', 'store_read');
        const result = await world.call(actor, 'execute', prepared.proposal, () =>
          guard.execute(action, { tenant: world.tenant, proposal: prepared.proposal }),
        );
        world.remember(result, request);
        if (
          result !== undefined &&
          !['authority_pending', 'authorized', 'in_progress'].includes(result.outcome)
        ) {
          return;
        }
      }
    });
    if (tape.chance(25))
      spawnAgent(world, request, { name: 'agent1-dup', retries: tape.choose(2), duplicate: true });
    spawnSweeper(world, 'sweeper', 2 + tape.choose(4));
  },
};

/** The built-in workloads by name (`mix` is resolved per schedule). */
export const BUILTIN_WORKLOADS: Readonly<Record<Exclude<WorkloadName, 'mix'>, WorkloadDefinition>> =
  {
    refund,
    'refund-no-drift-check': refundNoDriftCheck,
    'refund-and-close': refundAndClose,
    approvals: approvalsWorkload,
    compensation,
  };

/** The order `mix` draws from (index 0 is the simplest). */
export const MIX_ORDER: readonly Exclude<WorkloadName, 'mix'>[] = [
  'refund',
  'refund-and-close',
  'approvals',
  'compensation',
];
