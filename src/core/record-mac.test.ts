import { Buffer } from 'node:buffer';
import { createHmac, hkdfSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { sampleProposal } from '../../test/support/store-records.js';
import { ConfigurationError } from './errors.js';
import { createKeyRing } from './key-ring.js';
import {
  checkRecordMac,
  evidenceRowDigest,
  RECORD_MAC_DOMAIN,
  RECORD_MAC_EXCLUDED_FIELDS,
  recordMacBytes,
  sealRecord,
} from './record-mac.js';
import type { AuthorityEvidenceRecord, ProposalRecord } from './store.js';

const secret = (fill: number) => new Uint8Array(32).fill(fill);
const v1 = { handle: 'k1', version: 1 };
const v2 = { handle: 'k1', version: 2 };
const ringV1 = createKeyRing({ keys: [{ ...v1, secret: secret(1) }], current: v1 });
const ringV2 = createKeyRing({
  keys: [
    { ...v1, secret: secret(1) },
    { ...v2, secret: secret(2) },
  ],
  current: v2,
  effectKey: v1,
});

const record = (overrides: Partial<ProposalRecord> = {}) =>
  sampleProposal('tenant-a', 'prop_0001', {
    countedEvidence: ['a'.repeat(64)],
    lease: { owner: 'lease_0001', expiresAtMs: 1_700_000_030_000 },
    ...overrides,
  });

describe('record MACs', () => {
  it('is HMAC-SHA-256 with the record subkey over the framed, key-sorted JSON (re-implemented here)', () => {
    const sealed = sealRecord(ringV1, record());
    const subkey = Buffer.from(
      hkdfSync(
        'sha256',
        secret(1),
        Buffer.from('sideguard/key-ring/v1'),
        Buffer.from('sideguard/subkey/v1/record'),
        32,
      ),
    );
    const bytes = Buffer.from(recordMacBytes(sealed));
    const length = (n: number) => {
      const b = Buffer.alloc(4);
      b.writeUInt32BE(n);
      return b;
    };
    const message = Buffer.concat([
      Buffer.from('sideguard/keyed-mac/v1'),
      length(Buffer.byteLength(RECORD_MAC_DOMAIN)),
      Buffer.from(RECORD_MAC_DOMAIN),
      length(bytes.length),
      bytes,
    ]);
    expect(sealed.recordMac).toEqual({
      algorithm: 'hmac-sha256',
      keyHandle: 'k1',
      keyVersion: 1,
      value: createHmac('sha256', subkey).update(message).digest('base64url'),
    });
    const text = new TextDecoder().decode(bytes);
    expect(text.startsWith('{"actionType":"support.refund@1","agent":null,')).toBe(true);
    expect(text).not.toContain('recordMac');
    expect(text).not.toContain('"snapshot"');
  });

  it('checks out for the sealed record, whatever order a store returns its keys in', () => {
    const sealed = sealRecord(ringV1, record());
    expect(checkRecordMac(ringV1, sealed)).toBe('valid');
    const reversed = Object.fromEntries(Object.entries(sealed).reverse()) as ProposalRecord;
    expect(checkRecordMac(ringV1, JSON.parse(JSON.stringify(reversed)))).toBe('valid');
  });

  it.each<[string, (r: ProposalRecord) => ProposalRecord]>([
    ['status', (r) => ({ ...r, status: 'verified' })],
    ['revision', (r) => ({ ...r, revision: r.revision + 1 })],
    ['policy decision', (r) => ({ ...r, policy: { ...r.policy, decision: 'block' } })],
    ['lease', (r) => ({ ...r, lease: null })],
    ['resend generation', (r) => ({ ...r, resendGeneration: 1 })],
    ['expiry', (r) => ({ ...r, expiresAtMs: r.expiresAtMs + 1 })],
    ['effect scope', (r) => ({ ...r, effectScope: `${r.effectScope}x` })],
    ['commitment', (r) => ({ ...r, commitment: { ...r.commitment, keyVersion: 2 } })],
    ['counted evidence', (r) => ({ ...r, countedEvidence: [] })],
    ['receipts', (r) => ({ ...r, receipts: [{ id: 're_1', provider: 'payments' }] })],
    ['a field added later', (r) => ({ ...r, approvedBy: 'mallory' }) as ProposalRecord],
    // Exact bytes: an NFD spelling of the same text is another principal.
    ['principal (NFC to NFD)', (r) => ({ ...r, principal: 'caf\u0065\u0301' })],
  ])('is invalid once the %s changed', (_field, change) => {
    const sealed = sealRecord(ringV1, record({ principal: 'caf\u00e9' }));
    expect(checkRecordMac(ringV1, change(sealed))).toBe('invalid');
  });

  it('leaves out the encrypted snapshot and output, which authenticate themselves', () => {
    const sealed = sealRecord(ringV1, record());
    expect(checkRecordMac(ringV1, { ...sealed, snapshot: null, output: null })).toBe('valid');
  });

  it('reports a record without a MAC as missing and a malformed MAC as invalid', () => {
    expect(checkRecordMac(ringV1, record())).toBe('missing');
    const sealed = sealRecord(ringV1, record());
    const mac = sealed.recordMac!;
    for (const broken of [
      { ...mac, value: `${mac.value}A` },
      { ...mac, value: 42 },
      { ...mac, algorithm: 'sha1' },
      { ...mac, keyVersion: '1' },
    ]) {
      expect(checkRecordMac(ringV1, { ...sealed, recordMac: broken } as ProposalRecord)).toBe(
        'invalid',
      );
    }
  });

  it('keeps records sealed before a rotation valid, and seals new ones with the current key', () => {
    const old = sealRecord(ringV1, record());
    expect(checkRecordMac(ringV2, old)).toBe('valid');
    const fresh = sealRecord(ringV2, record());
    expect(fresh.recordMac?.keyVersion).toBe(2);
    expect(fresh.recordMac?.value).not.toBe(old.recordMac?.value);
    expect(checkRecordMac(ringV2, fresh)).toBe('valid');
  });

  it('treats a MAC whose key the ring no longer holds as a deployment error', () => {
    const fresh = sealRecord(ringV2, record());
    let error: unknown;
    try {
      checkRecordMac(ringV1, fresh);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigurationError);
    expect((error as ConfigurationError).code).toBe('keyed_mac_key_unknown');
    expect((error as Error).message).toContain('k1:2');
  });

  it('digests every field of an evidence row, so a changed expiry or decision is another row', () => {
    const row: AuthorityEvidenceRecord = {
      tenant: 'tenant-a',
      proposal: 'prop_0001',
      evidenceDigest: 'd'.repeat(64),
      authority: 'finance-a',
      decision: 'approve',
      channelAssurance: 'high',
      issuedAtMs: 1,
      expiresAtMs: 2,
      recordedAtMs: 1,
      evidence: { v: 1 },
    };
    const digest = evidenceRowDigest(row);
    expect(digest).toMatch(/^[0-9a-f]{64}$/);
    expect(evidenceRowDigest(JSON.parse(JSON.stringify(row)))).toBe(digest);
    expect(evidenceRowDigest({ ...row, expiresAtMs: 3 })).not.toBe(digest);
    expect(evidenceRowDigest({ ...row, decision: 'reject' })).not.toBe(digest);
  });
});

describe('record MAC bytes of many shapes', () => {
  /** The documented recipe, written out: keys sorted at every depth, undefined left out. */
  const reference = (value: unknown): string => {
    if (Array.isArray(value)) return `[${value.map((item) => reference(item ?? null)).join(',')}]`;
    if (typeof value === 'object' && value !== null) {
      const entries = Object.keys(value)
        .sort()
        .filter((key) => (value as Record<string, unknown>)[key] !== undefined)
        .map(
          (key) => `${JSON.stringify(key)}:${reference((value as Record<string, unknown>)[key])}`,
        );
      return `{${entries.join(',')}}`;
    }
    return JSON.stringify(value);
  };
  const text = (value: object) =>
    new TextDecoder().decode(recordMacBytes(value as unknown as ProposalRecord));

  it('sorts each object by its own keys when lists share a first key but not the rest', () => {
    // Same first key, different sets, lengths and orders, interleaved: each must sort afresh.
    const shapes = [
      { m: 1, b: 2, a: 3 },
      { m: 1, z: 2 },
      { m: 1, b: 2, a: 3, c: { y: 1, x: 2 } },
      { m: 1, a: 2, b: 3 },
      { m: 1, b: 2, a: 3 },
      { m: 1, x: { m: 1, b: 2 }, a: [{ m: 1, z: 0, c: 0 }] },
    ];
    for (let round = 0; round < 3; round += 1) {
      for (const shape of shapes) expect(text(shape)).toBe(reference(shape));
    }
  });

  it('stays exact when more shapes than it keeps per first key alternate', () => {
    // Seven shapes share `m` (one with keys JSON must escape); the memo keeps four per first key, newest first.
    const shapes = [
      { m: 1, b: 2, a: 3 },
      { m: 1, c: 2, a: 3 },
      { m: 1, d: 2, a: 3 },
      { m: 1, e: 2, a: 3 },
      { m: 1, f: 2, a: 3 },
      { m: 1, a: 2, g: 3 },
      { m: 1, 'q"uote': 2, é: 3, 'back\\slash': { ü: [1] } },
    ];
    for (let round = 0; round < 4; round += 1) {
      for (const shape of round % 2 === 0 ? shapes : [...shapes].reverse()) {
        expect(text(shape)).toBe(reference(shape));
      }
    }
    // A fresh record and its sealed successor (one more key, `recordMac`) alternate in an action.
    const fresh = record();
    const sealed = sealRecord(ringV1, fresh);
    const covered = Object.fromEntries(
      Object.entries(fresh).filter(([key]) => !RECORD_MAC_EXCLUDED_FIELDS.includes(key)),
    );
    for (let round = 0; round < 3; round += 1) {
      expect(text(fresh)).toBe(reference(covered));
      expect(text(sealed)).toBe(reference(covered));
      expect(checkRecordMac(ringV1, sealRecord(ringV1, sealed))).toBe('valid');
    }
  });

  it('sorts a list of more than 16 keys as Array.prototype.sort does', () => {
    const wide = Object.fromEntries(
      Array.from({ length: 40 }, (_, index) => [`k${(index * 7) % 40}`, index]),
    );
    expect(text({ ...wide, B: 1, a: 2, _: 3 })).toBe(reference({ ...wide, B: 1, a: 2, _: 3 }));
  });

  it('stays exact past the number of shapes it remembers', () => {
    for (let index = 0; index < 600; index += 1) {
      const shape = { [`k${index}`]: 1, b: index, a: { [`k${index}`]: 0, c: 1, a: 2 } };
      expect(text(shape)).toBe(reference(shape));
    }
    // A record sealed after all that still checks out, and a changed field still does not.
    const sealed = sealRecord(ringV1, record());
    expect(checkRecordMac(ringV1, sealed)).toBe('valid');
    expect(checkRecordMac(ringV1, { ...sealed, status: 'verified' })).toBe('invalid');
  });
});
