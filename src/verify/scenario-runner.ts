/**
 * Runs one scenario: resets the sandbox, sets its fault plan, plays the agent's plan through
 * the guard, and writes the evidence to disk (ledger JSONL, sandbox export, store records and a
 * manifest of ids). It decides nothing: the judge reads those files afterwards.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ActionDefinition } from '../core/action.js';
import { createManualClock, type ManualClock } from '../core/clock.js';
import { buildAuthorityEvidence } from '../core/evidence.js';
import type { Guard } from '../core/guard.js';
import type { KeyRing } from '../core/key-ring.js';
import type { GuardStore } from '../core/store.js';
import type { RunningSandbox } from '../sandbox/start-sandbox.js';
import { providerRequest } from './provider-client.js';
import {
  defineRefundAction,
  defineRefundAndCloseAction,
  type ProviderEndpoints,
  readRefundFacts,
} from './refund-actions.js';
import { buildRunGuard, type GuardUnderTest } from './run-guard.js';
import type { ScenarioManifest } from './scenario-artifacts.js';
import { writeScenarioEvidence } from './scenario-evidence-writer.js';
import {
  type ActionPlan,
  bindCaseArguments,
  type PlanStep,
  type Scenario,
  type ScenarioCatalogue,
  type SupportCase,
} from './scenario-fixtures.js';
import type { StoreLocation } from './store-location.js';

/** What a scenario run needs from the gate. */
export interface ScenarioEnvironment {
  readonly outputDir: string;
  readonly store: GuardStore;
  readonly storeLocation: StoreLocation;
  readonly keyRing: KeyRing;
  /** The key ring's development label, for the crash worker. */
  readonly keyRingLabel: string;
  readonly sandboxes: { readonly honour: RunningSandbox; readonly ignore: RunningSandbox };
  readonly runId: string;
  /** Test-only: a guard broken on purpose (see `run-guard.ts`). */
  readonly underTest?: GuardUnderTest | undefined;
}

const PRINCIPAL = 'support-agent';

interface RunState {
  readonly scenario: Scenario;
  readonly supportCase: SupportCase;
  readonly tenant: string;
  readonly guard: Guard;
  readonly clock: ManualClock;
  readonly endpoints: ProviderEndpoints;
  readonly actions: Readonly<Record<string, ActionDefinition>>;
  readonly refs: Map<string, { proposal: string; action: ActionDefinition }>;
  readonly env: ScenarioEnvironment;
}

const actionOf = (state: RunState, name: string): ActionDefinition => {
  const action = state.actions[name];
  if (action === undefined) throw new Error(`unknown action ${name}`);
  return action;
};

const refOf = (state: RunState, ref: string) => {
  const entry = state.refs.get(ref);
  if (entry === undefined) throw new Error(`step refers to ${ref} before it was proposed`);
  return entry;
};

async function propose(
  state: RunState,
  step: {
    ref: string;
    action: string;
    args: Record<string, unknown>;
    mode?: 'commit' | 'dry_run' | undefined;
  },
  run: boolean,
): Promise<void> {
  const action = actionOf(state, step.action);
  const input = bindCaseArguments(step.args, state.supportCase);
  const orderId = typeof input.orderId === 'string' ? input.orderId : undefined;
  const facts = orderId === undefined ? undefined : await readRefundFacts(state.endpoints, orderId);
  const options = {
    tenant: state.tenant,
    input,
    principal: PRINCIPAL,
    agent: `plan:${step.ref}`,
    ...(facts === undefined ? {} : { facts: { ...facts } }),
  };
  const result = run
    ? await state.guard.run(action, options)
    : await state.guard.prepare(action, { ...options, mode: step.mode ?? 'commit' });
  // For a replay the guard answers with the proposal that owns the effect: the ref follows it.
  state.refs.set(step.ref, { proposal: result.proposal, action });
}

async function approve(state: RunState, step: Extract<PlanStep, { do: 'approve' }>): Promise<void> {
  const target = refOf(state, step.ref);
  const source = step.bindingsFrom === undefined ? target : refOf(state, step.bindingsFrom);
  const view = await state.guard.read(source.action, {
    tenant: state.tenant,
    proposal: source.proposal,
    reader: step.authority,
  });
  if (view.evidenceBindings === undefined) {
    throw new Error(`proposal of ${step.ref} has no bindings`);
  }
  let commitment = view.evidenceBindings.proposalCommitment;
  if (step.commitmentFrom !== undefined) {
    const other = refOf(state, step.commitmentFrom);
    const otherView = await state.guard.read(other.action, {
      tenant: state.tenant,
      proposal: other.proposal,
      reader: step.authority,
    });
    if (otherView.evidenceBindings === undefined) {
      throw new Error(`proposal of ${step.commitmentFrom} has no bindings`);
    }
    commitment = otherView.evidenceBindings.proposalCommitment;
  }
  const evidence = buildAuthorityEvidence(
    // Evidence made for one proposal and presented for another must be refused by the guard.
    { ...view.evidenceBindings, proposal: target.proposal, proposalCommitment: commitment },
    {
      authority: step.authority,
      decision: step.decision ?? 'approve',
      channelAssurance: step.assurance ?? 'high',
      issuedAt: state.clock.now(),
      ...(step.validForMs === undefined ? {} : { validForMs: step.validForMs }),
    },
  );
  await state.guard.recordAuthority(target.action, {
    tenant: state.tenant,
    evidence,
    authenticatedAuthority: step.authority,
  });
}

async function refundElsewhere(
  state: RunState,
  chargeId: string,
  amountMinor: number,
): Promise<void> {
  const reply = await providerRequest({
    method: 'POST',
    url: `${state.endpoints.dataUrl}/v1/refunds`,
    headers: { authorization: 'Bearer sk_test_sideguard_agent' },
    body: {
      form: { charge: chargeId, amount: String(amountMinor), reason: 'requested_by_customer' },
    },
  });
  if (reply.kind !== 'response' || reply.status !== 200) {
    throw new Error(
      `refund elsewhere failed: ${reply.kind === 'response' ? reply.status : reply.reason}`,
    );
  }
}

/** UNSAFE on purpose: what a naive runner does after an unknown outcome (resend, new key). */
async function blindResend(state: RunState, ref: string): Promise<void> {
  const entry = refOf(state, ref);
  const view = await state.guard.read(entry.action, {
    tenant: state.tenant,
    proposal: entry.proposal,
    reader: PRINCIPAL,
  });
  const input = view.input as { chargeId: string; amount: string; reason: string };
  await providerRequest({
    method: 'POST',
    url: `${state.endpoints.dataUrl}/v1/refunds`,
    headers: {
      authorization: 'Bearer sk_test_sideguard_agent',
      'idempotency-key': `naive-${randomUUID()}`,
    },
    body: {
      form: {
        charge: input.chargeId,
        amount: String(Math.round(Number(input.amount) * 100)),
        reason: input.reason,
        'metadata[sideguard_effect]': view.semanticEffectKey ?? '',
      },
    },
  });
}

const workerPath = join(dirname(fileURLToPath(import.meta.url)), 'crash-worker.js');

/** Executes in a child process that SIGKILLs itself after the provider committed. */
async function crashAfterProviderCommit(state: RunState, ref: string): Promise<void> {
  const entry = refOf(state, ref);
  const config = {
    store: state.env.storeLocation,
    keyRingLabel: state.env.keyRingLabel,
    tenant: state.tenant,
    proposal: entry.proposal,
    action: entry.action.typeName,
    dataUrl: state.endpoints.dataUrl,
    clockMs: state.clock.now(),
  };
  const exit = await new Promise<{
    code: number | null;
    signal: NodeJS.Signals | null;
    stderr: string;
  }>((resolve, reject) => {
    const child = spawn(process.execPath, [workerPath, JSON.stringify(config)], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
    });
    child.on('error', reject);
    child.on('exit', (code, signal) => resolve({ code, signal, stderr }));
  });
  if (exit.signal !== 'SIGKILL') {
    throw new Error(
      `crash worker did not die at the crash point (exit ${exit.code}, signal ${exit.signal}): ${exit.stderr.trim().slice(0, 300)}`,
    );
  }
  // The dead executor's lease must run out before anyone may reconcile it.
  state.clock.advance(entry.action.executionLeaseMs + 1);
}

async function runStep(state: RunState, step: PlanStep): Promise<void> {
  const { guard, tenant } = state;
  switch (step.do) {
    case 'propose':
      return propose(state, step, false);
    case 'run':
      return propose(state, step, true);
    case 'execute': {
      const entry = refOf(state, step.ref);
      await guard.execute(entry.action, { tenant, proposal: entry.proposal });
      return;
    }
    case 'approve':
      return approve(state, step);
    case 'advance_clock':
      state.clock.advance(step.ms);
      return;
    case 'reconcile': {
      const entry = refOf(state, step.ref);
      await guard.reconcile(entry.action, { tenant, proposal: entry.proposal });
      return;
    }
    case 'compensate': {
      const entry = refOf(state, step.ref);
      await guard.compensate(entry.action, { tenant, proposal: entry.proposal });
      return;
    }
    case 'erase': {
      const entry = refOf(state, step.ref);
      await guard.erase(entry.action, { tenant, proposal: entry.proposal, reader: step.reader });
      return;
    }
    case 'refund_elsewhere':
      return refundElsewhere(state, step.chargeId, step.amountMinor);
    case 'crash_after_provider_commit':
      return crashAfterProviderCommit(state, step.ref);
    case 'blind_resend':
      return blindResend(state, step.ref);
    case 'concurrent': {
      const copies = Array.from({ length: step.count }, (_, index) => {
        const inner = step.step;
        return 'ref' in inner && (inner.do === 'propose' || inner.do === 'run')
          ? { ...inner, ref: `${inner.ref}_${index + 1}` }
          : inner;
      });
      const settled = await Promise.allSettled(copies.map((copy) => runStep(state, copy)));
      const failed = settled.find((result) => result.status === 'rejected');
      if (failed?.status === 'rejected') throw failed.reason;
      return;
    }
  }
}

const QUIESCENCE_TIMEOUT_MS = 10_000;

/** Waits until no data-plane request is in flight (hanging, held, …); returns how many still are. */
async function waitForQuiescence(sandbox: RunningSandbox, timeoutMs: number): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const pending = (await sandbox.control.observations()).inFlight.length;
    if (pending === 0 || Date.now() >= deadline) return pending;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Plays one scenario and writes its evidence. Returns the manifest. */
export async function runScenario(
  env: ScenarioEnvironment,
  catalogue: ScenarioCatalogue,
  scenario: Scenario,
): Promise<ScenarioManifest> {
  const supportCase = catalogue.cases.get(scenario.case);
  const plan: ActionPlan | undefined = catalogue.plans.get(scenario.plan);
  if (supportCase === undefined || plan === undefined) {
    throw new Error(`scenario ${scenario.name} has no case or plan`);
  }
  const idempotency = scenario.idempotency ?? 'honour';
  const sandbox = env.sandboxes[idempotency];
  await sandbox.control.reset();
  if (scenario.faults === undefined) await sandbox.control.clearFaults();
  else await sandbox.control.setFaults(scenario.faults);

  const tenant = `${scenario.name}.${env.runId}`;
  const clock = createManualClock(Date.now());
  const guard = buildRunGuard({
    store: env.store,
    keyRing: env.keyRing,
    clock,
    underTest: env.underTest,
  });
  const endpoints: ProviderEndpoints = { dataUrl: sandbox.dataUrl, writeTimeoutMs: 800 };
  const state: RunState = {
    scenario,
    supportCase,
    tenant,
    guard,
    clock,
    endpoints,
    actions: {
      'support.refund': defineRefundAction(endpoints),
      'support.refund_and_close': defineRefundAndCloseAction(endpoints),
    },
    refs: new Map(),
    env,
  };
  const stepErrors: { step: number; do: string; message: string }[] = [];
  for (const [index, step] of plan.steps.entries()) {
    try {
      await runStep(state, step);
    } catch (error) {
      stepErrors.push({
        step: index + 1,
        do: step.do,
        message: error instanceof Error ? error.message : String(error),
      });
    }
  }

  // Evidence is exported only once the provider is quiet: a request still hanging would
  // otherwise be missing here and show up in the next scenario's observations.
  const pending = await waitForQuiescence(sandbox, QUIESCENCE_TIMEOUT_MS);
  if (pending > 0) {
    stepErrors.push({
      step: plan.steps.length,
      do: 'drain',
      message: `the sandbox still had ${pending} request(s) in flight after ${QUIESCENCE_TIMEOUT_MS} ms`,
    });
  }
  return writeScenarioEvidence({
    env,
    scenario: scenario.name,
    tenant,
    idempotency,
    primaryRef: plan.primary,
    refs: new Map([...state.refs].map(([ref, entry]) => [ref, entry.proposal])),
    ledger: await guard.exportLedger({ tenant }),
    sandbox,
    stepErrors,
  });
}
