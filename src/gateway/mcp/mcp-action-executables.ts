/**
 * What runs when a declared action is called as an MCP tool. An action bound by exactly one
 * write binding runs through that binding (the HTTP request or upstream tool call it declares),
 * so the MCP tool and the HTTP route are one effect with one executor; an action with no write
 * binding, or with several, runs its own `execute`. A binding whose upstream this process has
 * not opened (a `sandbox`-mode upstream under `sideguard mcp` without a sandbox) is unavailable.
 */
import type { ActionDefinition } from '../../core/action.js';
import type { CompiledBinding, GatewayTable } from '../gateway-table.js';

/** How a declared action executes when called as a tool. */
export type ActionExecutable =
  | {
      readonly kind: 'ready';
      readonly action: ActionDefinition;
      /** The binding it runs through, or null for the action's own `execute`. */
      readonly binding: string | null;
    }
  | { readonly kind: 'unavailable'; readonly binding: string; readonly upstream: string };

/** Write bindings per action type. */
function writeBindings(table: GatewayTable): Map<string, CompiledBinding[]> {
  const byAction = new Map<string, CompiledBinding[]>();
  const all: CompiledBinding[] = [
    ...[...table.httpBindings.values()].flat(),
    ...[...table.toolBindings.values()].flatMap((tools) => [...tools.values()]),
  ];
  for (const binding of all) {
    if (binding.access !== 'write' || binding.action === undefined) continue;
    const list = byAction.get(binding.action.typeName) ?? [];
    list.push(binding);
    byAction.set(binding.action.typeName, list);
  }
  return byAction;
}

/**
 * The executable of every declared action. `toolExecutables` and `httpExecutables` map binding
 * names to the executable actions of the bindings this process can run.
 */
export function actionExecutables(
  table: GatewayTable,
  toolExecutables: ReadonlyMap<string, ActionDefinition>,
  httpExecutables: ReadonlyMap<string, ActionDefinition>,
): Map<string, ActionExecutable> {
  const bound = writeBindings(table);
  const result = new Map<string, ActionExecutable>();
  for (const [typeName, action] of table.actions) {
    const bindings = bound.get(typeName) ?? [];
    const only = bindings.length === 1 ? bindings[0] : undefined;
    if (only === undefined) {
      result.set(typeName, { kind: 'ready', action, binding: null });
      continue;
    }
    const executable = (only.kind === 'http' ? httpExecutables : toolExecutables).get(only.name);
    result.set(
      typeName,
      executable === undefined
        ? { kind: 'unavailable', binding: only.name, upstream: only.upstream }
        : { kind: 'ready', action: executable, binding: only.name },
    );
  }
  return result;
}
