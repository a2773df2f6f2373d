/**
 * A typed client for the sandbox control plane, over TCP or a Unix socket; what tests and the
 * verifier use to reset, fault, observe and export a sandbox.
 */
import { request as httpRequest } from 'node:http';
import type { FaultPlan } from './fault-plan.js';
import type { SandboxObservations } from './observations.js';
import { SandboxControlError } from './sandbox-errors.js';
import type { HeldRequest, SandboxExport } from './sandbox-runtime.js';

/** Where the control plane listens and the token it wants. */
export type SandboxControlClientConfig = (
  | { readonly url: string; readonly socketPath?: never }
  | { readonly socketPath: string; readonly url?: never }
) & {
  readonly token: string;
  /** Per-call timeout in milliseconds. @default 10 000 */
  readonly timeoutMs?: number;
};

/** `GET /health`. */
export interface SandboxHealth {
  readonly status: 'ok';
  readonly seed: number;
  readonly dataUrl: string;
  readonly providers: readonly string[];
  readonly idempotency: Readonly<Record<string, 'honour' | 'ignore'>>;
  readonly faultPlanActive: boolean;
  readonly heldCount: number;
}

/** Typed calls of every control-plane route. */
export class SandboxControlClient {
  private readonly timeoutMs: number;

  constructor(private readonly config: SandboxControlClientConfig) {
    this.timeoutMs = config.timeoutMs ?? 10_000;
  }

  /** `GET /health`. */
  health(): Promise<SandboxHealth> {
    return this.call('GET', '/health');
  }

  /** `POST /reset`: state back to the seed, observations cleared, the start-time fault plan restored. */
  reset(): Promise<{ readonly status: 'reset'; readonly seed: number; readonly digest: string }> {
    return this.call('POST', '/reset');
  }

  /** `GET /export`: state, observations and trace. */
  export(): Promise<SandboxExport> {
    return this.call('GET', '/export');
  }

  /** `GET /observations`: write counts, receipts, requests and the fault trace. */
  observations(): Promise<SandboxObservations> {
    return this.call('GET', '/observations');
  }

  /** `GET /state/digest`: SHA-256 of provider state and the number of committed writes. */
  digest(): Promise<{ readonly digest: string; readonly writeCount: number }> {
    return this.call('GET', '/state/digest');
  }

  /** `POST /snapshots/:name`. */
  snapshot(name: string): Promise<{ readonly name: string; readonly digest: string }> {
    return this.call('POST', `/snapshots/${encodeURIComponent(name)}`);
  }

  /** `POST /snapshots/:name/restore`. */
  restore(name: string): Promise<{ readonly name: string; readonly digest: string }> {
    return this.call('POST', `/snapshots/${encodeURIComponent(name)}/restore`);
  }

  /** `GET /snapshots`. */
  listSnapshots(): Promise<{ readonly snapshots: readonly string[] }> {
    return this.call('GET', '/snapshots');
  }

  /** `PUT /faults`: validates and installs a plan; request indices restart at 0. */
  setFaults(plan: FaultPlan | unknown): Promise<{ readonly plan: FaultPlan }> {
    return this.call('PUT', '/faults', plan);
  }

  /** `DELETE /faults`. */
  clearFaults(): Promise<{ readonly plan: null }> {
    return this.call('DELETE', '/faults');
  }

  /** `GET /faults`. */
  getFaults(): Promise<{ readonly plan: FaultPlan | null }> {
    return this.call('GET', '/faults');
  }

  /** `GET /held`. */
  async held(): Promise<readonly HeldRequest[]> {
    return (await this.call<{ held: HeldRequest[] }>('GET', '/held')).held;
  }

  /** `POST /held/:holdId/release`. */
  release(holdId: string): Promise<{ readonly released: string }> {
    return this.call('POST', `/held/${encodeURIComponent(holdId)}/release`);
  }

  /** `POST /held/release-all`. */
  releaseAll(): Promise<{ readonly released: number }> {
    return this.call('POST', '/held/release-all');
  }

  /**
   * Polls `GET /held` until at least `count` requests are held.
   * @param timeoutMs how long to wait before throwing. @default 5 000
   */
  async waitForHeld(count = 1, timeoutMs = 5_000): Promise<readonly HeldRequest[]> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const held = await this.held();
      if (held.length >= count) return held;
      if (Date.now() > deadline) {
        throw new SandboxControlError(
          'sandbox_hold_timeout',
          `Failed to see ${count} held request(s) within ${timeoutMs} ms (saw ${held.length})`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  private call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const text = body === undefined ? undefined : JSON.stringify(body);
    const target =
      this.config.socketPath === undefined
        ? (() => {
            const url = new URL(path, this.config.url);
            return { hostname: url.hostname, port: url.port, path: url.pathname };
          })()
        : { socketPath: this.config.socketPath, path };
    return new Promise<T>((resolve, reject) => {
      const outgoing = httpRequest(
        {
          ...target,
          method,
          timeout: this.timeoutMs,
          headers: {
            Authorization: `Bearer ${this.config.token}`,
            Accept: 'application/json',
            ...(text === undefined
              ? {}
              : { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) }),
          },
        },
        (incoming) => {
          const chunks: Buffer[] = [];
          incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
          incoming.on('error', reject);
          incoming.on('end', () => {
            const status = incoming.statusCode ?? 0;
            let parsed: unknown;
            try {
              parsed = JSON.parse(Buffer.concat(chunks).toString('utf8'));
            } catch (error) {
              reject(
                new SandboxControlError(
                  'sandbox_control_invalid_response',
                  `Control plane answered ${method} ${path} with non-JSON (status ${status})`,
                  { status, cause: error },
                ),
              );
              return;
            }
            if (status >= 200 && status < 300) {
              resolve(parsed as T);
              return;
            }
            const error = (
              parsed as {
                error?: { code?: string; message?: string; data?: Record<string, unknown> };
              }
            ).error;
            reject(
              new SandboxControlError(
                error?.code ?? 'sandbox_control_failed',
                `Control plane ${method} ${path} failed (${status}): ${error?.message ?? 'no message'}`,
                {
                  status,
                  ...(error?.data === undefined ? {} : { data: error.data }),
                },
              ),
            );
          });
        },
      );
      outgoing.on('timeout', () =>
        outgoing.destroy(new Error(`timed out after ${this.timeoutMs} ms`)),
      );
      outgoing.on('error', (error) =>
        reject(
          new SandboxControlError(
            'sandbox_control_unreachable',
            `Control plane ${method} ${path} could not be reached: ${error.message}`,
            { cause: error },
          ),
        ),
      );
      outgoing.end(text);
    });
  }
}
