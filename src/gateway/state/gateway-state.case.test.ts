/**
 * Every gateway state store behaves the same: memory, SQLite (a temporary file) and PostgreSQL
 * (a fresh schema; skipped with a printed reason when none answers, unless
 * SIDEGUARD_REQUIRE_POSTGRES=1).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freshTestSchema, postgresTestUrl } from '../../../test/support/postgres.js';
import type { GatewayStateStore } from './gateway-state.js';
import { createMemoryGatewayState } from './memory-gateway-state.js';
import { createPostgresGatewayState } from './postgres-gateway-state.js';
import { createSqliteGatewayState } from './sqlite-gateway-state.js';

const url = await postgresTestUrl();
const directory = mkdtempSync(join(tmpdir(), 'sg-gateway-state-'));
const schemas: ReturnType<typeof freshTestSchema>[] = [];
afterAll(async () => {
  rmSync(directory, { recursive: true, force: true });
  for (const schema of schemas) await schema.drop();
});

let counter = 0;
const stores: [string, (() => Promise<GatewayStateStore>) | undefined][] = [
  ['memory', async () => createMemoryGatewayState()],
  ['sqlite', async () => createSqliteGatewayState({ path: join(directory, `s${++counter}.db`) })],
  [
    'postgres',
    url === undefined
      ? undefined
      : async () => {
          const schema = freshTestSchema(url, 'gateway_state');
          schemas.push(schema);
          return createPostgresGatewayState({ connectionString: url, schema: schema.schema });
        },
  ],
];

const shadow = (tenant: string, resource: string, sealed: string) => ({
  tenant,
  upstream: 'crm',
  resource,
  method: 'PATCH',
  recordedAtMs: 1_000,
  sealed,
});

for (const [name, open] of stores) {
  describe.skipIf(open === undefined)(`gateway state: ${name}`, () => {
    const fresh = async () => {
      if (open === undefined) throw new Error('skipped');
      return open();
    };

    it('returns the latest shadowed write of a resource, per tenant, and resets', async () => {
      const state = await fresh();
      try {
        await state.appendShadowWrite(shadow('acme', '/tickets/1?', 'first'));
        await state.appendShadowWrite(shadow('acme', '/tickets/1?', 'second'));
        await state.appendShadowWrite(shadow('globex', '/tickets/1?', 'other tenant'));
        expect((await state.latestShadowWrite('acme', 'crm', '/tickets/1?'))?.sealed).toBe(
          'second',
        );
        expect(await state.latestShadowWrite('acme', 'crm', '/tickets/2?')).toBeUndefined();
        expect(await state.latestShadowWrite('acme', 'payments', '/tickets/1?')).toBeUndefined();
        expect((await state.listShadowWrites('acme')).map((r) => r.sealed)).toEqual([
          'first',
          'second',
        ]);
        expect(await state.resetShadow('acme')).toBe(2);
        expect(await state.latestShadowWrite('acme', 'crm', '/tickets/1?')).toBeUndefined();
        expect((await state.listShadowWrites()).map((r) => r.sealed)).toEqual(['other tenant']);
        expect(await state.resetShadow()).toBe(1);
      } finally {
        await state.close();
      }
    });

    it('keeps replay cases per session in order', async () => {
      const state = await fresh();
      try {
        for (const key of ['GET /a?', 'GET /b?x=1']) {
          await state.appendReplayCase({
            session: 's1',
            upstream: 'payments',
            caseKey: key,
            recordedAtMs: 5,
            sealed: key,
          });
        }
        expect((await state.listReplayCases('s1')).map((r) => r.caseKey)).toEqual([
          'GET /a?',
          'GET /b?x=1',
        ]);
        expect(await state.listReplayCases('s2')).toEqual([]);
      } finally {
        await state.close();
      }
    });
  });
}
