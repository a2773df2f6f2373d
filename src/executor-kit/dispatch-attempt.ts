/**
 * One request, sent at most once, as an undici dispatch handler. undici calls `onRequestStart`
 * on a connected socket right before it writes the request's first byte (and writes nothing
 * if the handler aborts there), so the handler knows whether the request left the process:
 * everything that ends the call before that moment is "not sent"; everything after is "maybe
 * sent". Once the call has been answered "not sent", a late `onRequestStart` is aborted, so the
 * answer stays true; a second `onRequestStart` (a re-dispatch) is aborted the same way.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Dispatcher } from 'undici';
import { errorCodeOf, maybeSentFailure, notSentFailure } from './failure-labels.js';
import {
  MaybeSentFailure,
  NotSentFailure,
  TransportError,
  type TransportErrorDetails,
} from './transport-failure.js';
import type { TransportResponse } from './transport-types.js';

/** What one attempt needs to know. */
export interface DispatchAttemptOptions {
  /** `METHOD origin`, for error messages (never the path: it may hold customer ids). */
  readonly target: string;
  readonly timeoutMs: number;
  readonly signal: AbortSignal | undefined;
  readonly maxResponseBytes: number;
  /** Called once, synchronously, right before the request is written; its errors are ignored. */
  readonly onSent?: () => void;
}

type Phase = 'queued' | 'sent' | 'settled';

const withCode = (cause: unknown): { errorCode?: string } => {
  const errorCode = errorCodeOf(cause);
  return errorCode === undefined ? {} : { errorCode };
};

class RequestRefusedError extends Error {
  override readonly name = 'RequestRefusedError';
}

function joinHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const result: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    result[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  }
  return result;
}

function completeResponse(
  status: number,
  headers: Record<string, string>,
  body: Uint8Array,
): TransportResponse {
  const text = () => new TextDecoder().decode(body);
  return { status, headers, body, text, json: () => JSON.parse(text()) as unknown };
}

/** The dispatch handler of one call; `done` settles exactly once. */
export class DispatchAttempt implements Dispatcher.DispatchHandler {
  readonly done: Promise<TransportResponse>;
  #phase: Phase = 'queued';
  #controller: Dispatcher.DispatchController | undefined;
  #status = 0;
  #headers: Record<string, string> = {};
  #chunks: Buffer[] = [];
  #size = 0;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #resolve!: (response: TransportResponse) => void;
  #reject!: (error: TransportError) => void;
  readonly #options: DispatchAttemptOptions;
  readonly #onAbort = () =>
    this.#stop(NotSentFailure.aborted_before_send, MaybeSentFailure.aborted_after_send);

  constructor(options: DispatchAttemptOptions) {
    this.#options = options;
    this.done = new Promise<TransportResponse>((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
  }

  /** Arms the timeout and the signal; false when the call already ended (signal aborted). */
  arm(): boolean {
    const { signal, timeoutMs } = this.#options;
    if (signal?.aborted) {
      this.#failNotSent(NotSentFailure.aborted_before_send);
      return false;
    }
    signal?.addEventListener('abort', this.#onAbort, { once: true });
    this.#timer = setTimeout(
      () => this.#stop(NotSentFailure.timeout_before_send, MaybeSentFailure.timeout),
      timeoutMs,
    );
    return true;
  }

  /** Ends the call because the transport could not start it (e.g. the dispatcher is closed). */
  refuse(error: unknown): void {
    if (this.#phase === 'queued') this.#failNotSent(notSentFailure(error), error);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    if (this.#phase !== 'queued') {
      // Already answered (not sent), or a second start: never write this request.
      controller.abort(new RequestRefusedError('request already settled or already sent once'));
      return;
    }
    this.#phase = 'sent';
    this.#controller = controller;
    try {
      this.#options.onSent?.();
    } catch {
      // An observer must not change what is sent.
    }
  }

  onResponseStart(
    _controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: IncomingHttpHeaders,
  ): void {
    if (statusCode < 200) return; // 1xx informational: the final response is still to come.
    this.#status = statusCode;
    this.#headers = joinHeaders(headers);
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.#phase !== 'sent') return;
    this.#size += chunk.byteLength;
    if (this.#size > this.#options.maxResponseBytes) {
      this.#abortSent(MaybeSentFailure.response_too_large);
      return;
    }
    this.#chunks.push(chunk);
  }

  onResponseEnd(): void {
    if (this.#phase !== 'sent') return;
    const body = Buffer.concat(this.#chunks);
    this.#settle();
    this.#resolve(completeResponse(this.#status, this.#headers, body));
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    if (this.#phase === 'queued') this.#failNotSent(notSentFailure(error), error);
    else if (this.#phase === 'sent') this.#failMaybeSent(maybeSentFailure(error), error);
  }

  /** Ends the call now (timeout, abort), labelled by the phase it is in. */
  #stop(beforeSend: NotSentFailure, afterSend: MaybeSentFailure): void {
    if (this.#phase === 'queued') {
      // Not written yet, and never will be: a later onRequestStart is aborted.
      this.#failNotSent(beforeSend);
    } else if (this.#phase === 'sent') {
      this.#abortSent(afterSend);
    }
  }

  #abortSent(failure: MaybeSentFailure): void {
    const controller = this.#controller;
    this.#failMaybeSent(failure);
    controller?.abort(new RequestRefusedError(`call ended: ${failure}`));
  }

  #failNotSent(failure: NotSentFailure, cause?: unknown): void {
    this.#reject(this.#error({ sent: false, failure, ...withCode(cause) }, cause));
  }

  #failMaybeSent(failure: MaybeSentFailure, cause?: unknown): void {
    this.#reject(this.#error({ sent: true, failure, ...withCode(cause) }, cause));
  }

  #error(details: TransportErrorDetails, cause: unknown): TransportError {
    this.#settle();
    return new TransportError(this.#options.target, details, { cause });
  }

  #settle(): void {
    this.#phase = 'settled';
    this.#chunks = [];
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#options.signal?.removeEventListener('abort', this.#onAbort);
  }
}
