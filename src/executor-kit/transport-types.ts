/** The shapes of one transport call: the request a caller describes and the response it gets. */

/** Methods the transport sends. */
export type TransportMethod = 'GET' | 'HEAD' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** One request. */
export interface TransportRequest {
  /** An absolute `http:` or `https:` URL. */
  readonly url: string | URL;
  /** @default 'GET' */
  readonly method?: TransportMethod;
  /** `Connection`, `Content-Length`, `Keep-Alive` and `Transfer-Encoding` are the transport's. */
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string | Uint8Array;
  /** @default the transport's `timeoutMs` */
  readonly timeoutMs?: number;
  /** Aborting it ends the call: "not sent" before the write, unknown after. */
  readonly signal?: AbortSignal;
  /** Called synchronously right before the request's first byte is written (errors ignored). */
  readonly onSent?: () => void;
}

/** A complete response; the body is fully read before the call returns. */
export interface TransportResponse {
  readonly status: number;
  /** Lower-case names; repeated headers joined with `, `. */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Uint8Array;
  /** The body as UTF-8 text. */
  text(): string;
  /** The body parsed as JSON; throws `SyntaxError` when it is not JSON. */
  json(): unknown;
}
