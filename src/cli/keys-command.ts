/** `sideguard keys generate|rotate`: make and rotate the key ring a deployment reads from SIDEGUARD_KEYS. */
import { randomBytes } from 'node:crypto';
import type { Command } from 'commander';
import { keyRingFromEnvironmentValue } from '../core/key-ring.js';
import { CliError } from './cli-errors.js';

const newSecret = (): string => randomBytes(32).toString('base64url');

/** A fresh one-key ring in the `SIDEGUARD_KEYS` text form. */
export function generateKeyRingValue(handle: string): string {
  const value = `current=${handle}:1;effect=${handle}:1;${handle}:1=${newSecret()}`;
  keyRingFromEnvironmentValue(value);
  return value;
}

/**
 * Adds a new current version to a ring. The effect key stays pinned (decision 002): semantic
 * effect keys must not change, or a retry after rotation would become a new effect.
 */
export function rotateKeyRingValue(existing: string): string {
  const ring = keyRingFromEnvironmentValue(existing);
  const { handle } = ring.current;
  const version =
    Math.max(
      ...ring
        .references()
        .filter((r) => r.handle === handle)
        .map((r) => r.version),
    ) + 1;
  const kept = existing
    .split(/[;\n]/)
    .map((entry) => entry.trim())
    .filter(
      (entry) => entry !== '' && !entry.startsWith('current=') && !entry.startsWith('effect='),
    );
  const effect = `${ring.effectKey.handle}:${ring.effectKey.version}`;
  const value = [
    `current=${handle}:${version}`,
    `effect=${effect}`,
    ...kept,
    `${handle}:${version}=${newSecret()}`,
  ].join(';');
  keyRingFromEnvironmentValue(value);
  return value;
}

export function registerKeysCommand(program: Command): void {
  const keys = program
    .command('keys')
    .description('Create and rotate the key ring (SIDEGUARD_KEYS)');
  keys
    .command('generate')
    .description(
      'Print a new key ring for SIDEGUARD_KEYS (keep it secret; store it like a password)',
    )
    .option('--handle <name>', 'the key handle', 'k1')
    .action((options: { handle: string }) => {
      if (!/^[a-z0-9][a-z0-9_-]{0,63}$/.test(options.handle)) {
        throw new CliError('--handle must be lowercase letters, digits, _ or - (at most 64)');
      }
      process.stdout.write(`${generateKeyRingValue(options.handle)}\n`);
    });
  keys
    .command('rotate')
    .description(
      'Read SIDEGUARD_KEYS and print it with a new current key (old keys kept for verification)',
    )
    .action(() => {
      const existing = process.env.SIDEGUARD_KEYS;
      if (existing === undefined || existing.trim() === '') {
        throw new CliError('SIDEGUARD_KEYS is not set: run `sideguard keys generate` first');
      }
      process.stdout.write(`${rotateKeyRingValue(existing)}\n`);
    });
}
