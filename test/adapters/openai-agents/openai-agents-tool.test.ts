/**
 * `sideguard/openai-agents` under the Agents SDK's own runner with a scripted model: a call that
 * needs approval interrupts the run with its proposal; approving or rejecting the run state
 * records bound evidence; resuming executes that one proposal once, however often it is resumed.
 */
import { Agent, RunState, run, setTracingDisabled } from '@openai/agents';
import {
  approveInterruption,
  describeInterruption,
  rejectInterruption,
  sideguardAgentTool,
} from 'sideguard/openai-agents';
import { beforeAll, describe, expect, it } from 'vitest';
import { APPROVER, PRINCIPAL, refundCall, TENANT, useAgentBed } from '../agent-harness.js';
import { type AgentStep, scriptedAgentModel } from './scripted-agent-model.js';

beforeAll(() => setTracingDisabled(true));
const newBed = useAgentBed();
const chat = { authority: APPROVER, channelAssurance: 'medium' } as const;

async function setup(steps: readonly AgentStep[]) {
  const bed = await newBed();
  const refund = sideguardAgentTool(bed.action, {
    guard: bed.guard,
    tenant: TENANT,
    principal: PRINCIPAL,
  });
  const agent = new Agent({
    name: 'support',
    instructions: 'Refund when asked.',
    model: scriptedAgentModel(steps),
    tools: [refund],
  });
  return { ...bed, agent };
}

/** The tool outputs a run produced, parsed. */
function toolOutputs(result: { newItems: readonly { type: string; output?: unknown }[] }) {
  return result.newItems
    .filter((item) => item.type === 'tool_call_output_item')
    .map((item) => (typeof item.output === 'string' ? JSON.parse(item.output) : item.output));
}

describe('sideguard/openai-agents', () => {
  it('a retried call interrupts with its proposal; approving the state and resuming refunds once', async () => {
    const t = await setup([{ calls: [refundCall(), refundCall()] }, { text: 'Refunded.' }]);
    const first = await run(t.agent, 'Refund order ord_1001');
    expect(first.interruptions).toHaveLength(2);
    const described = await Promise.all(first.interruptions.map((i) => describeInterruption(i)));
    expect(described[0]?.proposal).toEqual(expect.stringMatching(/^prop_/));
    expect(described[1]?.proposal).toBe(described[0]?.proposal);
    expect(described[0]?.arguments).toEqual(refundCall());
    for (const item of first.interruptions) {
      const recorded = await approveInterruption(first.state, item, {
        ...chat,
        proposal: described[0]?.proposal ?? '',
      });
      expect(recorded).toMatchObject({ kind: 'recorded', outcome: 'authorized' });
    }
    const approvedState = first.state.toString();

    const resumed = await run(t.agent, first.state);
    expect(resumed.finalOutput).toBe('Refunded.');
    const outputs = toolOutputs(resumed);
    expect(outputs.map((o) => [o.status, o.duplicate])).toEqual(
      expect.arrayContaining([
        ['done', false],
        ['done', true],
      ]),
    );
    expect(outputs[0].result.id).toBe(outputs[1].result.id);
    expect(await t.refunds()).toBe(1);

    // The approved state resumed again (a replay): the proposal is done, nothing more is sent.
    const replayedAgent = t.agent.clone({ model: scriptedAgentModel([{ text: 'Refunded.' }]) });
    const again = await run(replayedAgent, await RunState.fromString(replayedAgent, approvedState));
    expect(toolOutputs(again).map((o) => [o.status, o.outcome])).toEqual([
      ['done', 'replayed'],
      ['done', 'replayed'],
    ]);
    expect(await t.refunds()).toBe(1);
  });

  it('approving A then resuming with B in the run state is refused: B waits, nothing is refunded', async () => {
    const t = await setup([{ calls: [refundCall()] }]);
    const first = await run(t.agent, 'Refund order ord_1001');
    const [item] = first.interruptions;
    if (item === undefined) throw new Error('expected an interruption');
    const approved = await approveInterruption(first.state, item, chat);
    expect(approved).toMatchObject({ kind: 'recorded', outcome: 'authorized' });
    // The saved state is edited: the approved call now refunds 900.
    const edited = first.state
      .toString()
      .replaceAll('\\"amountMinor\\":500', '\\"amountMinor\\":900');
    expect(edited).not.toBe(first.state.toString());
    const agent = t.agent.clone({ model: scriptedAgentModel([{ text: 'ok' }]) });
    const resumed = await run(agent, await RunState.fromString(agent, edited));
    // The SDK runs the call it holds as approved, but B is a new proposal of its own.
    const [output] = toolOutputs(resumed);
    expect(output).toMatchObject({ status: 'approval_pending', outcome: 'authority_pending' });
    expect(output.proposal).not.toBe(approved.proposal);
    expect(await t.refunds()).toBe(0);
  });

  it('an approval by someone who is not the approver leaves the state pending: resuming interrupts again', async () => {
    const t = await setup([{ calls: [refundCall()] }]);
    const first = await run(t.agent, 'Refund order ord_1001');
    const [item] = first.interruptions;
    if (item === undefined) throw new Error('expected an interruption');
    const refused = await approveInterruption(first.state, item, { ...chat, authority: 'mallory' });
    expect(refused).toMatchObject({ kind: 'refused', reasonCode: 'authority_not_declared' });
    const wrongProposal = await approveInterruption(first.state, item, {
      ...chat,
      proposal: 'prop_other',
    });
    expect(wrongProposal).toMatchObject({ kind: 'refused', reasonCode: 'proposal_not_found' });
    const resumed = await run(t.agent, first.state);
    expect(resumed.interruptions).toHaveLength(1);
    expect(await t.refunds()).toBe(0);
  });

  it('rejecting the interruption denies the proposal: no refund and a clear result for the model', async () => {
    const t = await setup([{ calls: [refundCall()] }, { text: 'Not refunded.' }]);
    const first = await run(t.agent, 'Refund order ord_1001');
    const [item] = first.interruptions;
    if (item === undefined) throw new Error('expected an interruption');
    const described = await describeInterruption(item);
    const denied = await rejectInterruption(first.state, item, chat);
    expect(denied).toMatchObject({ kind: 'recorded', outcome: 'denied' });
    const resumed = await run(t.agent, first.state);
    expect(resumed.finalOutput).toBe('Not refunded.');
    const [output] = resumed.newItems.filter((i) => i.type === 'tool_call_output_item');
    expect((output as { output?: unknown }).output).toContain('An approver rejected this');
    const view = await t.guard.read(t.action, {
      tenant: TENANT,
      proposal: described?.proposal ?? '',
      reader: PRINCIPAL,
    });
    expect(view.status).toBe('denied');
    expect(await t.refunds()).toBe(0);
  });
});
