/**
 * Which action definition the sweeper uses for each declared action type: the executable one
 * when the action is bound to exactly one HTTP write (its `verify` asks that upstream), else the
 * declared action itself (its own `verify`). Actions bound to an upstream MCP tool are swept
 * with the declared action, since the tool connections live in the MCP door.
 */
import type { ActionDefinition } from '../core/action.js';
import type { GatewayRuntime } from './gateway-runtime.js';
import { actionExecutables } from './mcp/mcp-action-executables.js';

/** The actions a sweep of this runtime covers, one per declared action type. */
export function sweptActions(runtime: Pick<GatewayRuntime, 'table' | 'http'>): ActionDefinition[] {
  const http = new Map([...runtime.http.values()].flatMap((upstream) => [...upstream.actions]));
  const executables = actionExecutables(runtime.table, new Map(), http);
  return [...runtime.table.actions].map(([typeName, declared]) => {
    const executable = executables.get(typeName);
    return executable?.kind === 'ready' ? executable.action : declared;
  });
}
