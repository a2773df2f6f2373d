/**
 * `startSandbox`: opens the state directory, starts the data plane and the control plane, and
 * returns their addresses, a control client and `close()`. The one entry point tests and the
 * CLI share.
 */
import { randomBytes } from 'node:crypto';
import { chmod, lstat, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import { SandboxControlClient } from './control-client.js';
import { createControlPlaneHandler } from './control-plane.js';
import { createDataPlaneHandler, defaultBodyLimitBytes } from './data-plane.js';
import { type FaultPlan, parseFaultPlan } from './fault-plan.js';
import { KeyTable, type SandboxApiKey } from './identity.js';
import { builtInProviders } from './providers/provider-registry.js';
import { SandboxConfigError } from './sandbox-errors.js';
import { type IdempotencyMode, SandboxRuntime } from './sandbox-runtime.js';
import type { ProviderDefinition, ProviderName } from './sandbox-types.js';
import { FileStateStore, type ProvidersState, SandboxDurability } from './state-store.js';

/** Environment variable the control token is read from when no token option is given. */
export const controlTokenEnvironmentVariable = 'SIDEGUARD_SANDBOX_TOKEN';

/** Where the control token came from. */
export const ControlTokenSource = {
  option: 'option',
  environment: 'environment',
  generated: 'generated',
} as const;
export type ControlTokenSource = (typeof ControlTokenSource)[keyof typeof ControlTokenSource];

/** Options of {@link startSandbox}. */
export interface StartSandboxOptions {
  /** Providers to serve, by name or definition. @default all built-in: payments, crm, issues, orders */
  readonly providers?: readonly (ProviderName | ProviderDefinition)[];
  /** Directory holding state, journal and snapshots; created when missing; one sandbox at a time. */
  readonly stateDir: string;
  /** Seed for seed data, ids and probabilistic faults. @default the stored seed, else 1 */
  readonly seed?: number;
  /** A fault plan (validated; see `parseFaultPlan`); reset restores it. @default none */
  readonly faults?: FaultPlan | unknown;
  /** Data-plane port on 127.0.0.1; 0 picks a free one. @default 0 */
  readonly port?: number;
  /** Control-plane port on 127.0.0.1; 0 picks a free one. Ignored when `controlSocket` is set. @default 0 */
  readonly controlPort?: number;
  /** Unix socket path for the control plane (mode 0600) instead of a port. */
  readonly controlSocket?: string;
  /** Control bearer token. @default $SIDEGUARD_SANDBOX_TOKEN, else 32 random bytes (base64url) */
  readonly controlToken?: string;
  /** Per provider: honour Stripe-style idempotency keys, or ignore them. @default honour */
  readonly idempotency?: { readonly payments?: IdempotencyMode } & Readonly<
    Record<string, IdempotencyMode>
  >;
  /** Largest data-plane request body, in bytes; larger gets 413. @default 65 536 */
  readonly bodyLimitBytes?: number;
  /** Accepted API keys. @default every provider's `defaultKeys` */
  readonly apiKeys?: readonly SandboxApiKey[];
  /** How a commit reaches storage before the answer. @default 'fsync' */
  readonly durability?: SandboxDurability;
  /** Clock in milliseconds since the epoch. @default Date.now */
  readonly nowMs?: () => number;
}

/** A running sandbox. */
export interface RunningSandbox {
  /** `http://127.0.0.1:<port>` of the data plane. */
  readonly dataUrl: string;
  /** `http://127.0.0.1:<port>` of the control plane, or `undefined` when on a Unix socket. */
  readonly controlUrl: string | undefined;
  /** Unix socket of the control plane, or `undefined` when on a port. */
  readonly controlSocket: string | undefined;
  readonly controlToken: string;
  readonly controlTokenSource: ControlTokenSource;
  readonly control: SandboxControlClient;
  readonly seed: number;
  readonly stateDir: string;
  readonly providers: readonly string[];
  /** Stops both planes, aborts held requests and hangs, flushes and releases the state. Idempotent. */
  close(): Promise<void>;
}

/** Starts a sandbox. Throws `SandboxConfigError` for bad options, plans or a locked state dir. */
export async function startSandbox(options: StartSandboxOptions): Promise<RunningSandbox> {
  const providers = resolveProviders(options.providers);
  const providerMap = new Map(providers.map((provider) => [provider.name, provider]));
  const bodyLimitBytes = options.bodyLimitBytes ?? defaultBodyLimitBytes;
  if (
    options.controlSocket === undefined &&
    options.port !== undefined &&
    options.port !== 0 &&
    options.port === options.controlPort
  ) {
    throw new SandboxConfigError(
      'sandbox_option_invalid',
      `The data plane and the control plane need different ports (both are ${options.port}): the control plane must never be reachable where providers' clients connect`,
    );
  }
  if (!Number.isInteger(bodyLimitBytes) || bodyLimitBytes < 1) {
    throw new SandboxConfigError(
      'sandbox_option_invalid',
      `Invalid bodyLimitBytes ${String(bodyLimitBytes)}: use a positive integer`,
    );
  }
  if (
    options.seed !== undefined &&
    (!Number.isInteger(options.seed) || options.seed < 0 || options.seed > 2 ** 32 - 1)
  ) {
    throw new SandboxConfigError(
      'sandbox_option_invalid',
      `Invalid seed ${String(options.seed)}: use an integer from 0 to 4294967295`,
    );
  }
  for (const [name, mode] of Object.entries(options.idempotency ?? {})) {
    if (!providerMap.get(name)?.idempotency) {
      throw new SandboxConfigError(
        'sandbox_option_invalid',
        `Invalid idempotency option: provider ${JSON.stringify(name)} is not enabled or has no idempotency keys`,
      );
    }
    if (mode !== 'honour' && mode !== 'ignore') {
      throw new SandboxConfigError(
        'sandbox_option_invalid',
        `Invalid idempotency mode ${JSON.stringify(mode)} for ${name}: use "honour" or "ignore"`,
      );
    }
  }
  const faultPlan = options.faults === undefined ? null : parseFaultPlan(options.faults);
  const keys = new KeyTable(
    options.apiKeys ??
      providers.flatMap((provider) =>
        provider.defaultKeys.map((entry) => ({
          provider: provider.name,
          role: entry.role,
          key: entry.key,
        })),
      ),
    providerMap,
  );
  const { token, source } = resolveToken(options.controlToken);
  const nowMs = options.nowMs ?? Date.now;

  const store = await FileStateStore.open({
    stateDir: options.stateDir,
    seed: options.seed,
    durability: options.durability ?? SandboxDurability.fsync,
    seedState: (seed) => seedAll(providers, seed, nowMs()),
  });
  const servers: Server[] = [];
  let runtime: SandboxRuntime | undefined;
  try {
    // Inside the try: the runtime checks the plan's provider and operation names.
    runtime = new SandboxRuntime({
      providers,
      store,
      keys,
      faultPlan,
      idempotency: options.idempotency ?? {},
      bodyLimitBytes,
      nowMs,
    });
    let dataUrl = '';
    const dataServer = createServer(
      { keepAlive: true },
      createDataPlaneHandler(runtime, () => dataUrl),
    );
    servers.push(dataServer);
    const dataPort = await listenTcp(dataServer, options.port ?? 0);
    dataUrl = `http://127.0.0.1:${dataPort}`;

    const controlServer = createServer(
      createControlPlaneHandler(runtime, {
        token,
        dataUrl: () => dataUrl,
        initialFaultPlan: faultPlan,
      }),
    );
    servers.push(controlServer);
    let controlUrl: string | undefined;
    if (options.controlSocket === undefined) {
      controlUrl = `http://127.0.0.1:${await listenTcp(controlServer, options.controlPort ?? 0)}`;
    } else {
      await listenSocket(controlServer, options.controlSocket);
    }
    const control = new SandboxControlClient(
      controlUrl === undefined
        ? { socketPath: options.controlSocket ?? '', token }
        : { url: controlUrl, token },
    );
    let closing: Promise<void> | undefined;
    const started = runtime;
    return {
      dataUrl,
      controlUrl,
      controlSocket: options.controlSocket,
      controlToken: token,
      controlTokenSource: source,
      control,
      seed: store.seed,
      stateDir: options.stateDir,
      providers: providers.map((provider) => provider.name),
      close() {
        closing ??= (async () => {
          started.shutdown();
          await Promise.all(servers.map(closeServer));
          if (options.controlSocket !== undefined) await rm(options.controlSocket, { force: true });
          await store.close();
        })();
        return closing;
      },
    };
  } catch (error) {
    runtime?.shutdown();
    await Promise.all(servers.map(closeServer));
    await store.close();
    throw error;
  }
}

function resolveProviders(requested: StartSandboxOptions['providers']): ProviderDefinition[] {
  const list = (requested ?? Object.keys(builtInProviders)).map((entry) => {
    if (typeof entry !== 'string') return entry;
    const provider = builtInProviders[entry as ProviderName];
    if (provider === undefined) {
      throw new SandboxConfigError(
        'sandbox_option_invalid',
        `Unknown provider ${JSON.stringify(entry)} (built-in: ${Object.keys(builtInProviders).join(', ')})`,
      );
    }
    return provider;
  });
  const names = new Set<string>();
  for (const provider of list) {
    if (names.has(provider.name))
      throw new SandboxConfigError(
        'sandbox_option_invalid',
        `Provider ${provider.name} is listed twice`,
      );
    names.add(provider.name);
  }
  for (const provider of list) {
    for (const dependency of provider.dependsOn ?? []) {
      if (!names.has(dependency)) {
        throw new SandboxConfigError(
          'sandbox_option_invalid',
          `Provider ${provider.name} needs provider ${dependency}; enable it too`,
        );
      }
    }
  }
  return list;
}

function seedAll(
  providers: readonly ProviderDefinition[],
  seed: number,
  nowMs: number,
): ProvidersState {
  const state: ProvidersState = {};
  for (const provider of providers) {
    const collections = provider.seed(seed, nowMs);
    state[provider.name] = Object.fromEntries(
      Object.entries(collections).map(([collection, records]) => [
        collection,
        records.map((record) => [String(record.id), record]),
      ]),
    );
  }
  return state;
}

function resolveToken(option: string | undefined): { token: string; source: ControlTokenSource } {
  const fromEnvironment = process.env[controlTokenEnvironmentVariable];
  const [token, source] =
    option !== undefined
      ? [option, ControlTokenSource.option]
      : fromEnvironment !== undefined && fromEnvironment !== ''
        ? [fromEnvironment, ControlTokenSource.environment]
        : [randomBytes(32).toString('base64url'), ControlTokenSource.generated];
  if (!/^[\x21-\x7e]{16,512}$/.test(token)) {
    throw new SandboxConfigError(
      'sandbox_option_invalid',
      'Invalid control token: use 16–512 printable ASCII characters without spaces',
    );
  }
  return { token, source };
}

function listenTcp(server: Server, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(
        new SandboxConfigError(
          'sandbox_listen_failed',
          `Failed to listen on 127.0.0.1:${port}: ${error.code ?? error.message}`,
          { cause: error },
        ),
      ),
    );
    server.listen(port, '127.0.0.1', () => resolve((server.address() as AddressInfo).port));
  });
}

async function listenSocket(server: Server, socketPath: string): Promise<void> {
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

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    if (!server.listening) {
      resolve();
      return;
    }
    server.close(() => resolve());
    server.closeAllConnections();
  });
}
