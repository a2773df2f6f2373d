/**
 * Executing an operation at the commit point: the provider's rules run against state, and a
 * write — its changes, its receipt and the saved idempotent response — commits in one journal
 * line before anyone is answered.
 */
import { type IdempotencyScope, savedResponseChange } from './data-plane-idempotency.js';
import { RequestPhase, WriteOutcome } from './observations.js';
import type { RequestExchange } from './request-exchange.js';
import type { SandboxRuntime } from './sandbox-runtime.js';
import type {
  ExecuteContext,
  OperationDefinition,
  ProviderDefinition,
  ProviderRequest,
  ProviderResponse,
} from './sandbox-types.js';
import { hashToken } from './seeded-random.js';
import type { SandboxReceipt } from './state-store.js';

/**
 * Runs `operation` and commits what it wrote; returns the answer to send. A failure to persist
 * answers the provider's 500 and marks the write outcome `unknown`.
 */
export async function executeAndCommit(
  runtime: SandboxRuntime,
  exchange: RequestExchange,
  provider: ProviderDefinition,
  operation: OperationDefinition,
  input: unknown,
  request: ProviderRequest,
  scope: IdempotencyScope | undefined,
): Promise<ProviderResponse> {
  exchange.phase = RequestPhase.committing;
  const result = operation.execute(input, executeContext(runtime), request);
  const changes = [...(result.write?.changes ?? [])];
  if (scope !== undefined) {
    // Execution began, so the response is saved, errors included (Stripe's rule).
    const finalAnswer = provider.finalize?.(result.response, exchange.requestId) ?? result.response;
    changes.push(
      savedResponseChange(provider, scope, finalAnswer, exchange.requestId, exchange.receivedAt),
    );
  }
  if (changes.length === 0) return result.response;
  const observation = exchange.observation;
  const draft = result.write?.receipt;
  const receipt: SandboxReceipt | undefined =
    draft === undefined
      ? undefined
      : {
          receiptId: runtime.store.nextReceiptId(),
          provider: provider.name,
          operation: operation.name,
          objectId: draft.objectId,
          effectKey: observation.effectKey,
          ...(draft.amountMinor === undefined ? {} : { amountMinor: draft.amountMinor }),
          ...(draft.currency === undefined ? {} : { currency: draft.currency }),
          ...(draft.details === undefined ? {} : { details: draft.details }),
          idempotencyKey: observation.idempotencyKey,
          requestId: exchange.requestId,
          committedAt: new Date(runtime.config.nowMs()).toISOString(),
        };
  try {
    await runtime.store.commit(changes, receipt);
    if (receipt !== undefined) {
      observation.writeOutcome = WriteOutcome.committed;
      observation.receiptId = receipt.receiptId;
    }
    return result.response;
  } catch (error) {
    observation.writeOutcome = WriteOutcome.unknown;
    process.stderr.write(
      `sideguard sandbox: failed to persist a write: ${error instanceof Error ? error.message : String(error)}\n`,
    );
    return provider.errors.internal(500);
  }
}

function executeContext(runtime: SandboxRuntime): ExecuteContext {
  return {
    get: (provider, collection, id) => runtime.store.get(provider, collection, id),
    list: (provider, collection) => runtime.store.list(provider, collection),
    newId: (prefix) =>
      `${prefix}_${hashToken(24, runtime.seed, prefix, runtime.store.nextIdSequence())}`,
    nowMs: runtime.config.nowMs,
  };
}
