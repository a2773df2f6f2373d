/**
 * The gateway config of the retail world: the benchmark's tools over MCP under their own names
 * (wrapping the retail MCP server, each write bound to its declared action) and the retail API
 * over HTTP at `/retail` (reads forwarded, writes bound to the same actions, so one effect is one
 * proposal whichever door it came through).
 */
import type {
  BindingConfig,
  BoundHttpRequest,
  GatewayConfig,
  UpstreamResponse,
} from '../../gateway/config-types.js';
import { toolDefinitionDigest } from '../../gateway/mcp/mcp-tool-digest.js';
import { retailWriteTools } from '../../sandbox/providers/retail/retail-provider.js';
import { type RetailApiConfig, retailActions } from './retail-actions.js';
import { retailToolDefinitions } from './retail-tool-definitions.js';

/** The agent the world's runner acts as. */
export const RETAIL_AGENT = { id: 'retail-agent', principal: 'customer-service' } as const;

/** Options of {@link retailGatewayConfig}. */
export interface RetailGatewayConfigOptions extends RetailApiConfig {
  /** The retail MCP server (`startRetailMcpServer`). */
  readonly mcpUrl: string;
  /** The agent's key (hashed at load). */
  readonly agentKey: string;
  /** How long one upstream call may take before its outcome is unknown, in ms. @default 600 */
  readonly upstreamTimeoutMs?: number;
  /** @default 'retail' */
  readonly tenant?: string;
}

const writes = new Set<string>(retailWriteTools);

/** The world's gateway config. */
export function retailGatewayConfig(options: RetailGatewayConfigOptions): GatewayConfig {
  const actions = retailActions(options);
  const timeoutMs = options.upstreamTimeoutMs ?? 600;
  const bindings: BindingConfig[] = [];
  for (const tool of retailToolDefinitions) {
    const action = writes.has(tool.name) ? actions[tool.name as keyof typeof actions] : undefined;
    bindings.push({
      name: tool.name,
      upstream: 'retail_tools',
      tool: tool.name,
      toolDigest: toolDefinitionDigest(tool),
      ...(action === undefined
        ? { read: true as const }
        : { action, toolErrors: 'not_applied' as const }),
    });
  }
  for (const tool of retailToolDefinitions) {
    if (['calculate', 'think', 'transfer_to_human_agents'].includes(tool.name)) continue;
    const action = writes.has(tool.name) ? actions[tool.name as keyof typeof actions] : undefined;
    if (action === undefined) {
      bindings.push({
        name: `http_${tool.name}`,
        upstream: 'retail_api',
        route: `GET /v1/${tool.name}`,
        read: true,
      });
      continue;
    }
    bindings.push({
      name: `http_${tool.name}`,
      upstream: 'retail_api',
      route: `POST /v1/${tool.name}`,
      action,
      toInput: (request: BoundHttpRequest) => request.body,
      toRequest: (input: never) => ({ path: `/v1/${tool.name}`, json: input }),
      receipt: (response: UpstreamResponse) => receiptOf(response),
    });
  }
  return {
    tenant: options.tenant ?? 'retail',
    actions: Object.values(actions),
    upstreams: {
      retail_tools: { kind: 'mcp', transport: { url: options.mcpUrl }, timeoutMs },
      retail_api: {
        kind: 'http',
        baseUrl: `${options.dataUrl.replace(/\/+$/, '')}/retail`,
        mount: { prefix: '/retail' },
        credentials: { headers: { authorization: `Bearer ${options.apiKey}` } },
        timeoutMs,
      },
    },
    bindings,
    agents: [{ ...RETAIL_AGENT, key: options.agentKey, roles: ['agent'] }],
    roles: { agent: { bindings: ['retail_tools:*', 'retail_api:*'] } },
  };
}

/** The order (or user) a successful write answered with, as the receipt. */
function receiptOf(response: UpstreamResponse) {
  const result = (response.json() as { result?: { order_id?: unknown; email?: unknown } })?.result;
  const id = typeof result?.order_id === 'string' ? result.order_id : undefined;
  return id === undefined ? undefined : { id, provider: 'retail' };
}
