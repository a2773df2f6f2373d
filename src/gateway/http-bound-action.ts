/**
 * Turns an HTTP write binding into an executable action: the declared action's contract, policy
 * and approval rule, with an executor that sends the binding's request once through the gateway's
 * transport (provider idempotency key in the configured header) and a verifier that asks the
 * upstream. The upstream's answer is kept as the guard's private output.
 */
import {
  type ActionDefinition,
  defineAction,
  type ExecuteResult,
  type VerifyResult,
} from '../core/action.js';
import type { Receipt } from '../core/store.js';
import type {
  BindingVerifyContext,
  HttpWriteBindingConfig,
  UpstreamClient,
  UpstreamReply,
  UpstreamRequestSpec,
  UpstreamResponse,
} from './config-types.js';
import type { ExecutionCapture } from './execution-capture.js';
import type { CompiledHttpBinding } from './gateway-table.js';
import { responseOutput } from './recorded-response.js';
import { rawRequestOf, type UpstreamTransport } from './upstream-transport.js';

/** What the bound executor needs. */
export interface HttpBindingRuntime {
  readonly transport: UpstreamTransport;
  /** Header for the provider idempotency key, or null. */
  readonly idempotencyHeader: string | null;
  readonly capture: ExecutionCapture;
}

const ID = /^[A-Za-z0-9_.:-]{1,200}$/;

function defaultReceipt(response: UpstreamResponse, provider: string): Receipt | undefined {
  const body = response.json() as { id?: unknown } | undefined;
  return typeof body?.id === 'string' && ID.test(body.id) ? { id: body.id, provider } : undefined;
}

/**
 * Maps one reply to what the guard records. 2xx: accepted. 409 (the same key in flight), 5xx, a
 * timeout or a lost connection: unknown (the guard verifies). Any other 4xx, or a connection
 * refused before sending: certainly not applied.
 */
export function executeResultOf(
  reply: UpstreamReply,
  receiptOf: (response: UpstreamResponse) => Receipt | undefined,
  fallbackReceipt: Receipt,
): ExecuteResult {
  if (reply.kind === 'no_response') {
    if (reply.reason === 'not_sent')
      return { kind: 'failed_known', reason: 'upstream_unreachable' };
    return {
      kind: 'failed_unknown',
      reason: reply.reason === 'timeout' ? 'upstream_timeout' : 'upstream_response_lost',
    };
  }
  if (reply.status >= 200 && reply.status < 300) {
    let receipt: Receipt | undefined;
    try {
      receipt = receiptOf(reply);
    } catch {
      receipt = undefined;
    }
    const output = responseOutput(reply);
    return {
      kind: 'accepted',
      receipt: receipt ?? fallbackReceipt,
      ...(output === undefined ? {} : { output }),
    };
  }
  if (reply.status === 409 || reply.status >= 500) {
    return { kind: 'failed_unknown', reason: `http_${reply.status}` };
  }
  return { kind: 'failed_known', reason: `http_${reply.status}` };
}

/** A client for bindings' verifiers: the same transport, credentials and deadline. */
export function upstreamClientOf(transport: UpstreamTransport): UpstreamClient {
  return { request: (spec) => transport.send(rawRequestOf(spec)) };
}

/** The executable action of an HTTP write binding. */
export function bindHttpWrite(
  binding: CompiledHttpBinding,
  runtime: HttpBindingRuntime,
): ActionDefinition {
  const declared = binding.action;
  const config = binding.config as HttpWriteBindingConfig;
  if (declared === undefined) throw new TypeError(`binding ${binding.name} has no action`);
  const toRequest = config.toRequest as (input: unknown, context: unknown) => UpstreamRequestSpec;
  const receiptOf = (response: UpstreamResponse) =>
    config.receipt === undefined
      ? defaultReceipt(response, binding.upstream)
      : config.receipt(response);
  const client = upstreamClientOf(runtime.transport);
  const verify = config.verify as
    | ((input: unknown, context: BindingVerifyContext) => Promise<VerifyResult>)
    | undefined;
  return defineAction({
    ...declared.config,
    execute: async (input, context) => {
      let request: ReturnType<typeof rawRequestOf>;
      try {
        const spec = toRequest(input, context);
        request = rawRequestOf({ ...spec, method: spec.method ?? binding.pattern.method });
      } catch {
        // Nothing was sent: the binding could not build the request from the committed input.
        return { kind: 'failed_known', reason: 'binding_request_failed' };
      }
      const headers: Record<string, string> = { ...request.headers };
      if (runtime.idempotencyHeader !== null) {
        headers[runtime.idempotencyHeader.toLowerCase()] = context.providerIdempotencyKey;
      }
      const reply = await runtime.transport.send({ ...request, headers });
      runtime.capture.record(context.proposal, {
        output: reply.kind === 'response' ? responseOutput(reply) : undefined,
      });
      return executeResultOf(reply, receiptOf, {
        id: context.providerIdempotencyKey,
        provider: binding.upstream,
      });
    },
    verify:
      verify === undefined
        ? declared.config.verify
        : (input, context) => verify(input, { ...context, upstream: client }),
  });
}
