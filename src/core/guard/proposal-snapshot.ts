/**
 * The keyed parts of a proposal: its semantic effect key, the provider idempotency key, the
 * commitment over what was proposed, and the encrypted snapshot (input, facts, preview) and
 * output, opened only after the commitment checks out.
 */
import type { ActionDefinition, ActionInput, ProposalContext } from '../action.js';
import { type CanonicalText, encodeCanonical, type JsonValue } from '../canonical-json.js';
import {
  type Commitment,
  computeCommitment,
  keyedDigest,
  sha256Hex,
  verifyCommitment,
} from '../commitment.js';
import { openEnvelope, type SealedEnvelope, sealEnvelope } from '../envelope.js';
import { StoreInvariantError } from '../errors.js';
import { KeyPurpose } from '../key-ring.js';
import type { ProposalRecord } from '../store.js';
import type { GuardContext } from './guard-context.js';

/** The semantic effect key: a keyed digest of the tenant, action type and protected fields. */
export function effectKeyOf(
  context: GuardContext,
  tenant: string,
  action: ActionDefinition,
  input: Record<string, unknown>,
): string {
  const fields: Record<string, unknown> = {};
  for (const field of action.protectedFields) {
    if (input[field] !== undefined) fields[field] = input[field];
  }
  const digest = keyedDigest(
    context.keyRing,
    KeyPurpose.effect,
    context.keyRing.effectKey,
    'sideguard/semantic-effect/v1',
    { tenant, actionType: action.typeName, fields: fields as JsonValue },
  );
  return `sek_${digest}`;
}

/**
 * What the ledger's `policy_decided` event says about the facts: a keyed digest (purpose
 * `facts`, the current key, named in `factsDigestKey`) over the tenant, the proposal and the
 * facts, so a reader of the ledger cannot recover small facts by guessing, equal facts of two
 * proposals do not link them, and an auditor holding the key can check given facts.
 */
export function factsDigestData(
  context: GuardContext,
  tenant: string,
  proposal: string,
  facts: JsonValue,
): { readonly factsDigest: string; readonly factsDigestKey: string } {
  const key = context.keyRing.current;
  return {
    factsDigest: keyedDigest(context.keyRing, KeyPurpose.facts, key, 'sideguard/policy-facts/v1', {
      tenant,
      proposal,
      facts,
    }),
    factsDigestKey: `${key.handle}:${key.version}`,
  };
}

/** The last provider key made, by its hashed text: an action asks for it three times. */
let lastProviderKey = { text: '', key: '' };

/** Stable across retries and restarts; new only per allowed resend (I5). */
export function providerKeyOf(record: ProposalRecord, label = 'execute'): string {
  const text = `sideguard/provider-idempotency-key/v1\u0000${label}\u0000${record.effectScope}\u0000${record.resendGeneration}`;
  if (text !== lastProviderKey.text) {
    lastProviderKey = { text, key: `sg-${sha256Hex(text).slice(0, 48)}` };
  }
  return lastProviderKey.key;
}

/** The associated data that ties a snapshot to its tenant and proposal. */
export const snapshotAad = (tenant: string, proposal: string): string =>
  `sideguard/snapshot/v1\u0000${tenant}\u0000${proposal}`;

const outputAad = (record: ProposalRecord): string =>
  `sideguard/output/v1\u0000${record.tenant}\u0000${record.proposal}`;

/** What the proposal commitment covers (the input as a value, or encoded once before). */
export function commitmentPayload(
  record: Pick<
    ProposalRecord,
    | 'tenant'
    | 'proposal'
    | 'actionType'
    | 'semanticEffectKey'
    | 'principal'
    | 'agent'
    | 'expiresAtMs'
  >,
  input: JsonValue | CanonicalText,
  facts: JsonValue,
): Record<string, JsonValue | CanonicalText> {
  return {
    tenant: record.tenant,
    proposal: record.proposal,
    actionType: record.actionType,
    semanticEffectKey: record.semanticEffectKey,
    principal: record.principal,
    agent: record.agent,
    expiresAtMs: record.expiresAtMs,
    input,
    facts,
  };
}

/**
 * Seals a proposal's snapshot (input, facts, preview) and remembers its plaintext for this
 * guard, so executing a record it sealed itself needs no decryption (see {@link openSnapshot}).
 */
export function sealSnapshot(
  context: GuardContext,
  tenant: string,
  proposal: string,
  body: Record<string, JsonValue | CanonicalText>,
): SealedEnvelope {
  const plaintext = encodeCanonical(body);
  const envelope = sealEnvelope(
    context.keyRing,
    plaintext,
    snapshotAad(tenant, proposal),
    context.randomBytes,
  );
  context.snapshotPlaintexts.set(envelope, plaintext.text);
  return envelope;
}

type SnapshotBody = { input?: JsonValue; preview?: JsonValue; facts?: JsonValue };

/**
 * Drops the plaintext {@link sealSnapshot} remembered for `record`'s snapshot, once its claim is
 * committed: the executor has its input, and what opens the snapshot later (verification,
 * compensation, `read`) is rare enough to decrypt and check it. Otherwise the plaintext of every
 * proposal lived as long as its record — in the memory store, as long as the process (I8, and
 * about a twentieth of the memory an action retained).
 */
export function forgetSnapshotPlaintext(context: GuardContext, record: ProposalRecord): void {
  if (record.snapshot !== null) context.snapshotPlaintexts.delete(record.snapshot);
}

/**
 * Decrypts the snapshot and checks it still matches the commitment (execution boundary). A
 * record this guard sealed and the store handed back by identity (deep-frozen, so unchanged
 * since) is read from the plaintext it was sealed from: decrypting it and recomputing its
 * commitment could only find what the guard itself wrote. Every other record — any row a
 * durable store decoded, any copy — is decrypted and checked. `builtInThisCall` says the caller
 * built `record` itself a moment ago and it never went through a store (`run`'s insert with its
 * claim, decision 124): it is opened from its plaintext the same way.
 */
export function openSnapshot<A extends ActionDefinition>(
  context: GuardContext,
  action: A,
  record: ProposalRecord,
  builtInThisCall = false,
): { input: ActionInput<A>; preview: JsonValue | undefined; facts: JsonValue } {
  if (record.snapshot === null) {
    throw new StoreInvariantError(
      'snapshot_missing',
      `Proposal ${record.proposal} has no snapshot (erased?) and cannot be used`,
    );
  }
  const known =
    builtInThisCall || context.store.sealedHere(record)
      ? context.snapshotPlaintexts.get(record.snapshot)
      : undefined;
  const body =
    known === undefined
      ? openAndCheck(context, record, record.snapshot)
      : (JSON.parse(known) as SnapshotBody);
  const parsed = action.schema.safeParse(body.input);
  if (!parsed.success) {
    throw new StoreInvariantError(
      'snapshot_contract_mismatch',
      `Proposal ${record.proposal} no longer satisfies ${action.typeName}'s contract`,
    );
  }
  return {
    input: parsed.data as ActionInput<A>,
    preview: body.preview,
    facts: body.facts ?? null,
  };
}

/** Decrypts a snapshot and checks it against the record's commitment. */
function openAndCheck(
  context: GuardContext,
  record: ProposalRecord,
  snapshot: SealedEnvelope,
): SnapshotBody {
  const body = openEnvelope(
    context.keyRing,
    snapshot,
    snapshotAad(record.tenant, record.proposal),
  ) as SnapshotBody;
  if (
    body.input === undefined ||
    (!context.broken('commitment_check_skipped') &&
      !verifyCommitment(
        context.keyRing,
        'sideguard/proposal/v1',
        commitmentPayload(record, body.input, body.facts ?? null),
        record.commitment,
      ))
  ) {
    throw new StoreInvariantError(
      'commitment_mismatch',
      `Refused to use proposal ${record.proposal}: its stored snapshot does not match its commitment (the store was altered)`,
    );
  }
  return body;
}

/** Encrypts the private output of the write (e.g. the provider's response) for this record. */
export function sealOutput(
  context: GuardContext,
  record: ProposalRecord,
  output: JsonValue,
): SealedEnvelope {
  return sealEnvelope(context.keyRing, { output }, outputAad(record), context.randomBytes);
}

/** The private output kept with the record, or undefined if none was kept (or it was erased). */
export function openOutput(context: GuardContext, record: ProposalRecord): JsonValue | undefined {
  if (record.output === undefined || record.output === null) return undefined;
  const opened = openEnvelope(context.keyRing, record.output, outputAad(record)) as {
    output?: JsonValue;
  };
  return opened.output;
}

/** What `execute`, `verify`, `resolve` and `compensate` are told about the proposal. */
export const contextOf = (record: ProposalRecord): ProposalContext => ({
  tenant: record.tenant,
  proposal: record.proposal,
  semanticEffectKey: record.semanticEffectKey,
  providerIdempotencyKey: providerKeyOf(record),
  resendGeneration: record.resendGeneration,
});

/** The `output` part of a result about this record (empty when none was kept). */
export function outputPart(
  context: GuardContext,
  record: ProposalRecord,
): { readonly output?: JsonValue } {
  const output = openOutput(context, record);
  return output === undefined ? {} : { output };
}

/**
 * The commitment over the input and facts about to be executed, computed afresh (not read from
 * the record), so the ledger shows what ran: it equals the proposal's commitment unless the
 * snapshot was changed behind the guard's back.
 */
export function executedCommitment(
  context: GuardContext,
  record: ProposalRecord,
  input: unknown,
  facts: JsonValue,
): Commitment {
  return computeCommitment(
    context.keyRing,
    'sideguard/proposal/v1',
    commitmentPayload(record, encodeCanonical(input), facts),
  );
}

/** A commitment as ledger event data (it is keyed, so it reveals nothing of the input). */
export const commitmentData = (commitment: Commitment): JsonValue => ({
  algorithm: commitment.algorithm,
  keyHandle: commitment.keyHandle,
  keyVersion: commitment.keyVersion,
  value: commitment.value,
});
