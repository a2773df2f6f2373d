/**
 * For erasure tests: sealed-looking snapshots with random bytes, the byte strings to search a
 * database file for (the ciphertext and the wrapped data key, as stored (base64url) and raw),
 * and the erasure itself as the guard commits it.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { expect } from 'vitest';
import type { SealedEnvelope } from '../../src/core/envelope.js';
import type { GuardStore, ProposalRecord } from '../../src/core/store.js';
import { sampleDraft, sampleProposal } from './store-records.js';

/** An envelope whose fields are random (a `ciphertextBytes`-long ciphertext). */
export function randomEnvelope(ciphertextBytes = 96): SealedEnvelope {
  const field = (size: number) => randomBytes(size).toString('base64url');
  return {
    v: 1,
    alg: 'A256GCM',
    kek: { handle: 'erasure-test', version: 1 },
    wrappedKey: field(60),
    iv: field(12),
    ciphertext: field(ciphertextBytes),
    tag: field(16),
  };
}

/** What must not survive an erasure of `envelope`: its key and ciphertext, text and raw. */
export function needles(envelope: SealedEnvelope): Buffer[] {
  const probe = (text: string) => {
    // A long value is split across pages (SQLite overflow pages, PostgreSQL TOAST chunks), so
    // 40-character pieces from its start, middle and end are searched as well as the whole.
    const middle = Math.max(0, Math.floor(text.length / 2) - 20);
    return [
      Buffer.from(text, 'latin1'),
      Buffer.from(text.slice(0, 40), 'latin1'),
      Buffer.from(text.slice(middle, middle + 40), 'latin1'),
      Buffer.from(text.slice(-40), 'latin1'),
      Buffer.from(text, 'base64url').subarray(0, 32),
    ];
  };
  return [...probe(envelope.wrappedKey), ...probe(envelope.ciphertext)];
}

/** The needles of every sealed part of `record` (its snapshot and its output, if any). */
export function recordNeedles(record: ProposalRecord): Buffer[] {
  return [record.snapshot, record.output].flatMap((envelope) =>
    envelope === null || envelope === undefined ? [] : needles(envelope),
  );
}

/** The needles found in `bytes` (none, after a complete erasure). */
export function found(bytes: Buffer, searched: readonly Buffer[]): Buffer[] {
  return searched.filter((needle) => bytes.includes(needle));
}

/** The needles found in the files at `paths` (missing files hold nothing). */
export function foundInFiles(paths: readonly string[], searched: readonly Buffer[]): string[] {
  return paths.flatMap((path) =>
    existsSync(path)
      ? found(readFileSync(path), searched).map(
          (needle) => `${path}: ${needle.toString('hex').slice(0, 16)}…`,
        )
      : [],
  );
}

/**
 * Inserts one authorized proposal per entry of `ciphertextSizes` (ids `p-<index>`), each with
 * a random snapshot whose ciphertext has that many bytes.
 */
export async function seedWithSnapshots(
  store: GuardStore,
  tenant: string,
  ciphertextSizes: readonly number[],
): Promise<ProposalRecord[]> {
  const records = ciphertextSizes.map((size, index) =>
    sampleProposal(tenant, `p-${index}`, { snapshot: randomEnvelope(size) }),
  );
  for (const record of records) {
    const result = await store.commit({
      tenant,
      proposal: { kind: 'insert', record },
      events: [sampleDraft(record.proposal, 1)],
    });
    expect(result.kind).toBe('committed');
  }
  return records;
}

/** Commits `changes` to the stored proposal as one compare-and-set; returns the new record. */
async function updateStored(
  store: GuardStore,
  record: ProposalRecord,
  changes: Partial<ProposalRecord>,
): Promise<ProposalRecord> {
  const current = (await store.getProposal(record.tenant, record.proposal)) as ProposalRecord;
  const next: ProposalRecord = { ...current, ...changes, revision: current.revision + 1 };
  const result = await store.commit({
    tenant: record.tenant,
    proposal: {
      kind: 'update',
      expectedRevision: current.revision,
      expectedStatus: current.status,
      record: next,
    },
    events: [sampleDraft(record.proposal, next.revision)],
  });
  expect(result.kind).toBe('committed');
  return next;
}

/**
 * Adds a random private output to a stored proposal, as the guard does once the write is known
 * (an update), and returns the record as stored.
 */
export function addOutput(store: GuardStore, record: ProposalRecord): Promise<ProposalRecord> {
  return updateStored(store, record, { output: randomEnvelope(200) });
}

/** The erasure the guard makes: one compare-and-set to `erased`, snapshot and output null. */
export async function eraseProposal(store: GuardStore, record: ProposalRecord): Promise<void> {
  await updateStored(store, record, { status: 'erased', snapshot: null, output: null });
}

/** Asserts that `records` read back with their snapshots, except `erased`, which have none. */
export async function expectSnapshots(
  store: GuardStore,
  records: readonly ProposalRecord[],
  erased: readonly ProposalRecord[],
): Promise<void> {
  for (const record of records.filter((one) => !erased.includes(one))) {
    const stored = await store.getProposal(record.tenant, record.proposal);
    expect(stored?.snapshot).toStrictEqual(record.snapshot);
    expect(stored?.output).toStrictEqual(record.output);
  }
  for (const record of erased) {
    const after = await store.getProposal(record.tenant, record.proposal);
    expect(after?.status).toBe('erased');
    expect(after?.snapshot).toBeNull();
    expect(after?.output ?? null).toBeNull();
  }
}

/**
 * Asserts that `holds` finds each victim's own needles (so a later "found nothing" is not a
 * blind search), and returns every victim's needles together.
 */
export async function expectEachFound(
  victims: readonly ProposalRecord[],
  holds: (searched: readonly Buffer[]) => Promise<number> | number,
): Promise<Buffer[]> {
  for (const victim of victims) {
    const own = recordNeedles(victim);
    expect(await holds(own), `${victim.proposal} before erasure`).toBeGreaterThan(0);
  }
  return victims.flatMap(recordNeedles);
}
