/**
 * Errors are recognised across two copies of the library (two installs, or a bundled and an
 * unbundled copy in one process), where `instanceof` only knows its own copy: the built package
 * is loaded twice from two paths, and an error thrown by one copy is recognised by the other.
 */
import {
  cpSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const scratch = mkdtempSync(join(tmpdir(), 'sideguard-two-copies-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

type Sideguard = typeof import('../src/index.js');

/** A copy of the built package at its own path; both resolve the one zod the host installed. */
async function loadCopy(name: string): Promise<Sideguard> {
  const directory = join(scratch, name);
  mkdirSync(directory, { recursive: true });
  cpSync(join(root, 'dist'), join(directory, 'dist'), { recursive: true });
  writeFileSync(join(directory, 'package.json'), JSON.stringify({ type: 'module' }));
  return (await import(pathToFileURL(join(directory, 'dist', 'index.js')).href)) as Sideguard;
}

symlinkSync(join(root, 'node_modules'), join(scratch, 'node_modules'), 'dir');
const first = await loadCopy('first');
const second = await loadCopy('second');

/** The error a call of `copy` throws. */
function thrownBy(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error('nothing was thrown');
}

describe('two copies of sideguard in one process', () => {
  it('are really two copies: instanceof does not see across them', () => {
    expect(first.SideguardError).not.toBe(second.SideguardError);
    const error = thrownBy(() => first.keyRingFromEnvironmentValue(undefined));
    expect(error).toBeInstanceOf(first.ConfigurationError);
    expect(error instanceof second.SideguardError).toBe(false);
  });

  it('recognise each other’s errors by their brand, class by class', () => {
    const error = thrownBy(() => first.keyRingFromEnvironmentValue(undefined));
    expect(second.isSideguardError(error)).toBe(true);
    expect(second.SideguardError.is(error)).toBe(true);
    expect(second.ConfigurationError.is(error)).toBe(true);
    expect(second.StoreInvariantError.is(error)).toBe(false);
    expect(second.ContractViolationError.is(error)).toBe(false);
    if (second.isSideguardError(error)) expect(error.code).toBe('key_ring_environment_invalid');

    const notFound = new first.ProposalNotFoundError('prop_1');
    expect(second.ProposalNotFoundError.is(notFound)).toBe(true);
    expect(second.SideguardError.is(notFound)).toBe(true);
    expect(second.ConfigurationError.is(notFound)).toBe(false);
  });

  it('do not take other errors, or look-alikes without the brand, for theirs', () => {
    const lookAlike = Object.assign(new Error('x'), { name: 'StoreInvariantError', code: 'x' });
    for (const value of [new Error('plain'), lookAlike, { code: 'x' }, null, 'error', 42]) {
      expect(second.isSideguardError(value)).toBe(false);
      expect(second.SideguardError.is(value)).toBe(false);
      expect(second.StoreInvariantError.is(value)).toBe(false);
    }
  });
});

describe('the package manifest', () => {
  it('takes zod as a peer dependency ^4, not as its own dependency', () => {
    const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
      dependencies?: Record<string, string>;
      peerDependencies?: Record<string, string>;
    };
    expect(manifest.peerDependencies?.zod).toBe('^4');
    expect(manifest.dependencies?.zod).toBeUndefined();
  });
});
