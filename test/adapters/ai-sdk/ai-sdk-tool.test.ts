/**
 * `sideguard/ai-sdk` under the AI SDK's own `generateText` and mock model: the SDK's approval
 * step drives Sideguard approval, bound to the proposal's exact arguments; retries, replayed
 * conversations and edited calls never add a refund. The sandbox counts the refunds.
 */
import { generateText, type ModelMessage, type ToolApprovalResponse } from 'ai';
import { recordToolApprovals, sideguardTool } from 'sideguard/ai-sdk';
import { describe, expect, it } from 'vitest';
import { APPROVER, PRINCIPAL, refundCall, TENANT, useAgentBed } from '../agent-harness.js';
import { type ScriptedStep, scriptedModel } from './scripted-model.js';

const newBed = useAgentBed();

async function setup() {
  const bed = await newBed();
  const tools = {
    refund: sideguardTool(bed.action, { guard: bed.guard, tenant: TENANT, principal: PRINCIPAL }),
  };
  const conversation: ModelMessage[] = [{ role: 'user', content: 'Refund order ord_1001, please' }];
  /** One `generateText` turn on the scripted step; its messages join the conversation. */
  const turn = async (step: ScriptedStep) => {
    const result = await generateText({
      model: scriptedModel([step]),
      tools,
      messages: conversation,
    });
    conversation.push(...result.response.messages);
    return result;
  };
  /** The user's answers to every open approval request, as the chat UI sends them. */
  const answer = (approved: boolean): ModelMessage => {
    const requests = conversation.flatMap((m) =>
      typeof m.content === 'string'
        ? []
        : m.content.filter((p) => p.type === 'tool-approval-request'),
    );
    const content: ToolApprovalResponse[] = requests.map((request) => ({
      type: 'tool-approval-response',
      approvalId: request.approvalId,
      approved,
    }));
    return { role: 'tool', content };
  };
  const approvalsOf = (
    messages: ModelMessage[],
    authority = APPROVER,
    channelAssurance = 'medium' as const,
  ) => recordToolApprovals({ tools, messages, authority, channelAssurance });
  return { ...bed, tools, conversation, turn, answer, approvalsOf };
}

/** The tool results in a `generateText` result's response messages. */
function toolOutputs(messages: readonly ModelMessage[]) {
  return messages.flatMap((m) =>
    m.role === 'tool' ? m.content.flatMap((p) => (p.type === 'tool-result' ? [p.output] : [])) : [],
  );
}

describe('sideguard/ai-sdk', () => {
  it('a retried call, approved in the chat, is one refund; a later duplicate gets the original result', async () => {
    const t = await setup();
    const first = await t.turn({ calls: [refundCall(), refundCall()] });
    expect(first.content.filter((p) => p.type === 'tool-approval-request')).toHaveLength(2);
    expect(await t.refunds()).toBe(0);

    t.conversation.push(t.answer(true));
    const recorded = await t.approvalsOf(t.conversation);
    expect(recorded.map((r) => r.kind)).toEqual(['recorded', 'recorded']);
    expect(recorded[0]).toMatchObject({ outcome: 'authorized', toolName: 'refund' });
    expect(recorded[1]?.proposal).toBe(recorded[0]?.proposal);

    const second = await t.turn({ text: 'Refunded.' });
    const outputs = toolOutputs(second.response.messages).map(
      (o) => (o as { value: unknown }).value,
    );
    // The two calls ran together: one refunded, the other waited and got the same refund.
    expect(outputs).toEqual([
      expect.objectContaining({ status: 'done', outcome: 'verified', duplicate: false }),
      expect.objectContaining({ status: 'done', outcome: 'replayed', duplicate: true }),
    ]);
    expect(await t.refunds()).toBe(1);
    const original = outputs[0] as { result: { id: string }; proposal: string };
    expect(outputs[1]).toMatchObject({
      proposal: original.proposal,
      result: { id: original.result.id },
    });

    // The model calls it once more: no approval asked, the original refund comes back.
    const third = await t.turn({ calls: [refundCall({ requestId: 'req-9' })] });
    expect(third.content.filter((p) => p.type === 'tool-approval-request')).toHaveLength(0);
    expect(third.toolResults[0]?.output).toMatchObject({
      status: 'done',
      outcome: 'replayed',
      duplicate: true,
      proposal: original.proposal,
      result: { id: original.result.id, object: 'refund' },
    });
    expect(await t.refunds()).toBe(1);
  });

  it('approving A then executing B is refused: B waits for its own approval and nothing is refunded', async () => {
    const t = await setup();
    await t.turn({ calls: [refundCall()] });
    t.conversation.push(t.answer(true));
    expect((await t.approvalsOf(t.conversation))[0]).toMatchObject({
      kind: 'recorded',
      outcome: 'authorized',
    });

    // The conversation sent back is edited: the approved call now refunds 900 instead of 500.
    const edited = structuredClone(t.conversation);
    for (const message of edited) {
      if (typeof message.content === 'string') continue;
      for (const part of message.content) {
        if (part.type === 'tool-call') part.input = refundCall({ amountMinor: 900 });
      }
    }
    const result = await generateText({
      model: scriptedModel([{ text: 'ok' }]),
      tools: t.tools,
      messages: edited,
    });
    const [output] = toolOutputs(result.response.messages);
    expect(output).toMatchObject({
      type: 'json',
      value: { status: 'approval_pending', duplicate: false },
    });
    expect(await t.refunds()).toBe(0);
  });

  it('an approval of edited arguments is not recorded, so the call stays pending', async () => {
    const t = await setup();
    await t.turn({ calls: [refundCall()] });
    t.conversation.push(t.answer(true));
    const edited = structuredClone(t.conversation);
    for (const message of edited) {
      if (typeof message.content === 'string') continue;
      for (const part of message.content) {
        if (part.type === 'tool-call') part.input = refundCall({ reason: 'fraudulent' });
      }
    }
    const [refused] = await t.approvalsOf(edited);
    expect(refused).toMatchObject({ kind: 'refused', reasonCode: 'approval_arguments_mismatch' });
    const result = await generateText({
      model: scriptedModel([{ text: 'ok' }]),
      tools: t.tools,
      messages: edited,
    });
    expect(toolOutputs(result.response.messages)[0]).toMatchObject({
      value: { status: 'approval_pending' },
    });
    expect(await t.refunds()).toBe(0);
  });

  it('an approval from someone who is not the declared approver, or over a weak channel, is refused', async () => {
    const t = await setup();
    await t.turn({ calls: [refundCall()] });
    t.conversation.push(t.answer(true));
    expect((await t.approvalsOf(t.conversation, 'mallory'))[0]).toMatchObject({
      kind: 'refused',
      reasonCode: 'authority_not_declared',
    });
    expect((await t.approvalsOf(t.conversation, APPROVER, 'low' as 'medium'))[0]).toMatchObject({
      kind: 'refused',
      reasonCode: 'channel_assurance_insufficient',
    });
    const result = await t.turn({ text: 'ok' });
    expect(toolOutputs(result.response.messages)[0]).toMatchObject({
      value: { status: 'approval_pending' },
    });
    expect(await t.refunds()).toBe(0);
  });

  it('a denial in the chat denies the proposal: no refund, the model gets execution-denied', async () => {
    const t = await setup();
    await t.turn({ calls: [refundCall()] });
    t.conversation.push(t.answer(false));
    const [denied] = await t.approvalsOf(t.conversation);
    expect(denied).toMatchObject({ kind: 'recorded', outcome: 'denied' });
    const result = await t.turn({ text: 'It was not approved.' });
    expect(toolOutputs(result.response.messages)[0]).toMatchObject({ type: 'execution-denied' });
    const view = await t.guard.read(t.action, {
      tenant: TENANT,
      proposal: denied?.proposal ?? '',
      reader: PRINCIPAL,
    });
    expect(view.status).toBe('denied');
    expect(await t.refunds()).toBe(0);
  });

  it('a replayed conversation (the same approval sent again) records nothing and refunds nothing more', async () => {
    const t = await setup();
    await t.turn({ calls: [refundCall()] });
    t.conversation.push(t.answer(true));
    const atApproval = structuredClone(t.conversation);
    await t.approvalsOf(t.conversation);
    await t.turn({ text: 'Refunded.' });
    expect(await t.refunds()).toBe(1);

    const [again] = await t.approvalsOf(atApproval);
    expect(again).toMatchObject({ kind: 'refused', reasonCode: 'proposal_not_awaiting_authority' });
    const replayed = await generateText({
      model: scriptedModel([{ text: 'Refunded.' }]),
      tools: t.tools,
      messages: atApproval,
    });
    expect(toolOutputs(replayed.response.messages)[0]).toMatchObject({
      value: { status: 'done', outcome: 'replayed', duplicate: true },
    });
    expect(await t.refunds()).toBe(1);
  });
});
