import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineAction } from '../core/action.js';
import { createDevelopmentKeyRing } from '../core/key-ring.js';
import type { LedgerEvent } from '../core/ledger.js';
import { createGuard } from '../create-guard.js';
import { createMemoryStore } from '../stores/memory/memory-store.js';
import { parseExpectedHead, verifyLedgerLines } from './ledger-lines.js';

async function exportedLines(tenants: readonly string[]): Promise<string[]> {
  const guard = createGuard({ store: createMemoryStore(), keyRing: createDevelopmentKeyRing() });
  const action = defineAction({
    type: { namespace: 'test', name: 'note', version: 1 },
    input: z.object({ ticket: z.string() }),
    protectedFields: ['ticket'],
    policy: () => ({ decision: 'allow', reason: 'ok' }),
    execute: async () => ({ kind: 'accepted', receipt: { id: 'n1', provider: 'crm' } }),
    verify: async () => ({ kind: 'present', receipt: { id: 'n1', provider: 'crm' } }),
  });
  let text = '';
  for (const tenant of tenants) {
    await guard.run(action, { tenant, input: { ticket: 't-1' }, principal: 'agent' });
    text += await guard.exportLedger({ tenant });
  }
  return text.trim().split('\n');
}

async function* slowly(lines: readonly string[]): AsyncGenerator<string> {
  for (const line of lines) {
    await Promise.resolve();
    yield line;
  }
}

describe('verifyLedgerLines', () => {
  it('passes intact chains of several tenants, from a sync or an async source, skipping blank lines', async () => {
    const lines = await exportedLines(['acme', 'globex']);
    const seen: [string, number][] = [];
    const verdict = await verifyLedgerLines(slowly(['', ...lines, '  ']), {
      onEvent: (event: LedgerEvent, line) => seen.push([`${event.tenant}#${event.sequence}`, line]),
    });
    expect(verdict).toMatchObject({ kind: 'valid', entries: lines.length });
    expect(verdict.kind === 'valid' && verdict.tenants.map((t) => t.tenant)).toEqual([
      'acme',
      'globex',
    ]);
    expect(seen[0]).toEqual(['acme#1', 2]);
    expect(seen).toHaveLength(lines.length);
    expect(await verifyLedgerLines(lines)).toEqual(verdict);
  });

  it('names the first bad line: not JSON, too long, edited, removed', async () => {
    const lines = await exportedLines(['acme']);
    expect(await verifyLedgerLines([lines[0]!, '{oops'])).toMatchObject({
      kind: 'invalid',
      line: 2,
      reason: 'malformed',
    });
    expect(await verifyLedgerLines(['x'.repeat(1024 * 1024 + 1)])).toMatchObject({
      line: 1,
      reason: 'malformed',
      message: 'line 1 is longer than 1 MiB',
    });
    const edited = [...lines];
    edited[1] = edited[1]!.replace('"reasonCode":"ok"', '"reasonCode":"approved_by_ceo"');
    expect(await verifyLedgerLines(edited)).toMatchObject({
      kind: 'invalid',
      line: 2,
      tenant: 'acme',
      sequence: 2,
      reason: 'hash_mismatch',
    });
    expect(await verifyLedgerLines([lines[0]!, lines[2]!])).toMatchObject({
      line: 2,
      reason: 'sequence_gap',
    });
    expect(await verifyLedgerLines([])).toMatchObject({ kind: 'invalid', reason: 'empty' });
  });

  it('checks expected heads, naming cuts from the end; a head without tenant needs one tenant', async () => {
    const lines = await exportedLines(['acme', 'globex']);
    const acme = lines.filter((line) => line.includes('"tenant":"acme"'));
    const last = JSON.parse(acme.at(-1)!) as { sequence: number; hash: string };
    const head = parseExpectedHead(`${last.sequence}:${last.hash}`);
    expect(head).toEqual({ tenant: null, sequence: last.sequence, hash: last.hash });
    expect(await verifyLedgerLines(acme, { expectedHeads: [head] })).toMatchObject({
      kind: 'valid',
    });
    expect(await verifyLedgerLines(acme.slice(0, -1), { expectedHeads: [head] })).toMatchObject({
      kind: 'invalid',
      reason: 'head_mismatch',
      tenant: 'acme',
      sequence: last.sequence - 1,
    });
    await expect(verifyLedgerLines(lines, { expectedHeads: [head] })).rejects.toMatchObject({
      code: 'ledger_head_ambiguous',
    });
    const named = parseExpectedHead(`acme@${last.sequence}:${last.hash}`);
    expect(await verifyLedgerLines(lines, { expectedHeads: [named] })).toMatchObject({
      kind: 'valid',
    });
    expect(() => parseExpectedHead('latest')).toThrow(
      expect.objectContaining({ code: 'ledger_head_invalid' }),
    );
  });
});
