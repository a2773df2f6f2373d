/**
 * The structural check of a loaded config: every field's type, required fields, unknown keys.
 * Semantic checks (references, duplicates, routes) follow in `config-compile.ts`. Problems carry
 * the path inside the config (`bindings[2].route`) and what to change.
 */
import { z } from 'zod';

/** One thing wrong with a config: where, and what to change. */
export interface ConfigProblem {
  /** The path inside the config, e.g. `bindings[2].route`, or `(root)`. */
  readonly path: string;
  readonly message: string;
}

const fn = (what: string) =>
  z.custom<(...args: never[]) => unknown>((value) => typeof value === 'function', {
    message: `must be a function (${what})`,
  });

const headers = z.record(z.string(), z.string());
const name = z.string().min(1).max(64);

const httpUpstream = z
  .object({
    kind: z.literal('http'),
    baseUrl: z.string().optional(),
    mode: z.enum(['live', 'sandbox', 'shadow', 'replay']).optional(),
    mount: z.union([
      z.object({ prefix: z.string() }).strict(),
      z.object({ port: z.number().int() }).strict(),
    ]),
    credentials: z.object({ headers }).strict().optional(),
    sandboxProvider: z.enum(['payments', 'crm', 'issues', 'orders']).optional(),
    passReads: z.boolean().optional(),
    timeoutMs: z.number().int().positive().optional(),
    idempotencyHeader: z.string().min(1).nullable().optional(),
    replayCases: z.string().min(1).optional(),
  })
  .strict();

const mcpUpstream = z
  .object({
    kind: z.literal('mcp'),
    transport: z.union([
      z
        .object({
          stdio: z
            .object({
              command: z.string().min(1),
              args: z.array(z.string()).optional(),
              env: headers.optional(),
              cwd: z.string().optional(),
            })
            .strict(),
        })
        .strict(),
      z.object({ url: z.string().min(1), headers: headers.optional() }).strict(),
    ]),
    mode: z.enum(['live', 'shadow', 'replay']).optional(),
    timeoutMs: z.number().int().positive().optional(),
  })
  .strict();

const actionObject = z.custom<object>(
  (value) =>
    typeof value === 'object' &&
    value !== null &&
    (value as { kind?: unknown }).kind === 'sideguard.action',
  { message: 'must be an action returned by defineAction(...)' },
);
const actionRef = z.union([z.string().min(1), actionObject], {
  message: 'must be an action from defineAction(...) or its "namespace.name@version"',
});

const httpRead = z
  .object({ name, upstream: z.string(), route: z.string(), read: z.literal(true) })
  .strict();
const httpWrite = z
  .object({
    name,
    upstream: z.string(),
    route: z.string(),
    read: z.literal(false).optional(),
    action: actionRef,
    toInput: fn('request → action input'),
    toRequest: fn('input → upstream request'),
    verify: fn('verify').optional(),
    receipt: fn('response → receipt').optional(),
  })
  .strict();
const toolBinding = z
  .object({
    name,
    upstream: z.string(),
    tool: z.string().min(1),
    toolDigest: z.string(),
    read: z.literal(true).optional(),
    action: actionRef.optional(),
    toInput: fn('arguments → action input').optional(),
    toArguments: fn('input → tool arguments').optional(),
    verify: fn('verify').optional(),
    receipt: fn('result → receipt').optional(),
    toolErrors: z.enum(['unknown', 'not_applied']).optional(),
  })
  .strict();

const binding = z.unknown().superRefine((value, context) => {
  const record = (typeof value === 'object' && value !== null ? value : {}) as Record<
    string,
    unknown
  >;
  const schema = 'tool' in record ? toolBinding : record.read === true ? httpRead : httpWrite;
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) context.addIssue({ ...issue, path: issue.path });
  }
});

const agent = z
  .object({
    id: name,
    principal: z.string().min(1).max(256),
    keySha256: z.string().optional(),
    key: z.string().optional(),
    roles: z.array(z.string()),
    tenant: z.string().min(1).max(256).optional(),
  })
  .strict();

/** The structural schema of `GatewayConfig`. */
export const gatewayConfigSchema = z
  .object({
    store: z.string().min(1).optional(),
    storeSchema: z.string().min(1).optional(),
    tenant: z.string().min(1).max(256).optional(),
    actions: z.array(actionObject),
    upstreams: z.record(z.string(), z.union([httpUpstream, mcpUpstream])),
    bindings: z.array(binding),
    agents: z.array(agent),
    roles: z.record(z.string(), z.object({ bindings: z.array(z.string()) }).strict()),
    deny: z
      .array(
        z
          .object({
            upstream: z.string(),
            method: z.string().optional(),
            pathPrefix: z.string().optional(),
            tool: z.string().optional(),
            reason: z.string().max(200).optional(),
          })
          .strict(),
      )
      .optional(),
    server: z
      .object({
        host: z.string().min(1).optional(),
        port: z.number().int().min(0).max(65_535).optional(),
        bodyLimitBytes: z
          .number()
          .int()
          .min(1)
          .max(64 * 1024 * 1024)
          .optional(),
        inProgressWaitMs: z.number().int().min(0).max(600_000).optional(),
      })
      .strict()
      .optional(),
    sandbox: z
      .object({
        stateDir: z.string().min(1).optional(),
        seed: z.number().int().min(0).optional(),
        faults: z.unknown().optional(),
      })
      .strict()
      .optional(),
    approvals: z
      .object({
        consoleUrl: z.string().url().optional(),
        host: z.string().min(1).optional(),
        port: z.number().int().min(0).max(65_535).optional(),
      })
      .strict()
      .optional(),
    approvers: z
      .array(
        z
          .object({
            id: z.string().min(1).max(128),
            secretHash: z.string().min(1),
            assurance: z.enum(['low', 'medium', 'high']).optional(),
            tenants: z.array(z.string().min(1).max(256)).min(1).optional(),
          })
          .strict(),
      )
      .optional(),
    sweeper: z
      .object({
        enabled: z.boolean().optional(),
        intervalMs: z.number().int().min(100).max(86_400_000).optional(),
      })
      .strict()
      .optional(),
    notifications: z
      .object({
        webhook: z
          .object({
            url: z.string().url(),
            secretEnv: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, {
              message: 'must name an environment variable (letters, digits, _)',
            }),
            timeoutMs: z.number().int().min(100).max(60_000).optional(),
            maxAttempts: z.number().int().min(1).max(20).optional(),
            queueLimit: z.number().int().min(1).max(100_000).optional(),
          })
          .strict()
          .optional(),
      })
      .strict()
      .optional(),
  })
  .strict();

/** `a.b[2].c` from a zod path. */
export function formatPath(path: readonly PropertyKey[]): string {
  let text = '';
  for (const part of path) {
    if (typeof part === 'number') text += `[${part}]`;
    else text += text === '' ? String(part) : `.${String(part)}`;
  }
  return text === '' ? '(root)' : text;
}

/** Structural problems, in the order zod found them. */
export function checkConfigShape(value: unknown): readonly ConfigProblem[] {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return [
      {
        path: '(root)',
        message: 'the config must default-export an object: export default defineConfig({ … })',
      },
    ];
  }
  const parsed = gatewayConfigSchema.safeParse(value);
  if (parsed.success) return [];
  return parsed.error.issues.map((issue) => ({
    path: formatPath(issue.path),
    message:
      issue.code === 'unrecognized_keys'
        ? `${issue.message}: remove it (check the spelling against docs/gateway.md)`
        : issue.message,
  }));
}
