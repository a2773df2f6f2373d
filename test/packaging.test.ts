/**
 * The package as a third party installs it (issue 8, packaging): `sideguard/testing` imports no
 * test framework or devDependency and runs its conformance suite under `node:test`; its
 * property cases need the optional peer fast-check and say so when it is missing; `pg` is an
 * optional peer loaded only when a PostgreSQL store is created. Runs the built package (dist/)
 * by its own name in fresh Node processes; a loader hook plays "not installed".
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { projectRoot } from './support/cli.js';
import { importGraph } from './support/import-graph.js';

const manifest = JSON.parse(readFileSync(join(projectRoot, 'package.json'), 'utf8')) as {
  dependencies: Record<string, string>;
  peerDependencies: Record<string, string>;
  peerDependenciesMeta: Record<string, { optional?: boolean }>;
  devDependencies: Record<string, string>;
};
// A consumer project with this package installed (a link, as `npm install ../sideguard` does).
const scratch = mkdtempSync(join(tmpdir(), 'sideguard-consumer-'));
writeFileSync(join(scratch, 'package.json'), '{ "private": true, "type": "module" }\n');
mkdirSync(join(scratch, 'node_modules'));
symlinkSync(projectRoot, join(scratch, 'node_modules', 'sideguard'), 'dir');
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** A `--import` that makes `name` look not installed (ERR_MODULE_NOT_FOUND, as Node says it). */
function without(name: string): string[] {
  const hooks = `export async function resolve(specifier, context, next) {
    if (specifier === ${JSON.stringify(name)}) {
      const error = new Error("Cannot find package '${name}' imported from " + context.parentURL);
      error.code = 'ERR_MODULE_NOT_FOUND';
      throw error;
    }
    return next(specifier, context);
  }`;
  const register = `import { register } from 'node:module'; register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(hooks)}`)});`;
  return ['--import', `data:text/javascript,${encodeURIComponent(register)}`];
}

/** Runs `source` as an ES module file of the consumer project with `node --test` (TAP). */
function runNodeTest(name: string, source: string, nodeArgs: readonly string[] = []) {
  const file = join(scratch, name);
  writeFileSync(file, source);
  const run = spawnSync(process.execPath, [...nodeArgs, '--test', '--test-reporter=tap', file], {
    cwd: projectRoot,
    encoding: 'utf8',
    timeout: 240_000,
  });
  const count = (label: string) =>
    Number(run.stdout.match(new RegExp(`^# ${label} (\\d+)$`, 'm'))?.[1]);
  return { ...run, pass: count('pass'), fail: count('fail'), skipped: count('skipped') };
}

const conformanceUnderNodeTest = `
import { describe, it } from 'node:test';
import { createMemoryStore, runStoreConformance } from 'sideguard/testing';
runStoreConformance({
  name: 'memory under node:test',
  newStore: async () => createMemoryStore(),
  describe,
  it,
  propertyRuns: 5,
  skip: [{ reason: 'shows that a skip reaches node:test', tests: ['the same digest may be stored for two different proposals'] }],
});
`;

describe('sideguard/testing for a third-party store author', () => {
  it('imports only Node built-ins, runtime dependencies and optional peers (no test framework)', () => {
    const { bare, files } = importGraph(join(projectRoot, 'dist', 'testing.js'));
    expect(files.size).toBeGreaterThan(10);
    const optionalPeers = Object.keys(manifest.peerDependencies).filter(
      (name) => manifest.peerDependenciesMeta[name]?.optional === true,
    );
    const allowed = new Set([...Object.keys(manifest.dependencies), ...optionalPeers]);
    const builtins = new Set(builtinModules);
    const foreign = [...bare].filter(
      (name) => !name.startsWith('node:') && !builtins.has(name) && !allowed.has(name),
    );
    expect(foreign).toEqual([]);
    expect(bare.has('vitest')).toBe(false);
    expect(bare.has('fast-check')).toBe(true);
    expect(manifest.devDependencies.vitest).toBeDefined();
  });

  it('runs the whole conformance suite under node:test (not Vitest) against the memory store', () => {
    const run = runNodeTest('conformance.mjs', conformanceUnderNodeTest);
    expect(run.status, run.stdout.slice(-3000) + run.stderr).toBe(0);
    expect(run.fail).toBe(0);
    expect(run.skipped).toBe(1);
    expect(run.pass).toBeGreaterThan(40);
    expect(run.stdout).toMatch(/# SKIP/);
    expect(run.stdout).toContain(
      'a random sequence of commits decides exactly as the memory model',
    );
  });

  it('without fast-check, only the two property cases fail, and they say what to install', () => {
    const run = runNodeTest(
      'conformance-no-fast-check.mjs',
      conformanceUnderNodeTest,
      without('fast-check'),
    );
    expect(run.status).toBe(1);
    expect(run.fail).toBe(2);
    expect(run.pass).toBeGreaterThan(40);
    expect(run.stdout).toContain('npm install --save-dev fast-check@^4');
  });
});

describe('pg is an optional peer', () => {
  const script = `
    const store = await import('sideguard/postgres');
    const sqlite = await import('sideguard/sqlite');
    const result = { exports: typeof store.createPostgresStore, sqlite: typeof sqlite.createSqliteStore };
    try {
      await store.createPostgresStore({ connectionString: 'postgres://127.0.0.1:1/none' });
    } catch (error) {
      Object.assign(result, { name: error.name, code: error.code, message: error.message });
    }
    console.log(JSON.stringify(result));`;

  it('importing sideguard/postgres without pg works; creating a store says to install pg', () => {
    const output = execFileSync(
      process.execPath,
      [...without('pg'), '--input-type=module', '-e', script],
      { cwd: scratch, encoding: 'utf8' },
    );
    const result = JSON.parse(output) as Record<string, string>;
    expect(result).toMatchObject({
      exports: 'function',
      sqlite: 'function',
      name: 'ConfigurationError',
      code: 'store_driver_missing',
    });
    expect(result.message).toContain('npm install pg');
  });

  it('is declared as an optional peer, not a dependency, and the benchmark peers are not in the root package', () => {
    expect(manifest.dependencies.pg).toBeUndefined();
    expect(manifest.peerDependencies.pg).toMatch(/^\^8\./);
    expect(manifest.peerDependenciesMeta.pg).toEqual({ optional: true });
    expect(manifest.dependencies['better-sqlite3']).toBeDefined();
    for (const name of [
      '@stoplight/prism-cli',
      '@aws-lambda-powertools/idempotency',
      '@redis/client',
    ]) {
      expect({ name, dev: manifest.devDependencies[name] }).toEqual({ name, dev: undefined });
    }
  });
});
