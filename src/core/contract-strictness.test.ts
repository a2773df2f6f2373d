import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  createHarness,
  refundAction,
  refundArgs,
  refundInput,
} from '../../test/support/guard-harness.js';
import { defineAction } from './action.js';

/** An action whose contract is `{ id, x }`, `x` being the schema under test. */
function contractWith(x: z.ZodType) {
  return defineAction({
    type: { namespace: 'test', name: 'contract', version: 1 },
    input: z.object({ id: z.string(), x }),
    protectedFields: ['id'],
    policy: () => ({ decision: 'allow', reason: 'test' }),
    execute: async () => ({ kind: 'failed_known', reason: 'not_used' }),
    verify: async () => ({ kind: 'absent', final: true }),
  });
}

const item = z.object({ sku: z.string(), quantity: z.int() });

interface TreeNode {
  name: string;
  children?: TreeNode[] | undefined;
}
const tree: z.ZodType<TreeNode> = z.lazy(() =>
  z.object({ name: z.string(), children: z.array(tree).optional() }),
);
const GetterNode = z.object({
  name: z.string(),
  get next() {
    return GetterNode.optional();
  },
});

const ITEM = { sku: 'a', quantity: 1 };

/** A case whose value is one item: valid as it is, invalid with an extra key. */
const aroundItem = (what: string, schema: z.ZodType): [string, z.ZodType, unknown, unknown] => [
  what,
  schema,
  ITEM,
  { ...ITEM, x: 1 },
];

/** [what, schema, a valid value, the same value with an unknown key deep inside]. */
const nested: [string, z.ZodType, unknown, unknown][] = [
  ['a nested object', z.object({ city: z.string() }), { city: 'Oslo' }, { city: 'Oslo', zip: '1' }],
  [
    'an array of objects',
    z.array(item),
    [{ sku: 'a', quantity: 1 }],
    [{ sku: 'a', quantity: 1, price: 9 }],
  ],
  aroundItem('an optional object', item.optional()),
  aroundItem('a nullable object', item.nullable()),
  aroundItem('an object with a default', item.default({ sku: 'd', quantity: 0 })),
  aroundItem('a readonly object', item.readonly()),
  [
    'a union of objects',
    z.union([z.object({ card: z.string() }), z.object({ iban: z.string() })]),
    { iban: 'NO93' },
    { iban: 'NO93', bic: 'DNB' },
  ],
  [
    'a discriminated union',
    z.discriminatedUnion('kind', [
      z.object({ kind: z.literal('card'), last4: z.string() }),
      z.object({ kind: z.literal('bank'), iban: z.string() }),
    ]),
    { kind: 'bank', iban: 'NO93' },
    { kind: 'bank', iban: 'NO93', owner: 'Ada' },
  ],
  [
    'a record of objects',
    z.record(z.string(), item),
    { a: { sku: 'a', quantity: 1 } },
    { a: { sku: 'a', quantity: 1, x: 1 } },
  ],
  [
    'a tuple holding an object',
    z.tuple([z.string(), item]),
    ['t', { sku: 'a', quantity: 1 }],
    ['t', { sku: 'a', quantity: 1, x: 1 }],
  ],
  [
    'a pipe between two objects',
    item.pipe(z.object({ sku: z.string(), quantity: z.int().min(1) })),
    { sku: 'a', quantity: 1 },
    { sku: 'a', quantity: 1, x: 1 },
  ],
  [
    'a recursive lazy schema, two levels down',
    tree,
    { name: 'root', children: [{ name: 'leaf', children: [] }] },
    { name: 'root', children: [{ name: 'leaf', children: [{ name: 'deep', colour: 'red' }] }] },
  ],
  [
    'a recursive getter schema, two levels down',
    GetterNode,
    { name: 'a', next: { name: 'b' } },
    { name: 'a', next: { name: 'b', next: { name: 'c', extra: true } } },
  ],
];

describe('contracts strict at every depth (window 5)', () => {
  it.each(nested)(
    'rejects an unknown key inside %s, and accepts the valid value unchanged',
    (_what, x, valid, withExtra) => {
      const action = contractWith(x);
      const accepted = action.schema.safeParse({ id: '1', x: valid });
      expect(accepted.success).toBe(true);
      expect(accepted.data).toEqual({ id: '1', x: valid });
      const refused = action.schema.safeParse({ id: '1', x: withExtra });
      expect(refused.success).toBe(false);
      expect(refused.error?.issues.map((issue) => issue.code)).toContain('unrecognized_keys');
    },
  );

  it('rejects a proposal with an unknown key in a nested object instead of executing without it', async () => {
    const h = createHarness();
    const refund = refundAction(h.provider, {
      input: refundInput.extend({ shipping: z.object({ carrier: z.string() }) }) as never,
    });
    const result = await h.guard.run(refund, {
      tenant: h.tenant,
      input: { ...refundArgs(), shipping: { carrier: 'posten', returnLabel: 'yes' } },
      principal: 'agent',
    });
    expect(result).toMatchObject({ outcome: 'rejected', reasonCode: 'contract_violation' });
    expect(result.issues?.[0]).toMatchObject({ path: 'shipping', code: 'unrecognized_keys' });
    expect(h.provider.calls.execute).toBe(0);
  });

  it('keeps the checks, messages and defaults of nested schemas', () => {
    const action = contractWith(
      z
        .object({ from: z.int(), to: z.int(), note: z.string().default('none') })
        .refine((range) => range.from <= range.to, { message: 'from must not exceed to' }),
    );
    expect(action.schema.safeParse({ id: '1', x: { from: 1, to: 2 } }).data).toEqual({
      id: '1',
      x: { from: 1, to: 2, note: 'none' },
    });
    const backwards = action.schema.safeParse({ id: '1', x: { from: 3, to: 2 } });
    expect(backwards.error?.issues[0]?.message).toBe('from must not exceed to');
  });

  it('leaves a strict contract as strict and does not change the schema the host passed', () => {
    const input = z.object({ id: z.string(), x: z.object({ a: z.string() }) });
    const action = defineAction({
      type: { namespace: 'test', name: 'untouched', version: 1 },
      input,
      protectedFields: ['id'],
      policy: () => ({ decision: 'allow', reason: 'test' }),
      execute: async () => ({ kind: 'failed_known', reason: 'not_used' }),
      verify: async () => ({ kind: 'absent', final: true }),
    });
    expect(input.safeParse({ id: '1', x: { a: 'a', b: 'b' } }).success).toBe(true);
    expect(action.schema.safeParse({ id: '1', x: { a: 'a', b: 'b' } }).success).toBe(false);
  });

  const refused: [string, z.ZodType, RegExp, string][] = [
    ['z.coerce', z.coerce.number(), /z\.coerce/, 'input.x'],
    [
      'z.coerce deep in an array of objects',
      z.array(z.object({ n: z.coerce.number() })),
      /z\.coerce/,
      'input.x[].n',
    ],
    ['z.coerce inside a union', z.union([z.string(), z.coerce.boolean()]), /z\.coerce/, 'input.x'],
    ['a transform', z.string().transform((s) => s.length), /transform/, 'input.x'],
    ['a type-preserving transform', z.string().transform((s) => s.trim()), /transform/, 'input.x'],
    ['preprocess', z.preprocess((v) => String(v), z.string()), /preprocess/, 'input.x'],
    ['.catch()', z.string().catch('fallback'), /\.catch\(\)/, 'input.x'],
    ['a loose object', z.looseObject({ a: z.string() }), /unknown keys/, 'input.x'],
    ['a passthrough object', z.object({ a: z.string() }).passthrough(), /unknown keys/, 'input.x'],
    [
      'a catchall object',
      z.object({ a: z.string() }).catchall(z.string()),
      /unknown keys/,
      'input.x',
    ],
    [
      'an intersection of objects',
      z.intersection(z.object({ a: z.string() }), z.object({ b: z.string() })),
      /extend/,
      'input.x',
    ],
    ['a date', z.date(), /canonical JSON/, 'input.x'],
    ['a bigint in a record', z.record(z.string(), z.bigint()), /canonical JSON/, 'input.x{}'],
  ];

  it.each(refused)('refuses %s at defineAction, naming where and why', (_what, x, why, path) => {
    let caught: unknown;
    try {
      contractWith(x);
    } catch (error) {
      caught = error;
    }
    expect(caught).toMatchObject({ code: 'action_contract_invalid', data: { path } });
    expect((caught as Error).message).toMatch(why);
    expect((caught as Error).message).toContain('test.contract@1');
  });
});
