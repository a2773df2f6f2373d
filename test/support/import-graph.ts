/** The static import graph of a built entry in dist/: every file it reaches and every bare import. */
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

/** Files reached from `start` by relative imports, and the bare specifiers they import. */
export function importGraph(start: string): { files: Set<string>; bare: Set<string> } {
  const files = new Set<string>();
  const bare = new Set<string>();
  const pending = [start];
  for (let file = pending.pop(); file !== undefined; file = pending.pop()) {
    if (files.has(file)) continue;
    files.add(file);
    const source = readFileSync(file, 'utf8');
    for (const match of source.matchAll(
      /(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)|import\s+['"]([^'"]+)['"]/g,
    )) {
      const specifier = match[1] ?? match[2] ?? match[3];
      if (specifier === undefined) continue;
      if (specifier.startsWith('.')) pending.push(resolve(dirname(file), specifier));
      else bare.add(specifier);
    }
  }
  return { files, bare };
}
