/**
 * `sideguard/mcp`: the gateway's MCP front door. Its own entry because it loads the MCP SDK v2
 * (`@modelcontextprotocol/server` and `/client`), which neither `sideguard` nor the HTTP door
 * needs. `/mcp` on `sideguard serve` and `sideguard mcp` (stdio) are built from these.
 */

export { type ActionExecutable, actionExecutables } from './mcp-action-executables.js';
export { bindMcpToolWrite, type McpBindingRuntime, toolExecuteResult } from './mcp-bound-action.js';
export {
  checkMcpConfig,
  type McpConfigCheck,
  type McpConfigCheckInput,
} from './mcp-config-check.js';
export type {
  McpDoorHooks,
  McpPendingApproval,
  McpShadowWrite,
} from './mcp-door-hooks.js';
export { createMcpGateway, type McpGateway, type McpGatewayConfig } from './mcp-gateway.js';
export {
  type McpGatewayOfRuntimeOptions,
  mcpGatewayOfRuntime,
  mcpShadowResource,
  type OpenedMcpGateway,
  type OpenMcpGatewayOptions,
  openMcpGateway,
} from './mcp-gateway-runtime.js';
export { createMcpHttpDoor, type McpHttpDoor, type McpHttpDoorOptions } from './mcp-http-door.js';
export { MCP_PATH, mcpServeExtension } from './mcp-serve-extension.js';
export {
  AGENT_KEY_ENVIRONMENT_VARIABLE,
  type McpStdioDoorOptions,
  serveMcpOverStdio,
  stdioIdentity,
} from './mcp-stdio-door.js';
export { actionInputSchema, listMcpTools } from './mcp-tool-catalog.js';
export { type DigestedToolDefinition, toolDefinitionDigest } from './mcp-tool-digest.js';
export {
  actionToolName,
  type McpToolTarget,
  PROPOSAL_TOOL_NAME,
} from './mcp-tool-directory.js';
export { McpDoorCode, VERDICT_HINT } from './mcp-tool-reply.js';
export {
  describeMcpUpstreamTools,
  formatMcpToolReport,
  type McpToolReportRow,
  type McpUpstreamReport,
} from './mcp-tool-report.js';
export {
  type CurrentToolDefinition,
  createMcpUpstreamPool,
  DEFAULT_MCP_UPSTREAM_TIMEOUT_MS,
  type McpUpstreamPool,
  type McpUpstreamPoolConfig,
} from './mcp-upstream-pool.js';
