/**
 * Approver secrets are stored only as scrypt hashes (node:crypto, random salt) and compared in
 * constant time. `hashApproverSecret` makes the line a config holds (`sideguard approvers hash`
 * prints it); `verifyApproverSecret` checks a presented secret against it.
 * Format: `scrypt$<N>$<r>$<p>$<salt base64url>$<key base64url>`.
 */
import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto';

/** Options of {@link hashApproverSecret}. */
export interface HashApproverSecretOptions {
  /** scrypt cost N, a power of two. @default 16384 */
  readonly cost?: number;
  /** scrypt block size r. @default 8 */
  readonly blockSize?: number;
  /** scrypt parallelisation p. @default 1 */
  readonly parallelization?: number;
}

/** The shortest secret accepted, in characters. */
export const MIN_APPROVER_SECRET_LENGTH = 12;
const KEY_LENGTH = 32;
const SALT_LENGTH = 16;
const HASH_PATTERN =
  /^scrypt\$(\d{1,7})\$(\d{1,3})\$(\d{1,3})\$([A-Za-z0-9_-]{16,64})\$([A-Za-z0-9_-]{43})$/;

function derive(
  secret: string,
  salt: Buffer,
  parameters: { N: number; r: number; p: number },
): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(
      secret.normalize('NFC'),
      salt,
      KEY_LENGTH,
      { ...parameters, maxmem: 256 * parameters.N * parameters.r },
      (error, key) => (error === null ? resolve(key) : reject(error)),
    );
  });
}

/** A parsed hash line, or undefined when it is not one. */
export function parseApproverSecretHash(
  line: string,
): { N: number; r: number; p: number; salt: Buffer; key: Buffer } | undefined {
  const match = HASH_PATTERN.exec(line);
  if (match === null) return undefined;
  const [, n, r, p, salt, key] = match as unknown as [
    string,
    string,
    string,
    string,
    string,
    string,
  ];
  const N = Number(n);
  if (N < 1024 || (N & (N - 1)) !== 0 || Number(r) < 1 || Number(p) < 1) return undefined;
  return {
    N,
    r: Number(r),
    p: Number(p),
    salt: Buffer.from(salt, 'base64url'),
    key: Buffer.from(key, 'base64url'),
  };
}

/**
 * Hashes a secret for the config's `approvers[].secretHash`. The secret must have at least
 * {@link MIN_APPROVER_SECRET_LENGTH} characters.
 */
export async function hashApproverSecret(
  secret: string,
  options: HashApproverSecretOptions = {},
): Promise<string> {
  if (typeof secret !== 'string' || secret.length < MIN_APPROVER_SECRET_LENGTH) {
    throw new TypeError(
      `An approver secret needs at least ${MIN_APPROVER_SECRET_LENGTH} characters; generate one with \`openssl rand -base64 24\``,
    );
  }
  const parameters = {
    N: options.cost ?? 16_384,
    r: options.blockSize ?? 8,
    p: options.parallelization ?? 1,
  };
  const salt = randomBytes(SALT_LENGTH);
  const key = await derive(secret, salt, parameters);
  return `scrypt$${parameters.N}$${parameters.r}$${parameters.p}$${salt.toString('base64url')}$${key.toString('base64url')}`;
}

/** True when `secret` matches the hash line; false for a wrong secret or a malformed line. */
export async function verifyApproverSecret(secret: string, hashLine: string): Promise<boolean> {
  const parsed = parseApproverSecretHash(hashLine);
  if (parsed === undefined || typeof secret !== 'string' || secret.length > 1024) return false;
  const key = await derive(secret, parsed.salt, parsed);
  return key.length === parsed.key.length && timingSafeEqual(key, parsed.key);
}
