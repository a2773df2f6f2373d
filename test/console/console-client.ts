/**
 * A tiny cookie-keeping HTTP client for console tests: real HTTP, manual redirects, the cookies
 * the console sets, and helpers to read tokens out of its pages.
 */
export interface ConsoleResponse {
  readonly status: number;
  readonly location: string | null;
  readonly body: string;
  readonly headers: Headers;
}

export class ConsoleClient {
  readonly cookies = new Map<string, string>();
  constructor(readonly baseUrl: string) {}

  private cookieHeader(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }

  private remember(headers: Headers): void {
    for (const line of headers.getSetCookie()) {
      const [pair] = line.split(';');
      const index = pair?.indexOf('=') ?? -1;
      if (pair === undefined || index < 0) continue;
      const name = pair.slice(0, index).trim();
      const value = pair.slice(index + 1).trim();
      if (value === '' || /max-age=0/i.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  async request(
    method: string,
    path: string,
    body?: string | URLSearchParams,
  ): Promise<ConsoleResponse> {
    const response = await fetch(new URL(path, this.baseUrl), {
      method,
      redirect: 'manual',
      headers: {
        cookie: this.cookieHeader(),
        ...(body === undefined ? {} : { 'content-type': 'application/x-www-form-urlencoded' }),
      },
      ...(body === undefined ? {} : { body: body.toString() }),
    });
    this.remember(response.headers);
    return {
      status: response.status,
      location: response.headers.get('location'),
      body: await response.text(),
      headers: response.headers,
    };
  }

  get(path: string): Promise<ConsoleResponse> {
    return this.request('GET', path);
  }

  post(path: string, form: Record<string, string>): Promise<ConsoleResponse> {
    return this.request('POST', path, new URLSearchParams(form));
  }

  /** Logs in through the form; returns the POST's response. */
  async login(approver: string, secret: string): Promise<ConsoleResponse> {
    const page = await this.get('/login');
    const token = /name="login_token" value="([^"]+)"/.exec(page.body)?.[1] ?? '';
    return this.post('/login', { login_token: token, next: '/', approver, secret });
  }

  /** The CSRF token from any logged-in page. */
  async csrf(): Promise<string> {
    const page = await this.get('/');
    const token = /name="csrf" value="([^"]+)"/.exec(page.body)?.[1];
    if (token === undefined) throw new Error(`no CSRF token on the inbox (status ${page.status})`);
    return token;
  }
}
