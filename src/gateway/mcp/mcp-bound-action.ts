/**
 * Turns an MCP tool write binding into an executable action: the declared action's contract,
 * policy and approval rule, with an executor that checks the upstream tool still has the pinned
 * definition and then calls it once through the gateway's connection, and a verifier that can
 * ask the upstream through its tools. The tool's answer is kept as the guard's private output.
 */
import {
  type ActionDefinition,
  defineAction,
  type ExecuteContext,
  type ExecuteResult,
  type VerifyResult,
} from '../../core/action.js';
import type { Receipt } from '../../core/store.js';
import type {
  McpBindingVerifyContext,
  McpToolBindingConfig,
  UpstreamToolCaller,
  UpstreamToolReply,
  UpstreamToolResult,
} from '../config-types.js';
import type { ExecutionCapture } from '../execution-capture.js';
import type { CompiledToolBinding } from '../gateway-table.js';
import { toolResultOutput } from './mcp-result-output.js';
import type { McpUpstreamPool } from './mcp-upstream-pool.js';

/** What the bound executor needs. */
export interface McpBindingRuntime {
  readonly pool: McpUpstreamPool;
  readonly capture: ExecutionCapture;
}

/**
 * Maps one tool reply to what the guard records. A result: accepted. An `isError` result:
 * unknown unless the binding declares tool errors `not_applied`. A JSON-RPC refusal (bad
 * params, unknown method) or a server that could not be reached: certainly not applied. A
 * timeout or a lost connection: unknown — the guard verifies and never resends blindly.
 */
export function toolExecuteResult(
  reply: UpstreamToolReply,
  receipt: Receipt,
  toolErrors: 'unknown' | 'not_applied',
): ExecuteResult {
  switch (reply.kind) {
    case 'result': {
      if (reply.isError === true) {
        return toolErrors === 'not_applied'
          ? { kind: 'failed_known', reason: 'upstream_tool_error' }
          : { kind: 'failed_unknown', reason: 'upstream_tool_error' };
      }
      const output = toolResultOutput(reply);
      return { kind: 'accepted', receipt, ...(output === undefined ? {} : { output }) };
    }
    case 'error':
      return { kind: 'failed_known', reason: 'upstream_refused_call' };
    case 'no_response':
      if (reply.reason === 'not_sent')
        return { kind: 'failed_known', reason: 'upstream_unreachable' };
      return {
        kind: 'failed_unknown',
        reason: reply.reason === 'timeout' ? 'upstream_timeout' : 'upstream_response_lost',
      };
  }
}

/** Why a pinned tool cannot be called right now, or `undefined` when it can. */
async function pinProblem(
  binding: CompiledToolBinding,
  pool: McpUpstreamPool,
): Promise<string | undefined> {
  const current = await pool.currentTool(binding.upstream, binding.tool);
  if (current.kind === 'unavailable') return 'upstream_unreachable';
  if (current.kind === 'missing') return 'upstream_tool_missing';
  return current.digest === binding.toolDigest ? undefined : 'upstream_tool_changed';
}

/** Calls the upstream's tools for verifiers (the same connection, timeout and no retries). */
export function upstreamToolCaller(pool: McpUpstreamPool, upstream: string): UpstreamToolCaller {
  return {
    callTool: async (name, args) => {
      const connection = pool.connection(upstream);
      if (connection === undefined) return { kind: 'no_response', reason: 'not_sent' };
      return connection.callTool(name, args);
    },
  };
}

function receiptOf(
  config: McpToolBindingConfig,
  result: UpstreamToolResult,
  fallback: Receipt,
): Receipt {
  try {
    return config.receipt?.(result) ?? fallback;
  } catch {
    return fallback;
  }
}

/** The executable action of an MCP tool write binding. */
export function bindMcpToolWrite(
  binding: CompiledToolBinding,
  runtime: McpBindingRuntime,
): ActionDefinition {
  const declared = binding.action;
  if (declared === undefined) throw new TypeError(`binding ${binding.name} has no action`);
  const config = binding.config;
  const toArguments = (config.toArguments ?? ((input: unknown) => input)) as (
    input: unknown,
    context: ExecuteContext,
  ) => Readonly<Record<string, unknown>>;
  const caller = upstreamToolCaller(runtime.pool, binding.upstream);
  const verify = config.verify as
    | ((input: unknown, context: McpBindingVerifyContext) => Promise<VerifyResult>)
    | undefined;
  return defineAction({
    ...declared.config,
    execute: async (input, context) => {
      let args: Readonly<Record<string, unknown>>;
      try {
        args = toArguments(input, context);
        if (typeof args !== 'object' || args === null || Array.isArray(args)) {
          return { kind: 'failed_known', reason: 'binding_arguments_failed' };
        }
      } catch {
        // Nothing was sent: the binding could not build the arguments from the committed input.
        return { kind: 'failed_known', reason: 'binding_arguments_failed' };
      }
      // The call may run long after the agent's request (after an approval): check the pin again.
      const problem = await pinProblem(binding, runtime.pool);
      if (problem !== undefined) return { kind: 'failed_known', reason: problem };
      const reply = await caller.callTool(binding.tool, args);
      runtime.capture.record(context.proposal, {
        output: reply.kind === 'result' ? toolResultOutput(reply) : undefined,
      });
      const fallback = { id: context.providerIdempotencyKey, provider: binding.upstream };
      const receipt = reply.kind === 'result' ? receiptOf(config, reply, fallback) : fallback;
      return toolExecuteResult(reply, receipt, config.toolErrors ?? 'unknown');
    },
    verify:
      verify === undefined
        ? declared.config.verify
        : (input, context) => verify(input, { ...context, upstream: caller }),
  });
}
