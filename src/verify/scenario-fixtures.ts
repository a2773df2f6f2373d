/**
 * Scenario fixtures as data: synthetic support cases, agent action plans (typed steps) and the
 * scenarios that pair a case and a plan with a fault plan and expectations. Loading validates
 * everything strictly and names the file and field that is wrong.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { VerifierInputError } from './verifier-errors.js';

/** A synthetic support case: ids in the sandbox's seed plus private details for I8 checks. */
export const caseSchema = z.strictObject({
  id: z.string().regex(/^[a-z0-9_]{1,64}$/),
  summary: z.string().max(500),
  customerId: z.string().min(1),
  orderId: z.string().min(1),
  chargeId: z.string().min(1),
  ticketId: z.string().min(1),
  /** Values that must never appear in the ledger or events (I8). */
  private: z.record(z.string(), z.string()),
});
export type SupportCase = z.infer<typeof caseSchema>;

const ref = z.string().regex(/^[a-z][a-z0-9_]{0,31}$/, 'refs are lower_snake_case');
const actionName = z.enum(['support.refund', 'support.refund_and_close']);
const args = z.record(z.string(), z.unknown());
const assurance = z.enum(['low', 'medium', 'high']);

const baseSteps = [
  z.strictObject({
    do: z.literal('propose'),
    ref,
    action: actionName,
    args,
    mode: z.enum(['commit', 'dry_run']).optional(),
  }),
  z.strictObject({ do: z.literal('run'), ref, action: actionName, args }),
  z.strictObject({ do: z.literal('execute'), ref }),
  z.strictObject({
    do: z.literal('approve'),
    ref,
    authority: z.string().min(1),
    decision: z.enum(['approve', 'reject']).optional(),
    assurance: assurance.optional(),
    validForMs: z.int().positive().optional(),
    /** Build the evidence from another proposal's bindings (a tampered or replayed approval). */
    bindingsFrom: ref.optional(),
    /** Bind the evidence to another proposal's commitment (tampered evidence). */
    commitmentFrom: ref.optional(),
  }),
  z.strictObject({ do: z.literal('advance_clock'), ms: z.int().positive().max(86_400_000) }),
  z.strictObject({ do: z.literal('reconcile'), ref }),
  z.strictObject({ do: z.literal('compensate'), ref }),
  z.strictObject({ do: z.literal('erase'), ref, reader: z.string().min(1) }),
  /** Another actor refunds the charge directly (material drift for our proposal). */
  z.strictObject({
    do: z.literal('refund_elsewhere'),
    chargeId: z.string(),
    amountMinor: z.int().positive(),
  }),
  /** Execute in a child process that is killed after the provider committed, before recording. */
  z.strictObject({ do: z.literal('crash_after_provider_commit'), ref }),
  /** UNSAFE on purpose: a runner that resends outside the guard with a fresh key (gate must fail). */
  z.strictObject({ do: z.literal('blind_resend'), ref }),
] as const;

const simpleStep = z.discriminatedUnion('do', baseSteps);

export const planStepSchema = z.discriminatedUnion('do', [
  ...baseSteps,
  z.strictObject({
    do: z.literal('concurrent'),
    /** Copies of `step` started at once; refs get `_1`, `_2`, … appended. */
    count: z.int().min(2).max(64),
    step: simpleStep,
  }),
]);
export type PlanStep = z.infer<typeof planStepSchema>;

/** What an agent proposed, step by step. */
export const planSchema = z.strictObject({
  id: z.string().regex(/^[a-z0-9_]{1,64}$/),
  /** The ref whose proposal the scenario is about. */
  primary: ref,
  steps: z.array(planStepSchema).min(1).max(200),
});
export type ActionPlan = z.infer<typeof planSchema>;

/** One scenario: a case, a plan, a provider configuration, faults and expectations. */
export const scenarioSchema = z.strictObject({
  name: z.string().regex(/^[a-z0-9_]{1,64}$/),
  description: z.string().max(500),
  case: z.string(),
  plan: z.string(),
  /** Whether the payments provider honours idempotency keys. @default 'honour' */
  idempotency: z.enum(['honour', 'ignore']).optional(),
  /** A sandbox fault plan (validated by the sandbox when set). */
  faults: z.unknown().optional(),
  expect: z.strictObject({
    label: z.string(),
    status: z.string().nullable(),
    writes: z.int().min(0),
    /** Ledger event types that must appear for the primary effect. */
    events: z.array(z.string()).optional(),
    /** Reason codes of `authority_rejected` events that must appear. */
    rejections: z.array(z.string()).optional(),
    /** The primary proposal must have been superseded by a fresh one. */
    freshProposal: z.boolean().optional(),
  }),
});
export type Scenario = z.infer<typeof scenarioSchema>;

/** Everything the verifier needs, loaded and cross-checked. */
export interface ScenarioCatalogue {
  readonly directory: string;
  readonly cases: ReadonlyMap<string, SupportCase>;
  readonly plans: ReadonlyMap<string, ActionPlan>;
  readonly scenarios: readonly Scenario[];
}

async function readJson(file: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new VerifierInputError(`cannot read fixture file ${file} (${code ?? String(error)})`);
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new VerifierInputError(
      `fixture file ${file} is not valid JSON: ${(error as Error).message}`,
    );
  }
}

function parseWith<T>(schema: z.ZodType<T>, value: unknown, file: string): T {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const path = issue?.path.map(String).join('.') || '(root)';
  throw new VerifierInputError(
    `fixture file ${file} is invalid at ${path}: ${issue?.message ?? 'invalid'}`,
  );
}

/** Loads `cases.json`, `plans/*.json` (as listed by scenarios) and `scenarios.json` from a directory. */
export async function loadScenarioCatalogue(directory: string): Promise<ScenarioCatalogue> {
  const casesFile = join(directory, 'cases.json');
  const scenariosFile = join(directory, 'scenarios.json');
  const cases = parseWith(z.array(caseSchema), await readJson(casesFile), casesFile);
  const scenarios = parseWith(
    z.array(scenarioSchema).min(1),
    await readJson(scenariosFile),
    scenariosFile,
  );
  const caseMap = new Map(cases.map((c) => [c.id, c]));
  const plans = new Map<string, ActionPlan>();
  const names = new Set<string>();
  for (const scenario of scenarios) {
    if (names.has(scenario.name)) {
      throw new VerifierInputError(
        `fixture file ${scenariosFile} names scenario ${scenario.name} twice`,
      );
    }
    names.add(scenario.name);
    if (!caseMap.has(scenario.case)) {
      throw new VerifierInputError(
        `scenario ${scenario.name} refers to unknown case ${JSON.stringify(scenario.case)} (see ${casesFile})`,
      );
    }
    if (!/^[a-z0-9_]{1,64}$/.test(scenario.plan)) {
      throw new VerifierInputError(
        `scenario ${scenario.name} has an invalid plan name ${JSON.stringify(scenario.plan)}`,
      );
    }
    if (!plans.has(scenario.plan)) {
      const planFile = join(directory, 'plans', `${scenario.plan}.json`);
      const plan = parseWith(planSchema, await readJson(planFile), planFile);
      if (plan.id !== scenario.plan) {
        throw new VerifierInputError(
          `plan file ${planFile} has id ${plan.id}, expected ${scenario.plan}`,
        );
      }
      plans.set(scenario.plan, plan);
    }
  }
  return { directory, cases: caseMap, plans, scenarios };
}

/** Replaces `{{case.field}}` in string arguments with the case's values. */
export function bindCaseArguments(
  values: Record<string, unknown>,
  supportCase: SupportCase,
): Record<string, unknown> {
  const bound: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(values)) {
    bound[key] =
      typeof value === 'string'
        ? value.replace(/\{\{case\.([a-zA-Z]+)\}\}/g, (match, field: string) => {
            const replacement = (supportCase as unknown as Record<string, unknown>)[field];
            return typeof replacement === 'string' ? replacement : match;
          })
        : value;
  }
  return bound;
}
