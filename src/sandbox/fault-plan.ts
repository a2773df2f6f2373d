/**
 * Fault plans: which fault hits which request of which operation, validated on load and
 * decided deterministically from the seed, so the same plan and seed give the same schedule.
 */
import { z } from 'zod';
import { SandboxConfigError } from './sandbox-errors.js';
import type { ProviderDefinition } from './sandbox-types.js';
import { hashToUnit } from './seeded-random.js';

/** Every fault kind, in the order a request meets them around the commit point. */
export const FaultKind = {
  /** Delay before the provider executes (`latencyMs`); the request then proceeds normally. */
  latency: 'latency',
  /** Provider error response (`status`, default 500); nothing written. */
  errorBeforeWrite: 'error_before_write',
  /** The write commits, then a provider error response (`status`, default 500) is sent. */
  errorAfterWrite: 'error_after_write',
  /** The connection is destroyed before execution; nothing written, zero response bytes. */
  dropBeforeDispatch: 'drop_before_dispatch',
  /** The write commits, then the connection is destroyed with zero response bytes. */
  dropAfterWrite: 'drop_after_write',
  /** The write commits, then nothing is sent for `hangMs` (default 60 000), then the connection is destroyed. */
  hangAfterWrite: 'hang_after_write',
  /** The request waits (before execution) until released through the control plane. */
  hold: 'hold',
  /** `429` with `Retry-After: retryAfterSeconds` (default 1); nothing written. */
  rateLimit: 'rate_limit',
} as const;
export type FaultKind = (typeof FaultKind)[keyof typeof FaultKind];

const faultSchema = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('latency'), latencyMs: z.int().min(0).max(120_000) }),
  z.strictObject({
    kind: z.literal('error_before_write'),
    status: z.int().min(500).max(599).optional(),
  }),
  z.strictObject({
    kind: z.literal('error_after_write'),
    status: z.int().min(500).max(599).optional(),
  }),
  z.strictObject({ kind: z.literal('drop_before_dispatch') }),
  z.strictObject({ kind: z.literal('drop_after_write') }),
  z.strictObject({
    kind: z.literal('hang_after_write'),
    hangMs: z.int().min(1).max(600_000).optional(),
  }),
  z.strictObject({ kind: z.literal('hold') }),
  z.strictObject({
    kind: z.literal('rate_limit'),
    retryAfterSeconds: z.int().min(0).max(3600).optional(),
  }),
]);

const ruleSchema = z
  .strictObject({
    /** Provider name, or `*` for every provider. */
    provider: z.string().min(1),
    /** Operation name (`create_refund`), or `*` for every operation of the provider. */
    operation: z.string().min(1),
    /** 0-based request indices (per provider + operation) this rule hits. */
    requests: z.array(z.int().min(0)).min(1).optional(),
    /** Chance in [0, 1] that a request is hit, drawn from the seed. */
    probability: z.number().min(0).max(1).optional(),
    fault: faultSchema,
  })
  .refine((rule) => !(rule.requests !== undefined && rule.probability !== undefined), {
    message: 'use either "requests" or "probability", not both',
    path: ['probability'],
  });

/** The fault-plan JSON schema (strict: unknown fields are rejected). */
export const faultPlanSchema = z.strictObject({
  version: z.literal(1),
  /** Seed for probabilistic rules; defaults to the sandbox seed. */
  seed: z
    .int()
    .min(0)
    .max(2 ** 32 - 1)
    .optional(),
  rules: z.array(ruleSchema).max(1000),
});

/** A validated fault plan. */
export type FaultPlan = z.infer<typeof faultPlanSchema>;
/** One fault with its parameters. */
export type FaultSpec = z.infer<typeof faultSchema>;
/** One rule of a fault plan. */
export type FaultRule = z.infer<typeof ruleSchema>;

/**
 * Validates a fault plan (parsed JSON); throws `SandboxConfigError` (`fault_plan_invalid`)
 * naming the first bad field, e.g. `rules[0].fault.kind`.
 */
export function parseFaultPlan(input: unknown, source = 'fault plan'): FaultPlan {
  const result = faultPlanSchema.safeParse(input);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const where = issue === undefined ? '' : formatPath(issue.path);
  const message = issue?.message ?? 'invalid';
  throw new SandboxConfigError(
    'fault_plan_invalid',
    `Invalid ${source}: ${where === '' ? '' : `${where}: `}${message}`,
    {
      data: {
        path: where,
        issues: result.error.issues.map((each) => ({
          path: formatPath(each.path),
          message: each.message,
        })),
      },
    },
  );
}

/** Parses fault-plan JSON text; bad JSON is reported like a bad field. */
export function parseFaultPlanJson(text: string, source = 'fault plan'): FaultPlan {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new SandboxConfigError(
      'fault_plan_invalid',
      `Invalid ${source}: not JSON (${error instanceof Error ? error.message : String(error)})`,
    );
  }
  return parseFaultPlan(value, source);
}

function formatPath(segments: readonly PropertyKey[]): string {
  let text = '';
  for (const segment of segments) {
    if (typeof segment === 'number') text += `[${segment}]`;
    else text += text === '' ? String(segment) : `.${String(segment)}`;
  }
  return text;
}

/**
 * Checks that every rule can hit something among `providers`: a named provider must be enabled
 * and have the named operation; a rule for every provider (`*`) must name an operation that at
 * least one enabled provider has. A rule that can never match is a typo, so it is refused.
 * Throws `SandboxConfigError` (`fault_plan_invalid`) naming the rule and what exists.
 */
export function checkFaultPlanTargets(
  plan: FaultPlan,
  providers: readonly ProviderDefinition[],
): void {
  const invalid = (message: string) =>
    new SandboxConfigError('fault_plan_invalid', `Invalid fault plan: ${message}`);
  const operationsOf = (provider: ProviderDefinition) =>
    provider.operations.map((operation) => operation.name);
  for (const [index, rule] of plan.rules.entries()) {
    if (rule.provider === '*') {
      if (rule.operation === '*') continue;
      if (!providers.some((provider) => operationsOf(provider).includes(rule.operation))) {
        const known = providers
          .map((provider) => `${provider.name}: ${operationsOf(provider).join(', ')}`)
          .join('; ');
        throw invalid(
          `rules[${index}].operation: ${JSON.stringify(rule.operation)} is not an operation of any enabled provider (${known})`,
        );
      }
      continue;
    }
    const provider = providers.find((candidate) => candidate.name === rule.provider);
    if (provider === undefined) {
      throw invalid(
        `rules[${index}].provider: ${JSON.stringify(rule.provider)} is not enabled (enabled: ${providers.map((p) => p.name).join(', ')})`,
      );
    }
    if (rule.operation !== '*' && !operationsOf(provider).includes(rule.operation)) {
      throw invalid(
        `rules[${index}].operation: ${JSON.stringify(rule.operation)} is not an operation of ${provider.name} (operations: ${operationsOf(provider).join(', ')})`,
      );
    }
  }
}

/** The fault chosen for one request, or none. */
export interface FaultDecision {
  readonly fault: FaultSpec | null;
  /** Index of the rule that matched, or `null`. */
  readonly ruleIndex: number | null;
}

/**
 * Decides the fault for the `requestIndex`-th request to `provider.operation`. The first rule
 * that matches wins. Probabilistic draws depend only on (seed, rule, provider, operation,
 * index), so the schedule does not depend on how requests to other operations interleave.
 */
export function decideFault(
  plan: FaultPlan,
  defaultSeed: number,
  provider: string,
  operation: string,
  requestIndex: number,
): FaultDecision {
  const seed = plan.seed ?? defaultSeed;
  for (const [ruleIndex, rule] of plan.rules.entries()) {
    if (rule.provider !== '*' && rule.provider !== provider) continue;
    if (rule.operation !== '*' && rule.operation !== operation) continue;
    if (rule.requests !== undefined && !rule.requests.includes(requestIndex)) continue;
    if (
      rule.probability !== undefined &&
      hashToUnit(seed, ruleIndex, provider, operation, requestIndex) >= rule.probability
    ) {
      continue;
    }
    return { fault: rule.fault, ruleIndex };
  }
  return { fault: null, ruleIndex: null };
}

/** The fault kinds (or `null`) for the first `count` requests of an operation: a schedule preview. */
export function faultSchedule(
  plan: FaultPlan,
  defaultSeed: number,
  provider: string,
  operation: string,
  count: number,
): (FaultKind | null)[] {
  return Array.from(
    { length: count },
    (_, index) => decideFault(plan, defaultSeed, provider, operation, index).fault?.kind ?? null,
  );
}
