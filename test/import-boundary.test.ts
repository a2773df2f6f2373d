/**
 * Importing `sideguard` must load no database driver, HTTP server or agent SDK: the root entry
 * is checked statically (its import graph in dist/) and at run time (a fresh Node process).
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { importGraph } from './support/import-graph.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const entry = join(root, 'dist', 'index.js');
const FORBIDDEN = [
  /^pg$/,
  /^better-sqlite3$/,
  /^node:(http|https|http2|net|tls|dgram|child_process|fs)/,
  /^(undici|stripe|commander|@modelcontextprotocol|ai|openai)/,
  /^@(openai|langchain|ai-sdk)\//,
];

describe('the root entry', () => {
  it('is built (npm test builds before it tests)', () => {
    expect(existsSync(entry)).toBe(true);
  });

  it('imports no database driver, network server or agent SDK anywhere in its graph', () => {
    const { bare, files } = importGraph(entry);
    expect(files.size).toBeGreaterThan(5);
    const forbidden = [...bare].filter((name) => FORBIDDEN.some((pattern) => pattern.test(name)));
    expect(forbidden).toEqual([]);
    expect([...bare].sort()).toEqual(['node:buffer', 'node:crypto', 'zod']);
  });

  it('loads no such module at run time in a fresh process', () => {
    const script = `
      await import(${JSON.stringify(entry)});
      const loaded = process.moduleLoadList.filter((m) => /^NativeModule (http|https|net|tls|child_process)$/.test(m));
      const req = (await import('node:module')).createRequire(import.meta.url);
      const cached = Object.keys(req.cache ?? {}).filter((p) => /node_modules\\/(pg|better-sqlite3)\\//.test(p));
      console.log(JSON.stringify({ loaded, cached }));`;
    const output = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
      encoding: 'utf8',
    });
    expect(JSON.parse(output)).toEqual({ loaded: [], cached: [] });
  });

  it('shows that the check can fail: the sqlite entry does load its driver', () => {
    const sqliteEntry = join(root, 'dist', 'stores', 'sqlite', 'index.js');
    if (!existsSync(sqliteEntry)) return;
    const { bare } = importGraph(sqliteEntry);
    expect(bare.has('better-sqlite3')).toBe(true);
  });
});
