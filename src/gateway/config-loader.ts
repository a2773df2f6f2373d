/**
 * Loads `sideguard.config.ts` / `.mts` / `.mjs` / `.js` without a build step (jiti transpiles
 * TypeScript on the fly; JavaScript goes through Node's own loader) and compiles it. Every failure — a missing file, a syntax error, a
 * throwing `defineAction`, a bad field — becomes a `GatewayConfigError` naming the file, the path
 * inside it and what to change.
 */
import { existsSync, statSync } from 'node:fs';
import { dirname, extname, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createJiti } from 'jiti';
import { SideguardError } from '../core/errors.js';
import { compileGatewayConfig, GatewayConfigError } from './config-compile.js';
import type { GatewayConfig } from './config-types.js';
import type { GatewayTable } from './gateway-table.js';

/** The names `sideguard serve` looks for when `--config` is not given, in order. */
export const DEFAULT_CONFIG_FILES = [
  'sideguard.config.ts',
  'sideguard.config.mts',
  'sideguard.config.mjs',
  'sideguard.config.js',
] as const;

const EXTENSIONS = new Set(['.ts', '.mts', '.mjs', '.js']);

/** A loaded, compiled config. */
export interface LoadedGatewayConfig {
  /** Absolute path of the config file. */
  readonly file: string;
  /** Its directory: relative paths in the config resolve against it. */
  readonly directory: string;
  readonly config: GatewayConfig;
  readonly table: GatewayTable;
}

/** Finds the config file: `explicit`, else the first default name in `cwd`. */
export function locateConfigFile(explicit: string | undefined, cwd: string): string {
  if (explicit !== undefined) return resolve(cwd, explicit);
  for (const name of DEFAULT_CONFIG_FILES) {
    const candidate = resolve(cwd, name);
    if (existsSync(candidate)) return candidate;
  }
  throw new GatewayConfigError(resolve(cwd, DEFAULT_CONFIG_FILES[0]), [
    {
      path: '(file)',
      message: `no config found in ${cwd}: create ${DEFAULT_CONFIG_FILES[0]} or pass --config FILE`,
    },
  ]);
}

const describe = (error: unknown): string => {
  if (error instanceof SideguardError) return `${error.message} (${error.code})`;
  if (error instanceof Error) return error.message.split('\n')[0] ?? error.name;
  return String(error);
};

/** Imports the file and returns its default export (not yet checked). */
export async function importConfigModule(file: string): Promise<unknown> {
  if (!existsSync(file) || !statSync(file).isFile()) {
    throw new GatewayConfigError(file, [
      { path: '(file)', message: 'the file does not exist; check the --config path' },
    ]);
  }
  if (!EXTENSIONS.has(extname(file))) {
    throw new GatewayConfigError(file, [
      {
        path: '(file)',
        message: `a config is a .ts, .mts, .mjs or .js file, not ${extname(file) || 'a file without extension'}`,
      },
    ]);
  }
  try {
    if (extname(file) === '.mjs' || extname(file) === '.js') {
      // Plain JavaScript needs no transpiler; Node's own loader is faster.
      const module = (await import(pathToFileURL(file).href)) as { default?: unknown };
      return module.default;
    }
    // A fresh module cache each time, so a second load after an edit sees the edit.
    const jiti = createJiti(import.meta.url, { moduleCache: false, fsCache: false });
    return await jiti.import(file, { default: true });
  } catch (error) {
    throw new GatewayConfigError(file, [
      {
        path: '(file)',
        message: `loading the file failed: ${describe(error)}; fix the file so that it default-exports defineConfig({ … })`,
      },
    ]);
  }
}

/** Loads and compiles a config file. @throws GatewayConfigError with every problem found. */
export async function loadGatewayConfig(file: string): Promise<LoadedGatewayConfig> {
  const absolute = resolve(file);
  const value = await importConfigModule(absolute);
  const compiled = compileGatewayConfig(value);
  if (compiled.kind === 'invalid') throw new GatewayConfigError(absolute, compiled.problems);
  return {
    file: absolute,
    directory: dirname(absolute),
    config: value as GatewayConfig,
    table: compiled.table,
  };
}
