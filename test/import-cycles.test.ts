/**
 * Imports flow one way (STYLE.md): no module in src/ may reach itself through its relative
 * imports. Read from the sources, so a cycle fails here before it confuses a reader.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const srcRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', 'src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.tsx?$/.test(entry.name) && !/\.test\.tsx?$/.test(entry.name) ? [path] : [];
  });
}

/** Relative, value-level imports of a file (type-only imports do not load a module). */
function importsOf(file: string): string[] {
  const source = readFileSync(file, 'utf8');
  const found: string[] = [];
  for (const match of source.matchAll(
    /(?:^|\n)\s*(?:import|export)\s+(?!type\s)[^'"]*?from\s*['"](\.[^'"]+)['"]/g,
  )) {
    const specifier = match[1];
    if (specifier === undefined) continue;
    found.push(resolve(dirname(file), specifier.replace(/\.js$/, '.ts')));
  }
  return found;
}

/** Every cycle found by a depth-first walk, as the list of files around it. */
function findCycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const state = new Map<string, 'visiting' | 'done'>();
  const stack: string[] = [];
  const cycles: string[][] = [];
  const visit = (file: string): void => {
    if (state.get(file) === 'done') return;
    if (state.get(file) === 'visiting') {
      cycles.push([...stack.slice(stack.indexOf(file)), file]);
      return;
    }
    state.set(file, 'visiting');
    stack.push(file);
    for (const next of graph.get(file) ?? []) if (graph.has(next)) visit(next);
    stack.pop();
    state.set(file, 'done');
  };
  for (const file of graph.keys()) visit(file);
  return cycles;
}

describe('the import graph of src/', () => {
  it('has no cycles', () => {
    const files = sourceFiles(srcRoot);
    expect(files.length).toBeGreaterThan(20);
    const graph = new Map(files.map((file) => [file, importsOf(file)]));
    const cycles = findCycles(graph).map((cycle) =>
      cycle.map((file) => file.slice(srcRoot.length + 1)).join(' → '),
    );
    expect(cycles).toEqual([]);
  });

  it('reports a cycle through three modules, and none in a chain', () => {
    const cyclic = new Map([
      ['a', ['b']],
      ['b', ['c']],
      ['c', ['a']],
    ]);
    expect(findCycles(cyclic)).toEqual([['a', 'b', 'c', 'a']]);
    const chain = new Map([
      ['a', ['b', 'c']],
      ['b', ['c']],
      ['c', []],
    ]);
    expect(findCycles(chain)).toEqual([]);
  });

  it('reads value imports across lines and ignores type-only imports', () => {
    const execute = join(srcRoot, 'core', 'guard', 'execute.ts');
    const imports = importsOf(execute);
    expect(imports).toContain(join(srcRoot, 'core', 'guard', 'guard-context.ts'));
    expect(imports).not.toContain(join(srcRoot, 'core', 'guard', 'guard-types.ts'));
  });
});
