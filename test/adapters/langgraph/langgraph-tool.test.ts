/**
 * `sideguard/langgraph` in a real LangGraph graph (`ToolNode`, `MemorySaver`): a call needing
 * approval interrupts with its proposal, the graph resumes with `Command({ resume })`, LangGraph
 * re-runs the tool node from its start, and replaying the graph from an earlier checkpoint never
 * sends a second refund.
 */
import { HumanMessage, type ToolMessage } from '@langchain/core/messages';
import { Command } from '@langchain/langgraph';
import {
  decideApproval,
  isSideguardApprovalRequest,
  type SideguardApprovalRequest,
  sideguardGraphTool,
} from 'sideguard/langgraph';
import { describe, expect, it } from 'vitest';
import { APPROVER, PRINCIPAL, refundCall, TENANT, useAgentBed } from '../agent-harness.js';
import { agentGraph, type GraphStep } from './scripted-graph.js';

const newBed = useAgentBed();
const chat = { authority: APPROVER, channelAssurance: 'medium' } as const;

async function setup() {
  const bed = await newBed();
  const refund = sideguardGraphTool(bed.action, {
    guard: bed.guard,
    tenant: TENANT,
    principal: PRINCIPAL,
  });
  const threadOf = (steps: readonly GraphStep[], thread: string) => {
    const graph = agentGraph([refund], steps, thread);
    const config = { configurable: { thread_id: thread } };
    return {
      graph,
      config,
      start: () => graph.invoke({ messages: [new HumanMessage('Refund ord_1001')] }, config),
      resume: (resume: unknown) => graph.invoke(new Command({ resume }), config),
    };
  };
  return { ...bed, refund, threadOf };
}

/** The approval request a run stopped with. */
function requestOf(result: unknown): SideguardApprovalRequest {
  const value = (result as { __interrupt__?: { value?: unknown }[] }).__interrupt__?.[0]?.value;
  if (!isSideguardApprovalRequest(value)) throw new Error('expected a Sideguard interrupt');
  return value;
}

/** The tool results in the graph's messages, parsed. */
function toolOutputs(result: { messages: unknown[] }) {
  return result.messages
    .filter((m) => (m as ToolMessage).getType?.() === 'tool')
    .map((m) => JSON.parse(String((m as ToolMessage).content)));
}

describe('sideguard/langgraph', () => {
  it('interrupts with the proposal; resumed with the approval it refunds once, and the retry gets the original', async () => {
    const t = await setup();
    const thread = t.threadOf(
      [
        { calls: [refundCall()] },
        { calls: [refundCall({ requestId: 'retry' })] },
        { text: 'Done.' },
      ],
      'approve',
    );
    const first = await thread.start();
    const request = requestOf(first);
    expect(request).toMatchObject({
      toolName: 'refund',
      actionType: 'support.refund@1',
      arguments: refundCall(),
      preview: 'Refund 500 on ch_sg_001 (ord_1001)',
    });
    expect(request.proposal).toMatch(/^prop_/);
    expect(await t.refunds()).toBe(0);

    const decided = await decideApproval(t.refund, request, { ...chat, decision: 'approve' });
    expect(decided.recorded).toMatchObject({ kind: 'recorded', outcome: 'authorized' });
    const done = await thread.resume(decided.resume);
    expect((done as { __interrupt__?: unknown }).__interrupt__).toBeUndefined();
    const outputs = toolOutputs(done);
    expect(outputs).toEqual([
      expect.objectContaining({ status: 'done', outcome: 'verified', duplicate: false }),
      expect.objectContaining({ status: 'done', outcome: 'replayed', duplicate: true }),
    ]);
    expect(outputs[1].result.id).toBe(outputs[0].result.id);
    expect(await t.refunds()).toBe(1);

    // Replaying the graph from the checkpoint taken at the interrupt re-runs the tool node.
    const history = [];
    for await (const snapshot of thread.graph.getStateHistory(thread.config))
      history.push(snapshot);
    const atInterrupt = history.find(
      (s) => s.next.includes('tools') && s.tasks.some((task) => task.interrupts.length > 0),
    );
    expect(atInterrupt).toBeDefined();
    const replayed = await thread.graph.invoke(
      new Command({ resume: decided.resume ?? null }),
      atInterrupt?.config,
    );
    // The re-run tool node's answer (first in the fork; `verified` the first time) is the replay.
    expect(toolOutputs(replayed)[0]).toMatchObject({
      status: 'done',
      outcome: 'replayed',
      duplicate: true,
      result: { id: outputs[0].result.id },
    });
    expect(await t.refunds()).toBe(1);
  });

  it('two calls of one effect in one step interrupt in turn with the same proposal: one refund', async () => {
    const t = await setup();
    const thread = t.threadOf(
      [{ calls: [refundCall(), refundCall()] }, { text: 'Done.' }],
      'twice',
    );
    let state: unknown = await thread.start();
    const proposals: string[] = [];
    const outcomes: string[] = [];
    // LangGraph surfaces one interrupt at a time; the host answers each (the same proposal).
    for (
      let round = 0;
      round < 3 && (state as { __interrupt__?: unknown }).__interrupt__;
      round++
    ) {
      const request = requestOf(state);
      proposals.push(request.proposal);
      const decided = await decideApproval(t.refund, request, { ...chat, decision: 'approve' });
      outcomes.push(decided.recorded.kind === 'refused' ? decided.recorded.reasonCode : 'recorded');
      state = await thread.resume(decided.resume);
    }
    expect(proposals).toHaveLength(2);
    expect(new Set(proposals).size).toBe(1);
    // The second ask came after the first call had run the refund: nothing left to approve.
    expect(outcomes).toEqual(['recorded', 'proposal_not_awaiting_authority']);
    const outputs = toolOutputs(state as { messages: unknown[] });
    // The refund ran in a node run that the second interrupt cut short; the node's final run
    // answers both calls from the proposal: the same refund, not a second one.
    expect(outputs.map((o) => [o.status, o.outcome])).toEqual([
      ['done', 'replayed'],
      ['done', 'replayed'],
    ]);
    expect(outputs[1].result.id).toBe(outputs[0].result.id);
    expect(await t.refunds()).toBe(1);
  });

  it('an approval of A resumed into a graph proposing B is refused: B is not executed', async () => {
    const t = await setup();
    const a = t.threadOf([{ calls: [refundCall()] }], 'a');
    const b = t.threadOf([{ calls: [refundCall({ amountMinor: 900 })] }, { text: 'ok' }], 'b');
    const requestA = requestOf(await a.start());
    const requestB = requestOf(await b.start());
    expect(requestB.proposal).not.toBe(requestA.proposal);
    const approvedA = await decideApproval(t.refund, requestA, { ...chat, decision: 'approve' });
    expect(approvedA.recorded).toMatchObject({ kind: 'recorded', outcome: 'authorized' });

    const resumedB = await b.resume(approvedA.resume);
    expect(toolOutputs(resumedB)).toEqual([
      expect.objectContaining({
        status: 'approval_pending',
        reasonCode: 'decision_for_another_proposal',
      }),
    ]);
    expect(await t.refunds()).toBe(0);
  });

  it('an approval of edited arguments is refused, and resuming without one executes nothing', async () => {
    const t = await setup();
    const thread = t.threadOf([{ calls: [refundCall()] }, { text: 'ok' }], 'edited');
    const request = requestOf(await thread.start());
    const edited = { ...request, arguments: refundCall({ amountMinor: 900 }) };
    const decided = await decideApproval(t.refund, edited, { ...chat, decision: 'approve' });
    expect(decided).toEqual({
      recorded: expect.objectContaining({
        kind: 'refused',
        reasonCode: 'approval_arguments_mismatch',
      }),
    });
    // A hand-made "approve" resume is not authority: the proposal still waits.
    const resumed = await thread.resume({
      kind: 'sideguard.decision',
      proposal: request.proposal,
      decision: 'approve',
    });
    expect(toolOutputs(resumed)).toEqual([expect.objectContaining({ status: 'approval_pending' })]);
    expect(await t.refunds()).toBe(0);
  });

  it('a rejection denies the proposal when the graph resumes: no refund, a clear tool result', async () => {
    const t = await setup();
    const thread = t.threadOf([{ calls: [refundCall()] }, { text: 'Not refunded.' }], 'reject');
    const request = requestOf(await thread.start());
    const decided = await decideApproval(t.refund, request, { ...chat, decision: 'reject' });
    expect(decided.recorded).toEqual({ kind: 'recorded_on_resume', proposal: request.proposal });
    const resumed = await thread.resume(decided.resume);
    expect(toolOutputs(resumed)).toEqual([
      expect.objectContaining({ status: 'denied', outcome: 'denied', proposal: request.proposal }),
    ]);
    const view = await t.guard.read(t.action, {
      tenant: TENANT,
      proposal: request.proposal,
      reader: PRINCIPAL,
    });
    expect(view.status).toBe('denied');
    expect(await t.refunds()).toBe(0);
  });
});
