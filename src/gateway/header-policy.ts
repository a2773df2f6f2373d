/**
 * Which headers cross the gateway. Credentials, cookies, hop-by-hop headers and anything that
 * looks secret are removed in both directions: agents never see the provider's credentials and
 * the provider never sees the agent's key. The gateway never logs headers at all.
 */

/** Request headers an agent may not send: they are the gateway's own (answered with 400). */
export const RESERVED_HEADER_PREFIX = 'x-sideguard-';

const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'host',
  'content-length',
  'expect',
  'accept-encoding',
]);

const SECRET_LOOKING = /authorization|cookie|token|secret|api[-_]?key|password|credential|session/i;

/** Whether a header looks like it carries a secret (and must never be forwarded or shown). */
export function isSecretLooking(name: string): boolean {
  return SECRET_LOOKING.test(name);
}

/** Whether an agent's request header may be forwarded upstream (names are lower-case). */
export function forwardableRequestHeader(name: string): boolean {
  return (
    !HOP_BY_HOP.has(name) &&
    !name.startsWith(RESERVED_HEADER_PREFIX) &&
    !name.startsWith('proxy-') &&
    !isSecretLooking(name)
  );
}

/** Whether an upstream's response header may reach the agent (names are lower-case). */
export function returnableResponseHeader(name: string): boolean {
  return (
    !HOP_BY_HOP.has(name) &&
    !name.startsWith('proxy-') &&
    (name === 'www-authenticate' || !isSecretLooking(name))
  );
}
