/**
 * What the new entries load: `sideguard/executor-kit` needs only undici; `sideguard/stripe`
 * loads neither `stripe` (the caller's client is passed in; only its types are used) nor undici
 * (the caller's transport is passed in). Read from the built import graph.
 */
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { importGraph } from '../support/import-graph.js';

const dist = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', 'dist');

const bareImports = (start: string): string[] => [...importGraph(start).bare].sort();

describe('the new entries', () => {
  it('sideguard/executor-kit imports only undici', () => {
    expect(bareImports(join(dist, 'executor-kit', 'index.js'))).toEqual(['undici']);
  });

  it('sideguard/stripe imports neither stripe nor undici', () => {
    expect(bareImports(join(dist, 'adapters', 'stripe', 'index.js'))).toEqual(['node:async_hooks']);
  });
});
