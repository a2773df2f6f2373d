import { ProtocolError, SdkError, SdkErrorCode } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import { toolExecuteResult } from './mcp-bound-action.js';
import { toolCallFailure } from './mcp-upstream-connection.js';

const receipt = { id: 'key-1', provider: 'memory' };

describe('what an upstream tool reply means for the guard', () => {
  it('accepts a result and keeps it as the private output', () => {
    const outcome = toolExecuteResult(
      { kind: 'result', content: [{ type: 'text', text: 'ok' }] },
      receipt,
      'unknown',
    );
    expect(outcome).toMatchObject({ kind: 'accepted', receipt, output: { v: 1 } });
  });

  it('treats a tool error as unknown unless the binding declares tool errors not applied', () => {
    const error = { kind: 'result', content: [], isError: true } as const;
    expect(toolExecuteResult(error, receipt, 'unknown')).toEqual({
      kind: 'failed_unknown',
      reason: 'upstream_tool_error',
    });
    expect(toolExecuteResult(error, receipt, 'not_applied')).toEqual({
      kind: 'failed_known',
      reason: 'upstream_tool_error',
    });
  });

  it('knows nothing was applied only when nothing was sent or the server refused the request', () => {
    expect(
      toolExecuteResult({ kind: 'error', code: -32602, message: 'bad' }, receipt, 'unknown'),
    ).toEqual({ kind: 'failed_known', reason: 'upstream_refused_call' });
    expect(
      toolExecuteResult({ kind: 'no_response', reason: 'not_sent' }, receipt, 'unknown'),
    ).toEqual({ kind: 'failed_known', reason: 'upstream_unreachable' });
    expect(
      toolExecuteResult({ kind: 'no_response', reason: 'timeout' }, receipt, 'unknown'),
    ).toEqual({ kind: 'failed_unknown', reason: 'upstream_timeout' });
    expect(toolExecuteResult({ kind: 'no_response', reason: 'lost' }, receipt, 'unknown')).toEqual({
      kind: 'failed_unknown',
      reason: 'upstream_response_lost',
    });
  });

  it('maps thrown client errors: a refusal before running, a timeout, anything else lost', () => {
    expect(toolCallFailure(new ProtocolError(-32602, 'Invalid params'))).toMatchObject({
      kind: 'error',
      code: -32602,
    });
    // An internal error may come after the tool wrote: unknown, never "not applied".
    expect(toolCallFailure(new ProtocolError(-32603, 'Internal error'))).toEqual({
      kind: 'no_response',
      reason: 'lost',
    });
    expect(toolCallFailure(new SdkError(SdkErrorCode.RequestTimeout, 'timed out'))).toEqual({
      kind: 'no_response',
      reason: 'timeout',
    });
    expect(toolCallFailure(new SdkError(SdkErrorCode.ConnectionClosed, 'closed'))).toEqual({
      kind: 'no_response',
      reason: 'lost',
    });
    expect(toolCallFailure(new Error('boom'))).toEqual({ kind: 'no_response', reason: 'lost' });
  });
});
