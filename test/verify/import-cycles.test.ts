/**
 * Imports flow one way in the verifier, the sandbox and the CLI (STYLE.md): a module that two
 * others share sits below both. Type-only imports count too — a cycle of types is still a knot a
 * newcomer has to untie. Reads the TypeScript sources, so it needs no build.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const folders = ['src/verify', 'src/sandbox', 'src/cli'];

function sources(folder: string): string[] {
  return readdirSync(join(root, folder), { withFileTypes: true, recursive: true })
    .filter(
      (entry) => entry.isFile() && entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts'),
    )
    .map((entry) => join(entry.parentPath, entry.name));
}

function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const found: string[] = [];
  for (const match of text.matchAll(/(?:import|export)\s[^'";]*?from\s*['"](\.[^'"]+)['"]/g)) {
    const specifier = match[1];
    if (specifier !== undefined)
      found.push(resolve(dirname(file), specifier.replace(/\.js$/, '.ts')));
  }
  return found;
}

/** Each file's imports among `files`. */
function graphOf(files: readonly string[]): ReadonlyMap<string, readonly string[]> {
  const inScope = new Set(files);
  return new Map(files.map((file) => [file, importsOf(file).filter((f) => inScope.has(f))]));
}

/** Every cycle's members (empty when the graph is acyclic). */
function cycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const found: string[][] = [];
  const visit = (file: string): void => {
    state.set(file, 'open');
    stack.push(file);
    for (const next of graph.get(file) ?? []) {
      if (state.get(next) === 'open') found.push(stack.slice(stack.indexOf(next)));
      else if (state.get(next) === undefined) visit(next);
    }
    stack.pop();
    state.set(file, 'done');
  };
  for (const file of graph.keys()) if (state.get(file) === undefined) visit(file);
  return found;
}

describe('import cycles', () => {
  it('there are none in src/verify, src/sandbox and src/cli', () => {
    const files = folders.flatMap(sources);
    expect(files.length).toBeGreaterThan(40);
    expect(cycles(graphOf(files)).map((cycle) => cycle.map((f) => relative(root, f)))).toEqual([]);
  });

  it('finds a knot when there is one, type-only or not', () => {
    expect(
      cycles(
        new Map([
          ['a', ['b']],
          ['b', ['c']],
          ['c', ['a']],
        ]),
      ),
    ).toEqual([['a', 'b', 'c']]);
    expect(
      cycles(
        new Map([
          ['a', ['b']],
          ['b', []],
        ]),
      ),
    ).toEqual([]);
    const runner = join(root, 'src/verify/scenario-runner.ts');
    expect(importsOf(runner)).toContain(join(root, 'src/verify/scenario-artifacts.ts'));
  });
});
