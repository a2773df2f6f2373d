import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { verifyLedgerFile } from 'sideguard/verify';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  createDevelopmentKeyRing,
  createGuard,
  createMemoryStore,
  defineAction,
} from '../../src/index.js';
import { runCli } from '../support/cli.js';

let lines: string[] = [];
const dir = mkdtempSync(join(tmpdir(), 'sideguard-ledger-'));

const write = (name: string, content: string): string => {
  const file = join(dir, name);
  writeFileSync(file, content);
  return file;
};

beforeAll(async () => {
  const guard = createGuard({ store: createMemoryStore(), keyRing: createDevelopmentKeyRing() });
  const action = defineAction({
    type: { namespace: 'support', name: 'note', version: 1 },
    input: z.object({ ticket: z.string() }),
    protectedFields: ['ticket'],
    policy: () => ({ decision: 'allow', reason: 'ok' }),
    execute: async () => ({ kind: 'accepted', receipt: { id: 'n1', provider: 'crm' } }),
    verify: async () => ({ kind: 'present', receipt: { id: 'n1', provider: 'crm' } }),
  });
  for (const ticket of ['t-1', 't-2', 't-3']) {
    await guard.run(action, { tenant: 'acme', input: { ticket }, principal: 'agent' });
    await guard.run(action, { tenant: 'globex', input: { ticket }, principal: 'agent' });
  }
  lines =
    `${await guard.exportLedger({ tenant: 'acme' })}${await guard.exportLedger({ tenant: 'globex' })}`
      .trim()
      .split('\n');
});

describe('sideguard ledger verify', () => {
  it('passes an intact export with several tenant chains and exits 0', () => {
    const run = runCli(['ledger', 'verify', write('ok.jsonl', `${lines.join('\n')}\n`)]);
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(
      /^PASS ledger .*: 36 entries, 2 tenant chain\(s\) intact; heads acme@18:[0-9a-f]{64}, globex@18:[0-9a-f]{64}/,
    );
  });

  it('names an edited entry and exits 1', () => {
    const edited = [...lines];
    const entry = JSON.parse(edited[4]!) as { data: Record<string, unknown> };
    entry.data = { ...entry.data, receipt: { id: 'n999', provider: 'crm' } };
    edited[4] = JSON.stringify(entry);
    const run = runCli(['ledger', 'verify', write('edited.jsonl', edited.join('\n'))]);
    expect(run.status).toBe(1);
    expect(run.stdout).toMatch(
      /^FAIL ledger .*: hash_mismatch \(tenant acme, sequence 5\): line 5/,
    );
  });

  it('names the entry after a deleted one and exits 1', () => {
    const deleted = lines.filter((_, index) => index !== 2);
    const run = runCli(['ledger', 'verify', write('deleted.jsonl', deleted.join('\n'))]);
    expect(run.status).toBe(1);
    expect(run.stdout).toMatch(/sequence_gap \(tenant acme, sequence 4\): line 3/);
  });

  it('detects reordered entries and exits 1', () => {
    const reordered = [...lines];
    [reordered[6], reordered[7]] = [reordered[7]!, reordered[6]!];
    const run = runCli(['ledger', 'verify', write('reordered.jsonl', reordered.join('\n'))]);
    expect(run.status).toBe(1);
    expect(run.stdout).toMatch(/sequence_gap \(tenant acme, sequence 8\): line 7/);
  });

  it('detects an entry whose hash was recomputed but whose link was not', () => {
    const forged = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    forged.splice(3, 1);
    const run = runCli([
      'ledger',
      'verify',
      write('forged.jsonl', forged.map((e) => JSON.stringify(e)).join('\n')),
    ]);
    expect(run.status).toBe(1);
  });

  it('reports a line that is not JSON, and an empty file, as failures', () => {
    const broken = runCli(['ledger', 'verify', write('broken.jsonl', `${lines[0]}\n{not json\n`)]);
    expect(broken.status).toBe(1);
    expect(broken.stdout).toContain('line 2 is not valid JSON');
    const empty = runCli(['ledger', 'verify', write('empty.jsonl', '')]);
    expect(empty.status).toBe(1);
    expect(empty.stdout).toContain('no ledger entries');
  });

  it('gives one clear line and exit 2 for a missing file or a directory', () => {
    const missing = runCli(['ledger', 'verify', join(dir, 'nope.jsonl')]);
    expect(missing.status).toBe(2);
    expect(missing.stderr.trim()).toMatch(/^sideguard: ledger file .*nope\.jsonl does not exist$/);
    const directory = runCli(['ledger', 'verify', dir]);
    expect(directory.status).toBe(2);
    expect(directory.stderr.trim().split('\n')).toHaveLength(1);
  });

  it('detects entries cut from the end only against an expected head, and says so', () => {
    const acme = lines.filter((line) => line.includes('"tenant":"acme"'));
    const last = JSON.parse(acme.at(-1)!) as { sequence: number; hash: string };
    const head = `${last.sequence}:${last.hash}`;
    const truncated = write('truncated.jsonl', acme.slice(0, -2).join('\n'));
    const unanchored = runCli(['ledger', 'verify', truncated]);
    expect(unanchored.status).toBe(0);
    expect(unanchored.stdout).toContain('pass it as --expect-head');
    const anchored = runCli(['ledger', 'verify', '--expect-head', head, truncated]);
    expect(anchored.status).toBe(1);
    expect(anchored.stdout).toMatch(/head_mismatch .*: the chain ends at sequence 16, expected 18/);
    const whole = runCli([
      'ledger',
      'verify',
      '--expect-head',
      head,
      write('acme.jsonl', acme.join('\n')),
    ]);
    expect(whole.status).toBe(0);
    const both = write('both.jsonl', lines.join('\n'));
    expect(runCli(['ledger', 'verify', '--expect-head', `acme@${head}`, both]).status).toBe(0);
    const ambiguous = runCli(['ledger', 'verify', '--expect-head', head, both]);
    expect(ambiguous.status).toBe(2);
    expect(ambiguous.stderr).toContain('TENANT@SEQUENCE:HASH');
    const malformed = runCli(['ledger', 'verify', '--expect-head', 'latest', both]);
    expect(malformed.status).toBe(2);
    expect(malformed.stderr.trim().split('\n')).toHaveLength(1);
  });

  it('prints a machine-readable verdict with --json', () => {
    const run = runCli(['ledger', 'verify', '--json', write('json.jsonl', lines.join('\n'))]);
    expect(JSON.parse(run.stdout)).toMatchObject({ kind: 'valid', entries: 36 });
  });

  it('is library code: sideguard/verify gives the verdict the CLI prints', async () => {
    const file = write('library.jsonl', lines.join('\n'));
    const printed = JSON.parse(runCli(['ledger', 'verify', '--json', file]).stdout);
    expect(await verifyLedgerFile(file)).toEqual(printed);
    const edited = [...lines];
    const index = edited.findIndex((line) => line.includes('"decision":"allow"'));
    edited[index] = edited[index]!.replace('"decision":"allow"', '"decision":"block"');
    const tampered = write('library-tampered.jsonl', edited.join('\n'));
    const verdict = await verifyLedgerFile(tampered);
    expect(verdict).toMatchObject({
      kind: 'invalid',
      file: tampered,
      line: index + 1,
      reason: 'hash_mismatch',
    });
    expect(verdict).toEqual(JSON.parse(runCli(['ledger', 'verify', '--json', tampered]).stdout));
    await expect(verifyLedgerFile(join(dir, 'absent.jsonl'))).rejects.toMatchObject({
      code: 'ledger_file_unreadable',
    });
  });
});
