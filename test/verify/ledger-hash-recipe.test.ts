/**
 * docs/ledger.md specifies the ledger hash so an auditor can recompute it without Sideguard.
 * This test follows that recipe alone — its own canonical JSON, node:crypto's SHA-256, never the
 * library's hash function — against the page's worked example, the canonical-JSON golden vectors
 * and every event of a real export; and runs the page's jq line when jq is installed.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  createDevelopmentKeyRing,
  createGuard,
  createManualClock,
  createMemoryStore,
  defineAction,
} from '../../src/index.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const page = readFileSync(join(root, 'docs', 'ledger.md'), 'utf8');

/** The body of the page's fenced block whose info string is `info`. */
function block(info: string): string {
  const match = new RegExp(`\`\`\`${info}\\n([\\s\\S]*?)\`\`\``).exec(page);
  if (match?.[1] === undefined) throw new Error(`docs/ledger.md has no \`\`\`${info} block`);
  return match[1].trim();
}

// ---- the recipe, as the page states it --------------------------------------------------

const codePoints = (text: string): number[] => Array.from(text, (c) => c.codePointAt(0) ?? 0);
const byCodePoint = ([a]: [string, unknown], [b]: [string, unknown]): number => {
  const x = codePoints(a);
  const y = codePoints(b);
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    if (x[i] !== y[i]) return (x[i] ?? 0) - (y[i] ?? 0);
  }
  return x.length - y.length;
};

function canonical(value: unknown): string {
  if (value === null || typeof value === 'boolean') return String(value);
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) throw new Error(`not a safe integer: ${value}`);
    return String(value);
  }
  if (typeof value === 'string') return JSON.stringify(value.normalize('NFC'));
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, item]) => item !== undefined)
    .map(([key, item]): [string, unknown] => [key.normalize('NFC'), item])
    .sort(byCodePoint);
  return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonical(item)}`).join(',')}}`;
}

const sha256 = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');

function eventHash(event: Record<string, unknown>): string {
  const { hash: _hash, ...covered } = event;
  return sha256(canonical({ ...covered, v: 1 }));
}

// ---------------------------------------------------------------------------------------------

/** Decodes the golden file's tagged values (`{"$": …}`) into what they stand for. */
function untag(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(untag);
  if (typeof value !== 'object' || value === null) return value;
  const tagged = value as Record<string, unknown>;
  if (!Object.hasOwn(tagged, '$')) {
    return Object.fromEntries(Object.entries(tagged).map(([key, item]) => [key, untag(item)]));
  }
  switch (tagged.$) {
    case 'number':
      return Number(tagged.value);
    case 'string':
      return String.fromCharCode(
        ...(tagged.utf16 as string[]).map((unit) => Number.parseInt(unit, 16)),
      );
    case 'undefined':
      return undefined;
    case 'object':
      return Object.fromEntries(
        (tagged.entries as [string, unknown][]).map(([key, item]) => [key, untag(item)]),
      );
    case 'nested-arrays': {
      let nested: unknown[] = [];
      for (let depth = 1; depth < Number(tagged.depth); depth++) nested = [nested];
      return nested;
    }
    default:
      throw new Error(`unknown golden tag ${String(tagged.$)}`);
  }
}

describe('the ledger hash, recomputed from docs/ledger.md alone', () => {
  it('reproduces the worked example: canonical text, SHA-256, and the link between the events', () => {
    const [first, second] = block('json ledger-event')
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    if (first === undefined || second === undefined) throw new Error('two example events expected');
    const { hash: _hash, ...covered } = second;
    expect(canonical({ ...covered, v: 1 })).toBe(block('text canonical'));
    expect(sha256(block('text canonical'))).toBe(block('text sha256'));
    expect(second.hash).toBe(block('text sha256'));
    expect(eventHash(first)).toBe(first.hash);
    expect(first.previousHash).toBe('0'.repeat(64));
    expect(second.previousHash).toBe(first.hash);
    expect(Object.keys(second).sort()).toEqual(
      [
        'tenant',
        'sequence',
        'previousHash',
        'proposal',
        'type',
        'at',
        'actionType',
        'status',
        'revision',
        'data',
        'hash',
      ].sort(),
    );
  });

  it('encodes every golden canonical-JSON vector exactly (key order, NFC, escapes, integers)', () => {
    const vectors = JSON.parse(
      readFileSync(join(root, 'fixtures', 'golden', 'canonical-json-v1.json'), 'utf8'),
    ) as { name: string; input: unknown; canonical?: string }[];
    const encodable = vectors.filter((vector) => vector.canonical !== undefined);
    expect(encodable.length).toBeGreaterThan(20);
    for (const vector of encodable) {
      expect(canonical(untag(vector.input)), vector.name).toBe(vector.canonical);
    }
  });

  it('recomputes every hash and link of a real export, data of every event type included', async () => {
    const clock = createManualClock();
    const guard = createGuard({
      store: createMemoryStore(),
      keyRing: createDevelopmentKeyRing('ledger-recipe'),
      clock,
    });
    const refund = defineAction({
      type: { namespace: 'support', name: 'refund', version: 1 },
      input: z.object({ orderId: z.string(), amount: z.string(), note: z.string() }),
      protectedFields: ['orderId', 'amount'],
      policy: (input) =>
        input.amount === '0.00'
          ? { decision: 'block', reason: 'nothing_to_refund' }
          : { decision: 'allow', reason: 'within_auto_limit' },
      execute: async () => ({ kind: 'accepted', receipt: { id: 're_1', provider: 'payments' } }),
      verify: async () => ({ kind: 'present', receipt: { id: 're_1', provider: 'payments' } }),
    });
    const run = (orderId: string, amount: string) =>
      guard.run(refund, {
        tenant: 'acme',
        input: { orderId, amount, note: 'Café crème — ünïcödé, "quoted"\n' },
        principal: 'agent',
      });
    await run('ord_1', '18.00');
    clock.advance(1_000);
    await run('ord_1', '18.00');
    await run('ord_2', '0.00');
    await guard.prepare(refund, {
      tenant: 'acme',
      input: { orderId: 'ord_3', amount: 'x', extra: true },
      principal: 'agent',
    });
    const lines = (await guard.exportLedger({ tenant: 'acme' })).trim().split('\n');
    const events = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(new Set(events.map((event) => event.type)).size).toBeGreaterThanOrEqual(6);
    let previous = '0'.repeat(64);
    for (const [index, event] of events.entries()) {
      expect(event.sequence).toBe(index + 1);
      expect(event.previousHash).toBe(previous);
      expect(eventHash(event)).toBe(event.hash);
      previous = String(event.hash);
    }
    // Any covered field changes the hash: one character of nested data is enough.
    const edited = structuredClone(events[1]!);
    (edited.data as Record<string, unknown>).reasonCode = 'within_auto_limiT';
    expect(eventHash(edited)).not.toBe(events[1]!.hash);
  });

  it('the page’s jq line gives the same hash (where jq is installed)', () => {
    let version: string;
    try {
      version = execFileSync('jq', ['--version'], { encoding: 'utf8' });
    } catch {
      console.warn('jq is not installed: the jq line of docs/ledger.md was not run');
      return;
    }
    expect(version).toMatch(/jq/);
    const second = block('json ledger-event').split('\n')[1] ?? '';
    const canonicalText = execFileSync('jq', ['-cjS', 'del(.hash) + {v: 1}'], {
      input: second,
      encoding: 'utf8',
    });
    expect(canonicalText).toBe(block('text canonical'));
    expect(sha256(canonicalText)).toBe(block('text sha256'));
  });
});
