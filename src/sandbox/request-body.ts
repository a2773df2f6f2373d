/**
 * Reads a data-plane request body under a size limit, telling a too-large body and a client
 * that went away apart from a complete one.
 */
import type { IncomingMessage } from 'node:http';
import { headerValue } from './provider-kit.js';

/** How reading a body ended. */
export type BodyResult =
  | { readonly kind: 'body'; readonly body: Buffer }
  | { readonly kind: 'too_large' }
  | { readonly kind: 'aborted' };

/**
 * Reads the whole body; a declared or actual size above `limitBytes` is `too_large` (the rest is
 * drained, never buffered), a connection that closes first is `aborted`.
 */
export function readBody(request: IncomingMessage, limitBytes: number): Promise<BodyResult> {
  const declared = Number(headerValue(request.headers, 'content-length') ?? '0');
  if (Number.isFinite(declared) && declared > limitBytes) {
    request.resume();
    return Promise.resolve({ kind: 'too_large' });
  }
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const settle = (result: BodyResult): void => {
      if (settled) return;
      settled = true;
      resolve(result);
    };
    request.on('data', (chunk: Buffer) => {
      if (settled) return;
      size += chunk.length;
      if (size > limitBytes) {
        settle({ kind: 'too_large' });
        return;
      }
      chunks.push(chunk);
    });
    request.on('end', () => settle({ kind: 'body', body: Buffer.concat(chunks) }));
    request.on('error', () => settle({ kind: 'aborted' }));
    request.on('close', () =>
      settle(
        request.complete ? { kind: 'body', body: Buffer.concat(chunks) } : { kind: 'aborted' },
      ),
    );
  });
}
