/**
 * Transpiles source folders into plain JavaScript under `node_modules/.cache`, so forked worker
 * processes run the current sources in Node 20 (which cannot run TypeScript) while `zod`, `pg`
 * and `better-sqlite3` still resolve from the project's `node_modules`.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const root = fileURLToPath(new URL('../../', import.meta.url));

function sources(path: string): string[] {
  if (statSync(path).isFile()) return [path];
  return readdirSync(path, { withFileTypes: true }).flatMap((entry) => {
    const child = join(path, entry.name);
    if (entry.isDirectory()) return sources(child);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') ? [child] : [];
  });
}

/** A transpiled tree: `resolve('test/x/y.js')` gives the path of a transpiled file. */
export interface TranspiledTree {
  resolve(relativePath: string): string;
  remove(): void;
}

/** Transpiles `paths` (folders or files, relative to the project root) into a fresh tree. */
export function transpileSources(label: string, paths: readonly string[]): TranspiledTree {
  const out = join(root, 'node_modules', '.cache', `sideguard-${label}-${process.pid}`);
  for (const path of paths) {
    for (const file of sources(join(root, path))) {
      const output = ts.transpileModule(readFileSync(file, 'utf8'), {
        fileName: file,
        compilerOptions: {
          module: ts.ModuleKind.ESNext,
          target: ts.ScriptTarget.ES2022,
          verbatimModuleSyntax: true,
        },
      });
      const target = join(out, relative(root, file)).replace(/\.ts$/, '.js');
      mkdirSync(dirname(target), { recursive: true });
      writeFileSync(target, output.outputText);
    }
  }
  writeFileSync(join(out, 'package.json'), '{ "type": "module" }\n');
  return {
    resolve: (relativePath) => join(out, relativePath),
    remove: () => rmSync(out, { recursive: true, force: true }),
  };
}
