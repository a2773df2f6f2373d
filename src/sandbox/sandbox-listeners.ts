/**
 * Listening for the sandbox's planes: TCP on a host and port, or a Unix socket (mode 0600), with
 * failures as `SandboxConfigError`s that name the address; and closing them again.
 */
import { chmod, lstat, rm } from 'node:fs/promises';
import type { Server } from 'node:http';
import { type AddressInfo, connect, isIP } from 'node:net';
import { SandboxConfigError } from './sandbox-errors.js';

/** The address both planes listen on unless told otherwise: loopback only. */
export const defaultSandboxHost = '127.0.0.1';

/**
 * Checks a listen host: an IPv4 or IPv6 literal, or a host name (`localhost`). Throws
 * `SandboxConfigError` (`sandbox_option_invalid`) naming the option.
 */
export function checkHost(option: string, host: string): string {
  const name = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  const hostName =
    /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;
  if (isIP(name) === 0 && !hostName.test(name)) {
    throw new SandboxConfigError(
      'sandbox_option_invalid',
      `Invalid ${option} ${JSON.stringify(host)}: use an IP address (127.0.0.1, 0.0.0.0, ::1) or a host name`,
    );
  }
  return name;
}

/**
 * The URL a local client uses for a plane listening on `host:port`: a wildcard address
 * (`0.0.0.0`, `::`) is reached through loopback; IPv6 literals get brackets.
 */
export function urlFor(host: string, port: number): string {
  const reachable = host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '::1' : host;
  return `http://${isIP(reachable) === 6 ? `[${reachable}]` : reachable}:${port}`;
}

/** Listens on `host:port` (0 picks a free port); resolves with the port. */
export function listenTcp(server: Server, host: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(
        new SandboxConfigError(
          'sandbox_listen_failed',
          `Failed to listen on ${urlFor(host, port).slice('http://'.length)}: ${error.code ?? error.message}`,
          { cause: error },
        ),
      ),
    );
    server.listen(port, host, () => resolve((server.address() as AddressInfo).port));
  });
}

/** Listens on a Unix socket with mode 0600; a stale socket file is replaced, a live one refused. */
export async function listenSocket(server: Server, socketPath: string): Promise<void> {
  const existing = await lstat(socketPath).catch(() => undefined);
  if (existing !== undefined) {
    if (!existing.isSocket()) {
      throw new SandboxConfigError(
        'sandbox_listen_failed',
        `Failed to listen on ${socketPath}: a file that is not a socket is there`,
      );
    }
    if (await socketAnswers(socketPath)) {
      throw new SandboxConfigError(
        'sandbox_listen_failed',
        `Failed to listen on ${socketPath}: another process is serving it`,
      );
    }
    await rm(socketPath, { force: true });
  }
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(
        new SandboxConfigError(
          'sandbox_listen_failed',
          `Failed to listen on ${socketPath}: ${error.code ?? error.message}`,
          { cause: error },
        ),
      ),
    );
    server.listen({ path: socketPath, readableAll: false, writableAll: false }, () => resolve());
  });
  await chmod(socketPath, 0o600);
}

function socketAnswers(socketPath: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(socketPath);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** Stops listening and ends every open connection; resolves when the server is closed. */
export function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    if (!server.listening) {
      resolve();
      return;
    }
    server.close(() => resolve());
    server.closeAllConnections();
  });
}
