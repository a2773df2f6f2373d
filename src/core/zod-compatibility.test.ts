import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { z as zodSecondCopy } from 'zod-second-copy';
import { z as zod3 } from 'zod3';
import { defineAction } from './action.js';
import { ConfigurationError } from './errors.js';

/** A minimal action around `input`, built by whichever zod the test hands in. */
function defineWith(input: unknown) {
  return defineAction({
    type: { namespace: 'support', name: 'note', version: 1 },
    input: input as z.ZodObject<{ ticket: z.ZodString }>,
    protectedFields: ['ticket'],
    policy: () => ({ decision: 'allow', reason: 'ok' }),
    execute: async () => ({ kind: 'accepted', receipt: { id: 'n1', provider: 'crm' } }),
    verify: async () => ({ kind: 'present', receipt: { id: 'n1', provider: 'crm' } }),
  });
}

function refusal(input: unknown): ConfigurationError {
  try {
    defineWith(input);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigurationError);
    return error as ConfigurationError;
  }
  throw new Error('defineAction accepted the schema');
}

const ours = `${z.core.version.major}.${z.core.version.minor}.${z.core.version.patch}`;

describe('zod versions', () => {
  it('accepts a schema of the zod copy sideguard loaded', () => {
    expect(defineWith(z.object({ ticket: z.string() })).typeName).toBe('support.note@1');
  });

  it('refuses a zod 3 schema with a message naming zod 3 and the zod 4 it needs', () => {
    const error = refusal(zod3.object({ ticket: zod3.string() }));
    expect(error.code).toBe('zod_version_unsupported');
    expect(error.message).toMatch(/is a zod 3 schema/);
    expect(error.message).toContain(`zod ${ours}`);
    expect(error.message).toMatch(/"zod": "\^4"/);
    expect(error.data).toMatchObject({ schemaZodMajor: 3, loadedZod: ours });
  });

  it('refuses a schema built by a second copy of zod 4, naming both versions', () => {
    const other = zodSecondCopy.core.version;
    const theirs = `${other.major}.${other.minor}.${other.patch}`;
    expect(theirs).not.toBe(ours);
    const error = refusal(zodSecondCopy.object({ ticket: zodSecondCopy.string() }));
    expect(error.code).toBe('zod_copy_mismatch');
    expect(error.message).toContain(`zod ${theirs}`);
    expect(error.message).toContain(`zod ${ours}`);
    expect(error.message).toMatch(/npm ls zod/);
    expect(error.data).toMatchObject({ schemaZod: theirs, loadedZod: ours });
  });

  it('still refuses what is not a schema at all with the usual message', () => {
    const error = refusal({ ticket: 'string' });
    expect(error.code).toBe('action_config_invalid');
    expect(error.message).toMatch(/input must be a z\.object/);
  });
});
