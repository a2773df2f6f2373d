/**
 * `startSandbox`: checks every option, listens on both planes, then opens the state directory,
 * and returns the addresses, a control client and `close()`. The one entry point tests and the
 * CLI share. A start that fails leaves nothing behind: no port listening, and no state directory
 * or file it created.
 */
import { mkdir, rm } from 'node:fs/promises';
import { createServer, type RequestListener, type Server } from 'node:http';
import { SandboxControlClient } from './control-client.js';
import { createControlPlaneHandler } from './control-plane.js';
import { createDataPlaneHandler } from './data-plane.js';
import { SandboxConfigError } from './sandbox-errors.js';
import { closeServer, listenSocket, listenTcp, urlFor } from './sandbox-listeners.js';
import { SandboxRuntime } from './sandbox-runtime.js';
import type { ProviderDefinition } from './sandbox-types.js';
import {
  type ControlTokenSource,
  resolveStartSettings,
  type StartSandboxOptions,
} from './start-options.js';
import { FileStateStore, type ProvidersState, SandboxDurability } from './state-store.js';

/** A running sandbox. */
export interface RunningSandbox {
  /** `http://<host>:<port>` of the data plane (loopback when it listens on every interface). */
  readonly dataUrl: string;
  /** `http://<controlHost>:<port>` of the control plane, or `undefined` when on a Unix socket. */
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

/**
 * Starts a sandbox. Throws `SandboxConfigError` for bad options or plans, a port in use
 * (`sandbox_listen_failed`) or a state directory in use or of another seed.
 */
export async function startSandbox(options: StartSandboxOptions): Promise<RunningSandbox> {
  const settings = resolveStartSettings(options);
  const nowMs = options.nowMs ?? Date.now;
  const servers: Server[] = [];
  // Both planes listen before the state exists; a request that arrives meanwhile waits for it.
  let ready!: (runtime: SandboxRuntime) => void;
  let failed!: (error: unknown) => void;
  const runtimeReady = new Promise<SandboxRuntime>((resolve, reject) => {
    ready = resolve;
    failed = reject;
  });
  runtimeReady.catch(() => {});
  const whenReady =
    (build: (runtime: SandboxRuntime) => RequestListener): RequestListener =>
    (request, response) => {
      runtimeReady.then(
        (runtime) => build(runtime)(request, response),
        () => request.socket.destroy(),
      );
    };
  let dataUrl = '';
  let controlUrl: string | undefined;
  let createdDirectory: string | undefined;
  let socketCreated = false;
  let store: FileStateStore | undefined;
  let runtime: SandboxRuntime | undefined;
  try {
    const dataHandler = lazily((runtime) => createDataPlaneHandler(runtime, () => dataUrl));
    const dataServer = createServer({ keepAlive: true }, whenReady(dataHandler));
    servers.push(dataServer);
    dataUrl = urlFor(settings.host, await listenTcp(dataServer, settings.host, options.port ?? 0));

    const controlHandler = lazily((runtime) =>
      createControlPlaneHandler(runtime, {
        token: settings.token,
        dataUrl: () => dataUrl,
        initialFaultPlan: settings.faultPlan,
      }),
    );
    const controlServer = createServer(whenReady(controlHandler));
    servers.push(controlServer);
    if (options.controlSocket === undefined) {
      const port = await listenTcp(controlServer, settings.controlHost, options.controlPort ?? 0);
      controlUrl = urlFor(settings.controlHost, port);
    } else {
      await listenSocket(controlServer, options.controlSocket);
      socketCreated = true;
    }

    createdDirectory = await createStateDirectory(options.stateDir);
    store = await FileStateStore.open({
      stateDir: options.stateDir,
      seed: options.seed,
      durability: options.durability ?? SandboxDurability.fsync,
      seedState: (seed) => seedAll(settings.providers, seed, nowMs()),
    });
    runtime = new SandboxRuntime({
      providers: settings.providers,
      store,
      keys: settings.keys,
      faultPlan: settings.faultPlan,
      idempotency: options.idempotency ?? {},
      bodyLimitBytes: settings.bodyLimitBytes,
      nowMs,
    });
    ready(runtime);
  } catch (error) {
    failed(error);
    runtime?.shutdown();
    await Promise.all(servers.map(closeServer));
    if (socketCreated && options.controlSocket !== undefined) {
      await rm(options.controlSocket, { force: true });
    }
    await store?.close();
    if (createdDirectory !== undefined)
      await rm(createdDirectory, { recursive: true, force: true });
    throw error;
  }

  const started = runtime;
  const opened = store;
  const control = new SandboxControlClient(
    controlUrl === undefined
      ? { socketPath: options.controlSocket ?? '', token: settings.token }
      : { url: controlUrl, token: settings.token },
  );
  let closing: Promise<void> | undefined;
  return {
    dataUrl,
    controlUrl,
    controlSocket: options.controlSocket,
    controlToken: settings.token,
    controlTokenSource: settings.tokenSource,
    control,
    seed: opened.seed,
    stateDir: options.stateDir,
    providers: settings.providers.map((provider) => provider.name),
    close() {
      closing ??= (async () => {
        started.shutdown();
        await Promise.all(servers.map(closeServer));
        if (options.controlSocket !== undefined) await rm(options.controlSocket, { force: true });
        await opened.close();
      })();
      return closing;
    },
  };
}

/** `mkdir -p`, returning the first directory it made (to remove on failure) or `undefined`. */
async function createStateDirectory(stateDir: string): Promise<string | undefined> {
  try {
    return await mkdir(stateDir, { recursive: true });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new SandboxConfigError(
      'sandbox_state_unusable',
      `Failed to open sandbox state: cannot create the directory ${stateDir} (${code === 'EEXIST' || code === 'ENOTDIR' ? 'a file is in the way' : (code ?? String(error))}); choose another --state-dir`,
      { cause: error },
    );
  }
}

/** Builds a plane's handler once, on its first request. */
function lazily(
  build: (runtime: SandboxRuntime) => RequestListener,
): (runtime: SandboxRuntime) => RequestListener {
  let handler: RequestListener | undefined;
  return (runtime) => {
    handler ??= build(runtime);
    return handler;
  };
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
