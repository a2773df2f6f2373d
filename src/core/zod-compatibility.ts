/**
 * Which zod built a schema. Sideguard takes zod as a peer dependency (`^4`) and reads schema
 * internals to make contracts strict; a zod 3 schema, or one from a second copy of zod, would be
 * read wrongly or not at all, so `defineAction` refuses it with a message naming the versions.
 */
import { z } from 'zod';
import { ConfigurationError } from './errors.js';

/** The zod this process loaded for Sideguard, as `major.minor.patch`. */
export const LOADED_ZOD_VERSION = `${z.core.version.major}.${z.core.version.minor}.${z.core.version.patch}`;

const FIX =
  'Sideguard takes zod as a peer dependency ("zod": "^4"): install one zod 4 in your app, import { z } from "zod" there, and check `npm ls zod` shows a single copy (`npm dedupe` merges duplicates)';

/**
 * Throws when `schema` was built by zod 3 or by another copy of zod than the one Sideguard
 * loaded; anything else (a schema of this copy, or a value that is no zod schema at all, which
 * the caller reports itself) passes.
 * @throws ConfigurationError `zod_version_unsupported` (zod 3) or `zod_copy_mismatch`.
 */
export function checkZodCompatibility(schema: unknown, where: string): void {
  if (typeof schema !== 'object' || schema === null) return;
  const internals = (schema as { _zod?: { version?: unknown } })._zod;
  if (internals === undefined) {
    const typeName = (schema as { _def?: { typeName?: unknown } })._def?.typeName;
    if (typeof typeName === 'string' && typeName.startsWith('Zod')) {
      throw new ConfigurationError(
        'zod_version_unsupported',
        `${where}: input is a zod 3 schema (${typeName}), but Sideguard needs zod 4 (it loaded zod ${LOADED_ZOD_VERSION}). ${FIX}.`,
        { data: { schemaZodMajor: 3, loadedZod: LOADED_ZOD_VERSION } },
      );
    }
    return;
  }
  const version = internals.version as
    | { major?: unknown; minor?: unknown; patch?: unknown }
    | undefined;
  const theirs = `${String(version?.major)}.${String(version?.minor)}.${String(version?.patch)}`;
  if (theirs !== LOADED_ZOD_VERSION) {
    throw new ConfigurationError(
      version?.major === 4 ? 'zod_copy_mismatch' : 'zod_version_unsupported',
      `${where}: input was built by zod ${theirs}, another copy than the zod ${LOADED_ZOD_VERSION} Sideguard loaded; two copies disagree on schema internals, so the contract could not be made strict reliably. ${FIX}.`,
      { data: { schemaZod: theirs, loadedZod: LOADED_ZOD_VERSION } },
    );
  }
}
