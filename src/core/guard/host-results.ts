/**
 * What the host's functions return (execute, verify, compensate) is untrusted: this module turns
 * any returned value into one the guard can always record — bounded, JSON-safe and free of
 * private text — so a host value can never stop the guard from recording an outcome.
 */
import type { ExecuteResult, VerifyResult } from '../action.js';
import { canonicalize, type JsonValue } from '../canonical-json.js';
import type { Receipt } from '../store.js';

/** The largest private output (canonical JSON bytes) the guard keeps for an effect. */
export const MAX_OUTPUT_BYTES = 256 * 1024;

/** Cuts text to `max` characters for messages and reason codes. */
export const shortText = (value: string, max = 200): string =>
  value.length > max ? `${value.slice(0, max)}…` : value;

/**
 * A ledger-safe tag for a thrown error: its `code` (e.g. `ECONNRESET`) or class name, never its
 * message, which may quote provider text about a customer (I8).
 */
export function errorTag(error: unknown): string {
  const { code, name } = (typeof error === 'object' && error !== null ? error : {}) as {
    code?: unknown;
    name?: unknown;
  };
  const tag = [code, name].find(
    (value): value is string => typeof value === 'string' && /^[A-Za-z0-9_.-]{1,48}$/.test(value),
  );
  return tag === undefined ? '' : `:${tag}`;
}

/** Keeps receipts to non-private, bounded, JSON-safe fields. */
export function cleanReceipt(receipt: unknown): Receipt | undefined {
  if (typeof receipt !== 'object' || receipt === null) return undefined;
  const { id, provider, details } = receipt as Record<string, unknown>;
  if (typeof id !== 'string' || id === '' || id.length > 256) return undefined;
  if (typeof provider !== 'string' || provider === '' || provider.length > 64) return undefined;
  if (details === undefined) return { id, provider };
  try {
    const json = canonicalize(details);
    if (json.length > 4096 || typeof details !== 'object' || Array.isArray(details)) {
      return { id, provider };
    }
    return { id, provider, details: JSON.parse(json) as Record<string, JsonValue> };
  } catch {
    return { id, provider };
  }
}

/** A receipt as ledger event data. */
export const receiptData = (receipt: Receipt): JsonValue => ({
  id: receipt.id,
  provider: receipt.provider,
  ...(receipt.details === undefined ? {} : { details: receipt.details }),
});

/** Adds a receipt unless the same provider id is already recorded. */
export const addReceipt = (receipts: readonly Receipt[], receipt: Receipt): Receipt[] =>
  receipts.some((r) => r.id === receipt.id && r.provider === receipt.provider)
    ? [...receipts]
    : [...receipts, receipt];

/** A private output the host returned, checked; `problem` says why it was not kept. */
export type CheckedOutput =
  | { readonly kind: 'none' }
  | { readonly kind: 'kept'; readonly output: JsonValue }
  | { readonly kind: 'refused'; readonly problem: 'output_not_canonical' | 'output_too_large' };

/** Checks an executor's or verifier's private output (canonical JSON, bounded size). */
export function checkOutput(output: unknown): CheckedOutput {
  if (output === undefined) return { kind: 'none' };
  let json: string;
  try {
    json = canonicalize(output);
  } catch {
    return { kind: 'refused', problem: 'output_not_canonical' };
  }
  if (new TextEncoder().encode(json).byteLength > MAX_OUTPUT_BYTES) {
    return { kind: 'refused', problem: 'output_too_large' };
  }
  return { kind: 'kept', output: JSON.parse(json) as JsonValue };
}

/** A normalised executor result; `accepted` carries its checked private output. */
export type NormalisedExecuteResult =
  | Exclude<ExecuteResult, { kind: 'accepted' }>
  | { readonly kind: 'accepted'; readonly receipt: Receipt; readonly output: CheckedOutput };

/** Turns whatever `execute` returned into a result the guard can record. */
export function normaliseExecuteResult(value: unknown): NormalisedExecuteResult {
  const result = value as ExecuteResult | undefined;
  switch (result?.kind) {
    case 'accepted': {
      const receipt = cleanReceipt(result.receipt);
      return receipt
        ? { kind: 'accepted', receipt, output: checkOutput(result.output) }
        : { kind: 'failed_unknown', reason: 'executor_receipt_invalid' };
    }
    case 'failed_known':
    case 'failed_unknown':
      return {
        kind: result.kind,
        reason: shortText(String(result.reason ?? 'unspecified'), 120),
      };
    case 'partial':
      if (Array.isArray(result.items) && result.items.length > 0) {
        return {
          kind: 'partial',
          items: result.items.map((item) => {
            const receipt = cleanReceipt(item?.receipt);
            const outcome =
              item?.outcome === 'committed' || item?.outcome === 'failed'
                ? item.outcome
                : 'unknown';
            return {
              step: shortText(String(item?.step ?? 'step'), 64),
              outcome: outcome === 'committed' && receipt === undefined ? 'unknown' : outcome,
              ...(receipt ? { receipt } : {}),
              ...(item?.reason ? { reason: shortText(String(item.reason), 120) } : {}),
            };
          }),
        };
      }
      return { kind: 'failed_unknown', reason: 'executor_result_invalid' };
    default:
      return { kind: 'failed_unknown', reason: 'executor_result_invalid' };
  }
}

/** A normalised verifier result; `present` carries its checked private output. */
export type NormalisedVerifyResult =
  | Exclude<VerifyResult, { kind: 'present' }>
  | { readonly kind: 'present'; readonly receipt: Receipt; readonly output: CheckedOutput };

/** Turns whatever `verify` returned into a result the guard can record. */
export function normaliseVerifyResult(value: unknown): NormalisedVerifyResult {
  const result = value as VerifyResult | undefined;
  if (result?.kind === 'present') {
    const receipt = cleanReceipt(result.receipt);
    return receipt
      ? { kind: 'present', receipt, output: checkOutput(result.output) }
      : { kind: 'unknown', reason: 'verifier_receipt_invalid' };
  }
  if (result?.kind === 'absent') return { kind: 'absent', final: result.final === true };
  return {
    kind: 'unknown',
    reason: shortText(String((result as { reason?: unknown })?.reason ?? 'unknown'), 120),
  };
}

/** A verification result as ledger event data. */
export function verificationData(
  result: NormalisedVerifyResult,
  attempt: number,
): Record<string, JsonValue> {
  switch (result.kind) {
    case 'present':
      return { result: 'present', attempt, receipt: receiptData(result.receipt) };
    case 'absent':
      return { result: 'absent', final: result.final, attempt };
    case 'unknown':
      return { result: 'unknown', attempt, reasonCode: result.reason ?? 'unknown' };
  }
}
