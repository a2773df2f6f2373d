/**
 * The names the MCP door serves and what each stands for: every declared action
 * (`support.refund@1` becomes the tool `support.refund.v1`: MCP tool names allow only letters,
 * digits, `_`, `-` and `.`), every upstream tool binding under its binding name, and
 * `sideguard_proposal`. Two things with one name is a config problem, reported with its path.
 */
import type { ActionDefinition } from '../../core/action.js';
import type { ConfigProblem } from '../config-schema.js';
import type { GatewayConfig } from '../config-types.js';
import type { CompiledToolBinding, GatewayTable } from '../gateway-table.js';

/** The tool that reports a proposal's status. */
export const PROPOSAL_TOOL_NAME = 'sideguard_proposal';

/** What one served tool name stands for. */
export type McpToolTarget =
  | { readonly kind: 'action'; readonly name: string; readonly action: ActionDefinition }
  | { readonly kind: 'binding'; readonly name: string; readonly binding: CompiledToolBinding }
  | { readonly kind: 'proposal'; readonly name: typeof PROPOSAL_TOOL_NAME };

/** Every served name, in a stable order (actions, bindings, then `sideguard_proposal`). */
export interface McpToolDirectory {
  readonly targets: ReadonlyMap<string, McpToolTarget>;
  readonly problems: readonly ConfigProblem[];
}

/** The tool name of a declared action: `namespace.name@version` → `namespace.name.vVERSION`. */
export function actionToolName(action: ActionDefinition): string {
  return `${action.type.namespace}.${action.type.name}.v${action.type.version}`;
}

/**
 * Builds the directory; `problems` is empty when every name is unique. `config` (the source of
 * `table`) lets a problem name the binding's index.
 */
export function buildMcpToolDirectory(
  table: GatewayTable,
  config?: Pick<GatewayConfig, 'bindings'>,
): McpToolDirectory {
  const targets = new Map<string, McpToolTarget>();
  const problems: ConfigProblem[] = [];
  const owner = new Map<string, string>([[PROPOSAL_TOOL_NAME, 'the gateway itself']]);
  const claim = (name: string, target: McpToolTarget, path: string, what: string) => {
    const taken = owner.get(name);
    if (taken !== undefined) {
      problems.push({
        path,
        message: `${what} would be served as MCP tool "${name}", which is already ${taken}; rename the binding`,
      });
      return;
    }
    owner.set(name, what);
    targets.set(name, target);
  };
  for (const action of table.actions.values()) {
    const name = actionToolName(action);
    claim(name, { kind: 'action', name, action }, 'actions', `action ${action.typeName}`);
  }
  for (const tools of table.toolBindings.values()) {
    for (const binding of tools.values()) {
      claim(
        binding.name,
        { kind: 'binding', name: binding.name, binding },
        `bindings[${config?.bindings.findIndex((entry) => entry.name === binding.name) ?? '?'}].name`,
        `binding "${binding.name}"`,
      );
    }
  }
  targets.set(PROPOSAL_TOOL_NAME, { kind: 'proposal', name: PROPOSAL_TOOL_NAME });
  return { targets, problems };
}
