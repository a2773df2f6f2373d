/**
 * The approver's and operator's commands: `sideguard approvals list|show|timeline`, `approve`,
 * `deny` and `resolve`. Each authenticates the person against the config's `approvers` (secret
 * from `--secret-file` or `SIDEGUARD_APPROVER_SECRET`, never the command line) and calls the
 * approvals service — the same checks and the same server-built evidence as the console.
 * Exit 0 done, 1 refused (nothing changed; the code is printed), 2 bad input.
 */
import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import type { ApprovalsService } from '../approvals/approvals-service.js';
import type { AuthenticatedApprover } from '../approvals/approver-registry.js';
import { ConfigurationError, SideguardError } from '../core/errors.js';
import { detailLines, pendingLines, printable, timelineLines } from './approvals-output.js';
import { CliError, ExitCode } from './cli-errors.js';

/** The environment variable a person's secret may come from. */
export const APPROVER_SECRET_VARIABLE = 'SIDEGUARD_APPROVER_SECRET';

interface PersonOptions {
  readonly as: string;
  readonly config?: string;
  readonly secretFile?: string;
  readonly tenant?: string;
  readonly json?: boolean;
}

/** The secret from the file or the environment; one trailing newline is not part of it. */
async function readSecret(options: PersonOptions): Promise<string> {
  if (options.secretFile !== undefined) {
    const text = await readFile(options.secretFile, 'utf8').catch((error: unknown) => {
      throw new CliError(
        `--secret-file ${printable(options.secretFile)}: ${(error as NodeJS.ErrnoException).code ?? 'unreadable'}`,
      );
    });
    return text.replace(/\r?\n$/, '');
  }
  const secret = process.env[APPROVER_SECRET_VARIABLE];
  if (secret === undefined || secret === '') {
    throw new CliError(
      `no approver secret: pass --secret-file FILE or set ${APPROVER_SECRET_VARIABLE} (never the secret itself on the command line)`,
    );
  }
  return secret;
}

/** The service over the config's store, and the authenticated person; close when done. */
async function open(options: PersonOptions) {
  const secret = await readSecret(options);
  const gateway = await import('../gateway/index.js');
  const approvals = await import('../approvals/index.js');
  const loaded = await gateway.loadGatewayConfig(
    gateway.locateConfigFile(options.config, process.cwd()),
  );
  const registry = approvals.createApproverRegistry(loaded.config.approvers ?? [], {
    defaultTenant: loaded.table.tenant,
  });
  const runtime = await gateway.openGatewayRuntime(loaded, { sandboxUpstreams: 'skip' });
  try {
    const person = await registry.authenticate(options.as, secret, 'cli');
    const service = approvals.createApprovalsService({
      guard: runtime.guard,
      store: runtime.store,
      actions: runtime.table.actions.values(),
    });
    return { service, person, close: () => runtime.close() };
  } catch (error) {
    await runtime.close();
    throw error;
  }
}

type Step = (
  service: ApprovalsService,
  person: AuthenticatedApprover,
) => Promise<{ json: unknown; lines: readonly string[] }>;

/** Runs one step as the authenticated person and prints its answer or its refusal. */
async function run(options: PersonOptions, step: Step): Promise<void> {
  try {
    const { service, person, close } = await open(options);
    try {
      const answer = await step(service, person);
      process.stdout.write(
        options.json === true ? `${JSON.stringify(answer.json)}\n` : `${answer.lines.join('\n')}\n`,
      );
      process.exitCode = ExitCode.ok;
    } finally {
      await close();
    }
  } catch (error) {
    process.exitCode = report(error, options.json === true);
  }
}

/** Prints an error; returns its exit code. */
function report(error: unknown, json: boolean): number {
  const code =
    error instanceof SideguardError ? error.code : error instanceof CliError ? 'usage' : 'error';
  const message = error instanceof Error ? error.message : String(error);
  const exit =
    error instanceof CliError
      ? error.exitCode
      : error instanceof ConfigurationError || code === 'invalid_request'
        ? ExitCode.usage
        : ExitCode.failed;
  const refused = error instanceof SideguardError && exit === ExitCode.failed;
  if (json) process.stdout.write(`${JSON.stringify({ error: { code, message } })}\n`);
  process.stderr.write(
    `sideguard: ${refused ? `refused (${code}): ` : ''}${message}${refused ? '. Nothing was changed.' : ''}\n`,
  );
  return exit;
}

const address = (proposal: string, options: PersonOptions) => ({
  proposal,
  ...(options.tenant === undefined ? {} : { tenant: options.tenant }),
});

/** The options every person's command takes. */
function personCommand(command: Command, role = 'approver'): Command {
  return command
    .requiredOption('--as <id>', `your ${role} id (as declared in the config's approvers)`)
    .option(
      '--secret-file <file>',
      `a file holding your secret (default: $${APPROVER_SECRET_VARIABLE})`,
    )
    .option('--config <file>', 'the gateway config (default: ./sideguard.config.ts or .mjs)')
    .option('--tenant <tenant>', 'the tenant (default: every tenant you may see)')
    .option('--json', 'print JSON');
}

function registerApprovalsGroup(program: Command): void {
  const group = program
    .command('approvals')
    .description('List and inspect proposals that wait for people');
  personCommand(group.command('list').description('Proposals waiting for your approval'))
    .option('--action <type>', 'only this action type (namespace.name@version)')
    .option('--requester <id>', 'only proposals of this principal or agent')
    .action((options: PersonOptions & { action?: string; requester?: string }) =>
      run(options, async (service, person) => {
        const items = await service.listPending(person, {
          ...(options.tenant === undefined ? {} : { tenant: options.tenant }),
          ...(options.action === undefined ? {} : { action: options.action }),
          ...(options.requester === undefined ? {} : { requester: options.requester }),
        });
        return { json: items, lines: pendingLines(items, Date.now()) };
      }),
    );
  personCommand(group.command('show').description('Exactly what a proposal would do'))
    .argument('<proposal>', 'the proposal id')
    .action((proposal: string, options: PersonOptions) =>
      run(options, async (service, person) => {
        const details = await service.show(address(proposal, options), person);
        return { json: details, lines: detailLines(details) };
      }),
    );
  personCommand(group.command('timeline').description("A proposal's ledger history"))
    .argument('<proposal>', 'the proposal id')
    .action((proposal: string, options: PersonOptions) =>
      run(options, async (service, person) => {
        const timeline = await service.timeline(address(proposal, options), person);
        return { json: timeline, lines: timelineLines(timeline) };
      }),
    );
}

function registerDecisions(program: Command): void {
  personCommand(
    program.command('approve').description('Approve a proposal as a declared authority'),
  )
    .argument('<proposal>', 'the proposal id')
    .option('--reason <text>', 'why (optional)')
    .action((proposal: string, options: PersonOptions & { reason?: string }) =>
      run(options, async (service, person) => {
        const recorded = await service.approve(address(proposal, options), person, {
          ...(options.reason === undefined ? {} : { reason: options.reason }),
        });
        return {
          json: recorded,
          lines: [
            `approved ${printable(recorded.proposal)} as ${printable(person.id)}: approvals ${recorded.approvals.approvedBy.length}/${recorded.approvals.required}, status ${recorded.status}`,
          ],
        };
      }),
    );
  personCommand(program.command('deny').description('Deny a proposal as a declared authority'))
    .argument('<proposal>', 'the proposal id')
    .requiredOption('--reason <text>', 'why (required)')
    .action((proposal: string, options: PersonOptions & { reason: string }) =>
      run(options, async (service, person) => {
        const recorded = await service.deny(address(proposal, options), person, {
          reason: options.reason,
        });
        return {
          json: recorded,
          lines: [
            `denied ${printable(recorded.proposal)} as ${printable(person.id)}: status ${recorded.status}`,
          ],
        };
      }),
    );
}

interface ResolveCommandOptions extends PersonOptions {
  readonly absent?: boolean;
  readonly present?: string;
  readonly provider?: string;
  readonly checked: string;
}

function findingOf(options: ResolveCommandOptions) {
  if ((options.absent === true) === (options.present !== undefined)) {
    throw new CliError('pass exactly one of --absent and --present RECEIPT');
  }
  if (options.present === undefined) return { kind: 'absent' } as const;
  return {
    kind: 'present',
    receipt: { id: options.present, provider: options.provider ?? 'provider' },
  } as const;
}

function registerResolve(program: Command): void {
  personCommand(
    program
      .command('resolve')
      .description('Settle an outcome the guard could not (as a declared operator)'),
    'operator',
  )
    .argument('<proposal>', 'the proposal id')
    .option('--absent', 'the provider has no such write (releases the effect)')
    .option('--present <receipt>', 'the write exists: its receipt id at the provider')
    .option('--provider <name>', 'the provider of --present (default: "provider")')
    .requiredOption('--checked <text>', 'what you checked, and where (kept as a keyed digest)')
    .action((proposal: string, options: ResolveCommandOptions) =>
      run(options, async (service, person) => {
        const resolved = await service.resolve(address(proposal, options), person, {
          finding: findingOf(options),
          note: options.checked,
        });
        return {
          json: resolved,
          lines: [
            `resolved ${printable(resolved.proposal)} as ${printable(person.id)}: ${resolved.status} (${resolved.outcome})`,
          ],
        };
      }),
    );
}

/** Registers `approvals`, `approve`, `deny` and `resolve`. */
export function registerApprovalsCommands(program: Command): void {
  registerApprovalsGroup(program);
  registerDecisions(program);
  registerResolve(program);
}
