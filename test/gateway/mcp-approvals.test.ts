/**
 * Approval inside MCP clients, with the official SDK clients over real HTTP and the real sandbox:
 * a call that needs approval answers at once with a signed requestState; the retry carrying it
 * stays pending until an approver decides, then executes that one proposal once however often
 * it is retried. Forged, expired, another agent's and re-targeted states are refused and nothing
 * runs. A 2026-07-28 client that takes URL elicitations is sent to the console page instead.
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import {
  buildAuthorityEvidence,
  createDevelopmentKeyRing,
  createGuard,
  createMemoryStore,
  type Guard,
} from 'sideguard';
import { createMcpGateway, type McpGateway } from 'sideguard/mcp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  agentKeys,
  connectLegacy,
  connectModern,
  refundConfig,
  sandboxRefundAction,
  serveHttpDoor,
  startTestSandbox,
  structured,
} from './mcp/mcp-test-kit.js';

const REFUND_TOOL = 'support.refund.v1';
const OTHER_KEY = 'sk_agent_other_support_0123';
const STATE_META = 'io.sideguard/requestState';

type Sandbox = Awaited<ReturnType<typeof startTestSandbox>>;
type Door = Awaited<ReturnType<typeof serveHttpDoor>>;

let sandbox: Sandbox;
let door: Door;
let lateDoor: Door;
let guard: Guard;
let refund: ReturnType<typeof sandboxRefundAction>;
let modern: Client;
const closers: (() => Promise<void>)[] = [];

function gatewayAt(store: ReturnType<typeof createMemoryStore>, now?: () => number): McpGateway {
  const keyRing = createDevelopmentKeyRing('mcp-approvals-tests');
  const config = refundConfig(sandbox.dataUrl, {});
  const withOther = {
    ...config,
    agents: [
      ...config.agents,
      { id: 'other-bot', principal: 'other', key: OTHER_KEY, roles: ['support'] },
    ],
  };
  return createMcpGateway({
    config: withOther,
    guard: createGuard({ store, keyRing }),
    keyRing,
    upstreamStderr: 'ignore',
    ...(now === undefined ? {} : { now }),
  });
}

beforeAll(async () => {
  sandbox = await startTestSandbox();
  const store = createMemoryStore();
  guard = createGuard({ store, keyRing: createDevelopmentKeyRing('mcp-approvals-tests') });
  refund = sandboxRefundAction(sandbox.dataUrl);
  door = await serveHttpDoor(gatewayAt(store));
  // The same store, a clock a day ahead: every state it sees has expired.
  lateDoor = await serveHttpDoor(gatewayAt(store, () => Date.now() + 86_400_000));
  modern = await connectModern(door.url, agentKeys.support);
});

afterAll(async () => {
  for (const close of closers.reverse()) await close();
  await modern?.close();
  await door?.close();
  await lateDoor?.close();
  await sandbox?.stop();
});

const refundWrites = async () =>
  (await sandbox.control.observations()).receipts.filter(
    (receipt) => receipt.operation === 'create_refund',
  ).length;

async function approve(proposal: string): Promise<void> {
  const view = await guard.read(refund, { tenant: 'acme', proposal, reader: 'finance' });
  if (view.evidenceBindings === undefined) throw new Error('no bindings');
  const result = await guard.recordAuthority(refund, {
    tenant: 'acme',
    authenticatedAuthority: 'finance',
    evidence: buildAuthorityEvidence(view.evidenceBindings, {
      authority: 'finance',
      decision: 'approve',
      channelAssurance: 'medium',
      issuedAt: Date.now(),
    }),
  });
  expect(result.status).toBe('authorized');
}

/** A call that waits for approval: its proposal and requestState. */
async function pendingCall(client: Client, charge: string) {
  const pending = await client.callTool({
    name: REFUND_TOOL,
    arguments: { charge, amount: '5100' },
  });
  expect(pending.isError).toBeFalsy();
  const content = structured(pending);
  expect(content).toMatchObject({ code: 'approval_required', status: 'awaiting_authority' });
  expect(typeof content.requestState).toBe('string');
  expect((pending._meta as Record<string, unknown>)[STATE_META]).toBe(content.requestState);
  return { proposal: content.proposal as string, state: content.requestState as string };
}

/** A retry carrying the state as the 2026-07-28 protocol's `requestState`. */
const retryWithState = (client: Client, args: Record<string, unknown>, state: string) =>
  client.callTool({ name: REFUND_TOOL, arguments: args, requestState: state } as never);

describe('requestState on a 2026-07-28 client', () => {
  it('stays pending until approved, then executes the one proposal once however often retried', async () => {
    const before = await refundWrites();
    const { proposal, state } = await pendingCall(modern, 'ch_sg_001');
    const args = { charge: 'ch_sg_001', amount: '5100' };

    const waiting = await retryWithState(modern, args, state);
    expect(structured(waiting)).toMatchObject({
      code: 'approval_required',
      proposal,
      requestState: state,
    });
    expect(await refundWrites()).toBe(before);

    await approve(proposal);
    const done = await retryWithState(modern, args, state);
    expect(done.isError).toBeFalsy();
    expect(structured(done)).toMatchObject({ code: 'completed', proposal, status: 'verified' });
    const again = await retryWithState(modern, args, state);
    expect(structured(again)).toMatchObject({ code: 'completed', proposal, duplicate: true });
    expect(await refundWrites()).toBe(before + 1);
  });

  it('refuses a forged, an expired, another agent’s and a re-targeted state; nothing runs', async () => {
    const { proposal, state } = await pendingCall(modern, 'ch_sg_002');
    await approve(proposal);
    const before = await refundWrites();
    const args = { charge: 'ch_sg_002', amount: '5100' };

    const last = state.at(-1) === 'A' ? 'B' : 'A';
    const forged = await retryWithState(modern, args, `${state.slice(0, -1)}${last}`);
    expect(forged.isError).toBe(true);
    expect(structured(forged)).toMatchObject({ code: 'request_state_invalid' });
    const garbage = await retryWithState(modern, args, 'not-a-state');
    expect(structured(garbage)).toMatchObject({ code: 'request_state_invalid' });

    const late = await connectModern(lateDoor.url, agentKeys.support);
    closers.push(() => late.close());
    const expired = await retryWithState(late, args, state);
    expect(expired.isError).toBe(true);
    expect(structured(expired)).toMatchObject({ code: 'request_state_expired' });

    const other = await connectModern(door.url, OTHER_KEY);
    closers.push(() => other.close());
    const replayed = await retryWithState(other, args, state);
    expect(replayed.isError).toBe(true);
    expect(structured(replayed)).toMatchObject({ code: 'request_state_not_yours' });

    const retargeted = await retryWithState(modern, { charge: 'ch_sg_002', amount: '5200' }, state);
    expect(retargeted.isError).toBe(true);
    expect(structured(retargeted)).toMatchObject({ code: 'request_state_retargeted' });
    const otherTool = await modern.callTool({
      name: 'sideguard_proposal',
      arguments: { proposal },
    });
    expect(structured(otherTool)).toMatchObject({ status: 'authorized' });
    expect(await refundWrites()).toBe(before);

    const genuine = await retryWithState(modern, args, state);
    expect(structured(genuine)).toMatchObject({ code: 'completed', proposal });
    expect(await refundWrites()).toBe(before + 1);
  });

  it('answers a denied proposal’s state with the denial, and runs nothing', async () => {
    const { proposal, state } = await pendingCall(modern, 'ch_sg_003');
    const view = await guard.read(refund, { tenant: 'acme', proposal, reader: 'finance' });
    if (view.evidenceBindings === undefined) throw new Error('no bindings');
    await guard.recordAuthority(refund, {
      tenant: 'acme',
      authenticatedAuthority: 'finance',
      evidence: buildAuthorityEvidence(view.evidenceBindings, {
        authority: 'finance',
        decision: 'reject',
        channelAssurance: 'medium',
        issuedAt: Date.now(),
      }),
    });
    const before = await refundWrites();
    const denied = await retryWithState(modern, { charge: 'ch_sg_003', amount: '5100' }, state);
    expect(denied.isError).toBe(true);
    expect(structured(denied)).toMatchObject({
      code: 'approval_denied',
      status: 'denied',
      proposal,
    });
    expect(await refundWrites()).toBe(before);
  });
});

describe('requestState on a 2025-11-25 client', () => {
  it('resumes the proposal from _meta and executes it once', async () => {
    const legacy = await connectLegacy(door.url, agentKeys.support);
    closers.push(() => legacy.close());
    const first = await legacy.callTool({
      name: REFUND_TOOL,
      arguments: { charge: 'ch_sg_004', amount: '5100' },
    });
    const { proposal, requestState } = structured(first);
    expect(typeof requestState).toBe('string');
    await approve(proposal);
    const before = await refundWrites();
    const done = await legacy.callTool({
      name: REFUND_TOOL,
      arguments: { charge: 'ch_sg_004', amount: '5100' },
      _meta: { [STATE_META]: requestState },
    });
    expect(structured(done)).toMatchObject({ code: 'completed', proposal });
    expect(await refundWrites()).toBe(before + 1);
  });
});

describe('URL elicitation to the console', () => {
  it('sends a client that takes URL elicitations to the proposal page; once approved there, the call completes', async () => {
    const client = new Client(
      { name: 'elicitation-agent', version: '1.0.0' },
      {
        versionNegotiation: { mode: { pin: '2026-07-28' } },
        capabilities: { elicitation: { url: {} } },
      },
    );
    const seen: { mode?: string; url?: string; message?: string }[] = [];
    client.setRequestHandler('elicitation/create', async (request) => {
      const params = request.params as { mode?: string; url?: string; message?: string };
      seen.push(params);
      // The person opens the page and approves there; here the approver's decision is recorded.
      const proposal = decodeURIComponent(params.url?.split('/proposals/')[1] ?? '');
      await approve(proposal);
      return { action: 'accept' };
    });
    await client.connect(
      new StreamableHTTPClientTransport(door.url, {
        requestInit: { headers: { authorization: `Bearer ${agentKeys.support}` } },
      }),
    );
    closers.push(() => client.close());
    const before = await refundWrites();

    const result = await client.callTool({
      name: REFUND_TOOL,
      arguments: { charge: 'ch_sg_001', amount: '5300' },
    });
    expect(seen).toHaveLength(1);
    expect(seen[0]?.mode).toBe('url');
    expect(seen[0]?.url).toMatch(/^http:\/\/127\.0\.0\.1:4401\/proposals\/[^/]+$/);
    expect(seen[0]?.message).toContain('needs approval by 1 declared approver');
    expect(structured(result)).toMatchObject({ code: 'completed', status: 'verified' });
    expect(seen[0]?.url).toContain(structured(result).proposal);
    expect(await refundWrites()).toBe(before + 1);
  });
});
