/**
 * What an MCP agent's tool calls look like behind the gateway: the official MCP SDK v2 client
 * (protocol 2026-07-28) connected to `/mcp` with the agent's key. Start the gateway first (see
 * sideguard.config.ts), then: node examples/gateway/mcp-agent.mjs
 *
 * GATEWAY_MCP_URL overrides the default address (http://localhost:4400/mcp).
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

const agentKey = process.env.SIDEGUARD_AGENT_KEY ?? 'sg_demo_support_agent_key';
const url = new URL(process.env.GATEWAY_MCP_URL ?? 'http://localhost:4400/mcp');

const client = new Client(
  { name: 'example-agent', version: '1.0.0' },
  { versionNegotiation: { mode: { pin: '2026-07-28' } } },
);
await client.connect(
  new StreamableHTTPClientTransport(url, {
    requestInit: { headers: { authorization: `Bearer ${agentKey}` } },
  }),
);
const call = async (name, args) => {
  const result = await client.callTool({ name, arguments: args });
  return { ...result.structuredContent, isError: result.isError === true };
};

// 1. The tools this agent may call: the refund, the memory server's wrapped tools, and the
//    gateway's own proposal status tool.
const { tools } = await client.listTools();
console.log(`tools: ${tools.map((tool) => tool.name).join(', ')}`);

// 2. A refund as an MCP tool: it runs through the same binding as the HTTP door, once.
const refund = await call('support.refund.v1', { charge: 'ch_sg_003', amount: '1500' });
console.log(`refund -> ${refund.code} (receipt ${refund.receipt?.id})`);

// 3. The client retries with other retry metadata (or re-issues after a broken stream): the
//    same effect, the original result, no second refund.
const again = await call('support.refund.v1', {
  charge: 'ch_sg_003',
  amount: '1500',
  requestId: 'retry-1',
});
console.log(
  `asked again -> ${again.receipt?.id === refund.receipt?.id ? 'the original refund' : 'A SECOND REFUND'}`,
);

// 4. Over the automatic limit: the answer comes at once, with the proposal to approve.
const large = await call('support.refund.v1', { charge: 'ch_sg_004', amount: '9000' });
console.log(`large refund -> ${large.code} (proposal ${large.proposal})`);
const status = await call('sideguard_proposal', { proposal: large.proposal });
console.log(`proposal status -> ${status.status}, needs ${status.needs}`);

// 5. The memory server's write tool, guarded; its read tool, forwarded.
const entity = { name: 'ticket-5001', entityType: 'ticket', observations: ['refund requested'] };
const remembered = await call('memory.remember', { entities: [entity] });
console.log(`remember -> ${remembered.code}`);
const opened = await client.callTool({
  name: 'memory.open',
  arguments: { names: ['ticket-5001'] },
});
console.log(`open -> ${opened.structuredContent?.entities?.[0]?.observations?.join('; ')}`);

// 6. A tool nobody bound is refused with a code and a hint, not a protocol error.
const unknown = await call('memory.delete_entities', { entityNames: ['ticket-5001'] });
console.log(`unbound tool -> ${unknown.isError ? 'refused' : 'ran'} ${unknown.code}`);

await client.close();
