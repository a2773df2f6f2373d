/**
 * The one thing every framework adapter does with a tool call: propose it to the guard under the
 * binding's tenant and principal, and run it when it is authorized. A second call for the same
 * effect resolves to the first proposal (`replayed`), so a retry never writes twice.
 */
import type { ActionDefinition } from '../../core/action.js';
import type { Guard, GuardResult, ProposalView } from '../../core/guard.js';
import type { ChannelAssurance } from '../../core/vocabulary.js';

/** Who a guarded tool acts for: the same for every call of the tool. */
export interface ToolBinding {
  readonly guard: Guard;
  readonly tenant: string;
  /** Who the agent acts on behalf of; it may read its own proposals. */
  readonly principal: string;
  /** The agent's name, recorded with each proposal. @default none */
  readonly agent?: string;
  /** Facts the policy decides on, read by the host for an input. @default none */
  readonly facts?: (input: unknown) => unknown | Promise<unknown>;
}

/** How a person's decision in a chat is recorded as Sideguard evidence. */
export interface ChatApprovalOptions {
  /** The approver, as the host's login or session says (a declared authority of the action). */
  readonly authority: string;
  /**
   * How strongly the chat channel authenticated that person: it must meet the authority's
   * `requiredAssurance` (declared authorities require `medium` unless they say otherwise).
   */
  readonly channelAssurance: ChannelAssurance;
  /** The evidence's issue time, epoch ms; must not be ahead of the guard's clock. @default Date.now() */
  readonly now?: () => number;
  /** How long the approval counts (capped at the proposal's expiry). @default 600_000 */
  readonly validForMs?: number;
}

async function proposalOptions(binding: ToolBinding, input: unknown) {
  const facts = binding.facts === undefined ? undefined : await binding.facts(input);
  return {
    tenant: binding.tenant,
    principal: binding.principal,
    input,
    ...(binding.agent === undefined ? {} : { agent: binding.agent }),
    ...(facts === undefined ? {} : { facts }),
  };
}

// Prepares through one guard run one after another in this process: two parallel tool calls of
// one effect (common in one model step) then resolve to one proposal instead of racing to two
// (the guard's effect claim still allows only one to execute, but people would be asked twice).
const prepareQueues = new WeakMap<Guard, Promise<unknown>>();

function inTurn<T>(guard: Guard, step: () => Promise<T>): Promise<T> {
  const previous = prepareQueues.get(guard) ?? Promise.resolve();
  const next = previous.then(step, step);
  prepareQueues.set(
    guard,
    next.catch(() => undefined),
  );
  return next;
}

/** Proposes the call, or resolves it to the live proposal for the same effect. */
export async function proposeCall(
  binding: ToolBinding,
  action: ActionDefinition,
  input: unknown,
): Promise<GuardResult> {
  const options = await proposalOptions(binding, input);
  return inTurn(binding.guard, () => binding.guard.prepare(action, options));
}

/**
 * Proposes the call and executes it when authorized. A duplicate gets the original result; one
 * that arrives while the original is executing waits for it (at most the execution lease).
 */
export async function runCall(
  binding: ToolBinding,
  action: ActionDefinition,
  input: unknown,
): Promise<GuardResult> {
  const proposed = await proposeCall(binding, action, input);
  // What `guard.run` does, with the prepare taken in turn.
  const result =
    proposed.status === 'authorized'
      ? await binding.guard.execute(action, { tenant: binding.tenant, proposal: proposed.proposal })
      : proposed;
  const inFlight = result.status === 'executing' || result.outcome === 'in_progress';
  return inFlight ? settledDuplicate(binding, action, result) : result;
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits until the original execution ends, then answers as its duplicate. */
async function settledDuplicate(
  binding: ToolBinding,
  action: ActionDefinition,
  result: GuardResult,
): Promise<GuardResult> {
  const until = Date.now() + action.executionLeaseMs;
  let waitMs = 10;
  for (;;) {
    const view = await readProposal(binding, action, result.proposal);
    if (view.status !== 'executing' || Date.now() >= until) {
      const { proposal, status, revision, reasonCode, result: receipts, output } = view;
      return {
        proposal,
        status,
        revision,
        outcome: view.status === 'executing' ? 'in_progress' : 'replayed',
        ...(reasonCode === undefined ? {} : { reasonCode }),
        ...(receipts === undefined ? {} : { result: receipts }),
        ...(output === undefined ? {} : { output }),
      };
    }
    await pause(waitMs);
    waitMs = Math.min(waitMs * 2, 250);
  }
}

/** The proposal as its principal sees it. */
export function readProposal(
  binding: ToolBinding,
  action: ActionDefinition,
  proposal: string,
): Promise<ProposalView> {
  return binding.guard.read(action, {
    tenant: binding.tenant,
    proposal,
    reader: binding.principal,
  });
}

/**
 * Whether a call must go through the framework's approval step: its proposal awaits authority,
 * or it is authorized because people approved it (the framework checks again when it resumes,
 * and a "no" then would turn the approval into a denial). Effects already done, refused or
 * allowed by policy need no approval: the tool's result says what happened.
 */
export async function callNeedsApproval(
  binding: ToolBinding,
  action: ActionDefinition,
  input: unknown,
): Promise<{ readonly needed: boolean; readonly result: GuardResult }> {
  const result = await proposeCall(binding, action, input);
  if (result.status === null) return { needed: false, result };
  if (result.status === 'awaiting_authority') return { needed: true, result };
  if (result.status !== 'authorized') return { needed: false, result };
  const view = await readProposal(binding, action, result.proposal);
  return { needed: view.authority.required > 0, result };
}
