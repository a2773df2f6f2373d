/**
 * `/mcp` on `sideguard serve`: the MCP door mounted on the gateway's main port as a
 * `GatewayExtension`, over the runtime the HTTP door uses. On a loopback listener only loopback
 * Host and Origin headers are accepted (DNS rebinding); on any other address the operator's
 * proxy is trusted to check them.
 */
import type { GatewayExtension } from '../gateway-server.js';
import type { McpGateway } from './mcp-gateway.js';
import { type McpGatewayOfRuntimeOptions, mcpGatewayOfRuntime } from './mcp-gateway-runtime.js';
import { createMcpHttpDoor, type McpHttpDoor } from './mcp-http-door.js';

/** The path the door is mounted at. */
export const MCP_PATH = '/mcp';

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1', '[::1]']);

/** The extension `serve` adds; `options.configFile` is the config `serve` loaded. */
export function mcpServeExtension(options: McpGatewayOfRuntimeOptions): GatewayExtension {
  let gateway: McpGateway | undefined;
  let door: McpHttpDoor | undefined;
  return {
    name: 'mcp',
    mount(app, runtime) {
      gateway = mcpGatewayOfRuntime(runtime, options);
      door = createMcpHttpDoor(gateway, {
        ...(LOOPBACK.has(runtime.table.server.host) ? {} : { allowedHostnames: null }),
      });
      const served = door;
      app.all(MCP_PATH, (c) => served.fetch(c.req.raw));
    },
    async close() {
      await door?.close();
      await gateway?.close();
    },
  };
}
