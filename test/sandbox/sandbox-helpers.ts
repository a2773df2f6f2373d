/**
 * Shared helpers for sandbox integration tests: start a sandbox on ephemeral ports in a temp
 * dir, call its data plane over real HTTP, and send raw requests whose connection may die.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type RunningSandbox, type StartSandboxOptions, startSandbox } from 'sideguard/sandbox';

/** The default keys shipped with the providers. */
export const keys = {
  paymentsWriter: 'sk_test_sideguard_agent',
  paymentsReader: 'rk_test_sideguard_readonly',
  crmWriter: 'pat-sandbox-sideguard-agent',
  crmReader: 'pat-sandbox-sideguard-readonly',
  issuesWriter: 'jira-sideguard-agent',
  issuesReader: 'jira-sideguard-readonly',
  orders: 'orders_test_sideguard_agent',
} as const;

/** A temp directory removed by `cleanup`. */
export async function tempDir(
  prefix = 'sideguard-sandbox-',
): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

/** Starts a sandbox in a fresh temp dir; `stop` closes it and removes the dir. */
export async function startTestSandbox(
  options: Partial<StartSandboxOptions> = {},
): Promise<RunningSandbox & { readonly stop: () => Promise<void> }> {
  const { dir, cleanup } = await tempDir();
  const sandbox = await startSandbox({
    stateDir: dir,
    seed: 42,
    controlToken: 'test-control-token-0123456789',
    ...options,
  });
  return {
    ...sandbox,
    close: () => sandbox.close(),
    stop: async () => {
      await sandbox.close();
      await cleanup();
    },
  };
}

/** A data-plane answer. */
export interface Answer {
  readonly status: number;
  readonly headers: Headers;
  // biome-ignore lint/suspicious/noExplicitAny: tests read provider bodies field by field and assert each.
  readonly body: any;
  readonly text: string;
}

/** Calls the data plane; `form` is sent form-encoded, `json` as JSON. */
export async function call(
  baseUrl: string,
  method: string,
  path: string,
  options: {
    key?: string;
    form?: Record<string, string>;
    json?: unknown;
    body?: string;
    headers?: Record<string, string>;
  } = {},
): Promise<Answer> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.key !== undefined) headers.Authorization = `Bearer ${options.key}`;
  let body: string | undefined = options.body;
  if (options.form !== undefined) {
    headers['Content-Type'] ??= 'application/x-www-form-urlencoded';
    body = new URLSearchParams(options.form).toString();
  }
  if (options.json !== undefined) {
    headers['Content-Type'] ??= 'application/json';
    body = JSON.stringify(options.json);
  }
  const response = await fetch(`${baseUrl}${path}`, {
    method,
    headers,
    ...(body === undefined ? {} : { body }),
  });
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = text.length === 0 ? undefined : JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return { status: response.status, headers: response.headers, body: parsed, text };
}

/** What a raw request ended with: a response, or the connection dying with no response bytes. */
export type RawOutcome =
  | {
      readonly kind: 'response';
      readonly status: number;
      readonly body: string;
      readonly headers: Record<string, string | string[] | undefined>;
    }
  | { readonly kind: 'connection_error'; readonly code: string | undefined }
  | { readonly kind: 'timeout' };

/** Sends one request on a fresh connection and reports how it ended. */
export function rawRequest(
  baseUrl: string,
  method: string,
  path: string,
  options: { headers?: Record<string, string>; body?: string; timeoutMs?: number } = {},
): Promise<RawOutcome> {
  // The path is sent as given (no URL normalisation), so traversal attempts reach the server.
  const url = new URL(baseUrl);
  return new Promise((resolve) => {
    const outgoing = httpRequest(
      {
        hostname: url.hostname,
        port: url.port,
        path,
        method,
        headers: options.headers,
        agent: false,
      },
      (incoming) => {
        const chunks: Buffer[] = [];
        incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
        incoming.on('end', () =>
          resolve({
            kind: 'response',
            status: incoming.statusCode ?? 0,
            body: Buffer.concat(chunks).toString('utf8'),
            headers: incoming.headers,
          }),
        );
        incoming.on('error', (error: NodeJS.ErrnoException) =>
          resolve({ kind: 'connection_error', code: error.code }),
        );
      },
    );
    if (options.timeoutMs !== undefined) {
      outgoing.setTimeout(options.timeoutMs, () => {
        outgoing.destroy();
        resolve({ kind: 'timeout' });
      });
    }
    outgoing.on('error', (error: NodeJS.ErrnoException) =>
      resolve({ kind: 'connection_error', code: error.code }),
    );
    outgoing.end(options.body);
  });
}

/** Headers for a form POST to the payments provider. */
export function formHeaders(
  key: string = keys.paymentsWriter,
  extra: Record<string, string> = {},
): Record<string, string> {
  return {
    Authorization: `Bearer ${key}`,
    'Content-Type': 'application/x-www-form-urlencoded',
    ...extra,
  };
}
