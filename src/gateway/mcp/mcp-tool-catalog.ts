/**
 * `tools/list` for one agent: the tools the decision function would let it call right now.
 * Declared actions get a JSON Schema made from their zod contract; wrapped upstream tools keep
 * the upstream's (pinned) name, description and schemas but never its annotations — those are
 * untrusted hints, so the gateway sets its own from the binding. A wrapped tool whose current
 * definition differs from the pin is left out, so a changed description never reaches the agent.
 */
import type { Tool, ToolAnnotations } from '@modelcontextprotocol/server';
import { z } from 'zod';
import type { ActionDefinition } from '../../core/action.js';
import { type AgentIdentity, decideCall } from '../decide-call.js';
import type { CompiledToolBinding } from '../gateway-table.js';
import type { McpGateway } from './mcp-gateway.js';
import { toolDefinitionDigest } from './mcp-tool-digest.js';
import { PROPOSAL_TOOL_NAME } from './mcp-tool-directory.js';

/** Annotations of every guarded write: the gateway makes a repeated call one effect. */
const WRITE_ANNOTATIONS: ToolAnnotations = {
  readOnlyHint: false,
  destructiveHint: true,
  idempotentHint: true,
  openWorldHint: true,
};
const READ_ANNOTATIONS: ToolAnnotations = { readOnlyHint: true, openWorldHint: true };

/** The input schema of `sideguard_proposal`. */
export const PROPOSAL_TOOL_INPUT = {
  type: 'object',
  properties: {
    proposal: {
      type: 'string',
      minLength: 1,
      maxLength: 200,
      description: 'The proposal id a guarded tool returned.',
    },
  },
  required: ['proposal'],
  additionalProperties: false,
} as const;

const PROPOSAL_TOOL: Tool = {
  name: PROPOSAL_TOOL_NAME,
  title: 'Sideguard proposal status',
  description:
    'The status of a proposal a guarded tool returned (by its id) and what is still needed: approvals, verification, or nothing.',
  inputSchema: PROPOSAL_TOOL_INPUT as unknown as Tool['inputSchema'],
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
};

const schemaCache = new WeakMap<ActionDefinition, Tool['inputSchema']>();

/** The JSON Schema of an action's input (its strict zod contract), as an MCP `inputSchema`. */
export function actionInputSchema(action: ActionDefinition): Tool['inputSchema'] {
  const cached = schemaCache.get(action);
  if (cached !== undefined) return cached;
  let schema: Record<string, unknown>;
  try {
    schema = z.toJSONSchema(action.schema, { io: 'input', unrepresentable: 'any' });
  } catch {
    // A contract JSON Schema cannot express still validates every call: advertise an object.
    schema = { type: 'object' };
  }
  const inputSchema = { ...schema, type: 'object' } as Tool['inputSchema'];
  schemaCache.set(action, inputSchema);
  return inputSchema;
}

/** What an agent reads about a declared action before calling it. */
export function actionDescription(action: ActionDefinition): string {
  const approval =
    action.approval === undefined
      ? ''
      : ' Some calls need approval: the result then says so at once, with a proposal id to follow up with sideguard_proposal.';
  return `${action.typeName}, a guarded write through Sideguard. Calls with the same ${action.protectedFields.join(', ')} are one effect: repeating a call never repeats the write and returns the original result.${approval}`;
}

function actionTool(name: string, action: ActionDefinition): Tool {
  return {
    name,
    title: action.typeName,
    description: actionDescription(action),
    inputSchema: actionInputSchema(action),
    annotations: { title: action.typeName, ...WRITE_ANNOTATIONS },
  };
}

function wrappedTool(binding: CompiledToolBinding, upstream: Tool): Tool {
  const guarded =
    binding.access === 'write'
      ? ` Through Sideguard: a guarded write (${binding.action?.typeName}); repeating a call never repeats the write.`
      : '';
  return {
    name: binding.name,
    ...(upstream.title === undefined ? {} : { title: upstream.title }),
    description: `${upstream.description ?? upstream.name}${guarded}`,
    inputSchema: upstream.inputSchema,
    annotations: binding.access === 'write' ? WRITE_ANNOTATIONS : READ_ANNOTATIONS,
  };
}

/** The upstream tool definitions of the given upstreams, by upstream then tool name. */
async function upstreamTools(
  gateway: McpGateway,
  upstreams: ReadonlySet<string>,
): Promise<Map<string, Map<string, Tool>>> {
  const listed = await Promise.all(
    [...upstreams].map(async (upstream) => {
      const reply = await gateway.pool.connection(upstream)?.listTools();
      if (reply?.kind !== 'tools') {
        gateway.hooks.onProblem?.(
          `upstream MCP server "${upstream}": its tools are left out of tools/list (${reply?.reason ?? 'not configured'})`,
        );
        return [upstream, new Map<string, Tool>()] as const;
      }
      return [upstream, new Map(reply.tools.map((tool) => [tool.name, tool]))] as const;
    }),
  );
  return new Map(listed);
}

/** The tools `identity` may call now, in the directory's order, `sideguard_proposal` last. */
export async function listMcpTools(gateway: McpGateway, identity: AgentIdentity): Promise<Tool[]> {
  if (identity.kind !== 'agent') return [PROPOSAL_TOOL];
  const { table, directory } = gateway;
  // Which wrapped tools pass every check except the pin: only their upstreams are asked.
  const candidates: CompiledToolBinding[] = [];
  for (const target of directory.targets.values()) {
    if (target.kind !== 'binding') continue;
    const { binding } = target;
    const subject = { kind: 'tool', upstream: binding.upstream, tool: binding.tool } as const;
    const decision = decideCall(table, identity, subject, { toolDigest: binding.toolDigest });
    if (decision.kind !== 'deny' && decision.kind !== 'miss') candidates.push(binding);
  }
  const definitions = await upstreamTools(gateway, new Set(candidates.map((b) => b.upstream)));
  const allowed = new Set(candidates.map((binding) => binding.name));
  const tools: Tool[] = [];
  for (const [name, target] of directory.targets) {
    if (target.kind === 'action') {
      const decision = decideCall(table, identity, {
        kind: 'action',
        actionType: target.action.typeName,
      });
      if (decision.kind === 'guarded') tools.push(actionTool(name, target.action));
    } else if (target.kind === 'binding' && allowed.has(name)) {
      const { binding } = target;
      const current = definitions.get(binding.upstream)?.get(binding.tool);
      const digest = current === undefined ? undefined : toolDefinitionDigest(current);
      if (current !== undefined && digest === binding.toolDigest) {
        tools.push(wrappedTool(binding, current));
      } else if (definitions.get(binding.upstream)?.size) {
        gateway.hooks.onProblem?.(
          `tool "${binding.tool}" of upstream "${binding.upstream}" is left out of tools/list: it is ${digest ?? 'not served'}, binding "${binding.name}" pins ${binding.toolDigest}`,
        );
      }
    }
  }
  tools.push(PROPOSAL_TOOL);
  return tools;
}
