/**
 * What the host's functions return (execute, verify, compensate) is untrusted: this module turns
 * any returned value — a wrong shape, hostile getters, lone surrogates, huge or private text —
 * into one the guard can always record: bounded, JSON-safe and free of private text. None of
 * these functions throws, so a host value can never stop the guard from recording an outcome
 * it has already caused.
 */
import type { CompensateResult, ExecuteResult, VerifyResult } from '../action.js';
import { canonicalize, type JsonValue } from '../canonical-json.js';
import type { KeyRing } from '../key-ring.js';
import type { Receipt } from '../store.js';
import { readField, reasonCodeOf } from './host-text.js';

export { errorTag, shortText } from './host-text.js';

/** The largest private output (canonical JSON bytes) the guard keeps for an effect. */
export const MAX_OUTPUT_BYTES = 256 * 1024;

/** The most steps one partial result may report; more makes the outcome unknown (verified). */
export const MAX_EXECUTION_ITEMS = 64;

/** The largest receipt `details` (canonical JSON characters) kept; larger details are dropped. */
const MAX_RECEIPT_DETAILS_CHARS = 4_096;

/** Receipt ids: printable and well-formed, 1 to 256 code points. */
const RECEIPT_ID = /^[^\p{Cc}\p{Cs}]{1,256}$/u;

/** Provider names: a short ASCII code. */
const PROVIDER_NAME = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$/;

/**
 * Keeps a receipt to non-private, bounded, JSON-safe fields, or undefined when its id or
 * provider is unusable (then the write it stands for is verified instead of trusted).
 */
export function cleanReceipt(receipt: unknown): Receipt | undefined {
  const id = readField(receipt, 'id');
  const provider = readField(receipt, 'provider');
  if (typeof id !== 'string' || !RECEIPT_ID.test(id)) return undefined;
  if (typeof provider !== 'string' || !PROVIDER_NAME.test(provider)) return undefined;
  const details = readField(receipt, 'details');
  if (typeof details !== 'object' || details === null || Array.isArray(details)) {
    return { id, provider };
  }
  try {
    const json = canonicalize(details);
    if (json.length > MAX_RECEIPT_DETAILS_CHARS) return { id, provider };
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

type Item = Extract<ExecuteResult, { kind: 'partial' }>['items'][number];

/** The reason of a step the host reported committed whose receipt the guard cannot record. */
export const STEP_RECEIPT_INVALID = 'step_receipt_invalid';

/**
 * One reported step, normalised; a committed step without a usable receipt becomes unknown, with
 * the reason {@link STEP_RECEIPT_INVALID}.
 */
function normaliseItem(keyRing: KeyRing, item: unknown): Item {
  const receipt = cleanReceipt(readField(item, 'receipt'));
  const reported = readField(item, 'outcome');
  const outcome = reported === 'committed' || reported === 'failed' ? reported : 'unknown';
  const reason = readField(item, 'reason');
  const unrecordable = outcome === 'committed' && receipt === undefined;
  return {
    step: reasonCodeOf(keyRing, readField(item, 'step') ?? 'step', 'step_not_a_code'),
    outcome: unrecordable ? 'unknown' : outcome,
    ...(receipt ? { receipt } : {}),
    ...(unrecordable
      ? { reason: STEP_RECEIPT_INVALID }
      : reason === undefined || reason === null || reason === ''
        ? {}
        : { reason: reasonCodeOf(keyRing, reason, 'reason_not_a_code') }),
  };
}

/** The reported steps, or undefined when they are not a usable list. */
function normaliseItems(keyRing: KeyRing, items: unknown): Item[] | undefined {
  try {
    if (!Array.isArray(items) || items.length === 0 || items.length > MAX_EXECUTION_ITEMS) {
      return undefined;
    }
    return Array.from(items, (item) => normaliseItem(keyRing, item));
  } catch {
    return undefined;
  }
}

/** Turns whatever `execute` returned into a result the guard can record. Never throws. */
export function normaliseExecuteResult(keyRing: KeyRing, value: unknown): NormalisedExecuteResult {
  const kind = readField(value, 'kind');
  switch (kind) {
    case 'accepted': {
      const receipt = cleanReceipt(readField(value, 'receipt'));
      return receipt
        ? { kind: 'accepted', receipt, output: checkOutput(readField(value, 'output')) }
        : { kind: 'failed_unknown', reason: 'executor_receipt_invalid' };
    }
    case 'failed_known':
    case 'failed_unknown':
      return {
        kind,
        reason: reasonCodeOf(keyRing, readField(value, 'reason'), 'reason_not_a_code'),
      };
    case 'partial': {
      const items = normaliseItems(keyRing, readField(value, 'items'));
      return items === undefined
        ? { kind: 'failed_unknown', reason: 'executor_items_invalid' }
        : { kind: 'partial', items };
    }
    default:
      return { kind: 'failed_unknown', reason: 'executor_result_invalid' };
  }
}

/** A normalised verifier result; `present` carries its checked private output. */
export type NormalisedVerifyResult =
  | Exclude<VerifyResult, { kind: 'present' }>
  | { readonly kind: 'present'; readonly receipt: Receipt; readonly output: CheckedOutput };

/** Turns whatever `verify` returned into a result the guard can record. Never throws. */
export function normaliseVerifyResult(keyRing: KeyRing, value: unknown): NormalisedVerifyResult {
  const kind = readField(value, 'kind');
  if (kind === 'present') {
    const receipt = cleanReceipt(readField(value, 'receipt'));
    return receipt
      ? { kind: 'present', receipt, output: checkOutput(readField(value, 'output')) }
      : { kind: 'unknown', reason: 'verifier_receipt_invalid' };
  }
  if (kind === 'absent') return { kind: 'absent', final: readField(value, 'final') === true };
  if (kind !== 'unknown') return { kind: 'unknown', reason: 'verifier_result_invalid' };
  const reason = readField(value, 'reason');
  return {
    kind: 'unknown',
    reason: reason === undefined ? 'unknown' : reasonCodeOf(keyRing, reason, 'reason_not_a_code'),
  };
}

/** What a compensator reported, normalised. Never throws. */
export function normaliseCompensateResult(keyRing: KeyRing, value: unknown): CompensateResult {
  if (readField(value, 'kind') === 'compensated') {
    const receipt = cleanReceipt(readField(value, 'receipt'));
    if (receipt) return { kind: 'compensated', receipt };
    return { kind: 'failed', reason: 'compensation_receipt_invalid' };
  }
  if (readField(value, 'kind') !== 'failed') {
    return { kind: 'failed', reason: 'compensation_result_invalid' };
  }
  return {
    kind: 'failed',
    reason: reasonCodeOf(keyRing, readField(value, 'reason'), 'reason_not_a_code'),
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
