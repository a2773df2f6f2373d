import { afterEach, describe, expect, it } from 'vitest';
import { createConsole, type RunningConsole } from '../../src/console/index.js';
import {
  type ApprovalsFixture,
  createApprovalsFixture,
  fixtureApprovers,
  OPERATOR,
  secretOf,
  TENANT,
} from '../approvals/approvals-fixture.js';
import { ConsoleClient } from './console-client.js';

let fixture: ApprovalsFixture | undefined;
let running: RunningConsole | undefined;

afterEach(async () => {
  await running?.close();
  await fixture?.close();
  running = undefined;
  fixture = undefined;
});

async function start(options: { maxLoginFailures?: number } = {}) {
  const approvers = await fixtureApprovers();
  fixture = await createApprovalsFixture({ approvers });
  running = await createConsole({
    guard: fixture.guard,
    store: fixture.store,
    actions: [fixture.refund],
    approvers,
    defaultTenant: TENANT,
    port: 0,
    clock: fixture.clock,
    livePollMs: 50,
    ...options,
  });
  const f = fixture;
  const url = running.url;
  const as = async (id: string) => {
    const client = new ConsoleClient(url);
    const response = await client.login(id, secretOf(id));
    expect(response.status).toBe(303);
    return client;
  };
  /** Snapshot of what a refusal must not change. */
  const snapshot = async (proposal: string) => ({
    ledger: (await f.ledger()).length,
    record: await f.store.getProposal(TENANT, proposal),
  });
  return { f, url, as, snapshot };
}

const path = (proposal: string, suffix = '') =>
  `/proposals/${encodeURIComponent(proposal)}${suffix}?tenant=${TENANT}`;

describe('console: login and sessions', () => {
  it('sends anonymous visitors to the login page and sets a strict, HttpOnly session cookie', async () => {
    const { url } = await start();
    const anonymous = new ConsoleClient(url);
    const inbox = await anonymous.get('/');
    expect(inbox.status).toBe(303);
    expect(inbox.location).toBe('/login?next=%2F');
    const login = await anonymous.get('/login');
    expect(login.headers.get('content-security-policy')).toContain("default-src 'self'");
    expect(login.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(login.body).not.toMatch(/<script>(?!<\/script>)|<script(?![^>]*src=)/);
    const client = new ConsoleClient(url);
    const page = await client.get('/login');
    const token = /name="login_token" value="([^"]+)"/.exec(page.body)?.[1] ?? '';
    const response = await fetch(`${url}/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: {
        cookie: `sg_login=${client.cookies.get('sg_login')}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({
        login_token: token,
        next: '/',
        approver: 'finance-b',
        secret: secretOf('finance-b'),
      }),
    });
    expect(response.status).toBe(303);
    const cookie = response.headers.getSetCookie().find((line) => line.startsWith('sg_console='));
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Strict/);
  });

  it('returns to the linked proposal after login, and never to another site', async () => {
    const { f, url } = await start();
    const proposal = await f.propose();
    const client = new ConsoleClient(url);
    const linked = await client.get(`/proposals/${proposal}`);
    expect(linked.status).toBe(303);
    const next = new URL(linked.location ?? '', url).searchParams.get('next');
    expect(next).toBe(`/proposals/${proposal}`);
    const login = async (target: string) => {
      const page = await client.get(`/login?next=${encodeURIComponent(target)}`);
      const token = /name="login_token" value="([^"]+)"/.exec(page.body)?.[1] ?? '';
      return client.post('/login', {
        login_token: token,
        next: /name="next" value="([^"]*)"/.exec(page.body)?.[1] ?? '',
        approver: 'finance-b',
        secret: secretOf('finance-b'),
      });
    };
    expect((await login(next ?? '')).location).toBe(`/proposals/${proposal}`);
    expect((await client.get(`/proposals/${proposal}`)).body).toContain('Refund 500.00 EUR');
    for (const target of ['//evil.example/x', 'https://evil.example/', '/\\evil.example']) {
      expect((await login(target)).location).toBe('/');
    }
  });

  it('refuses a wrong secret, then rate-limits logins even with the right one', async () => {
    const { url } = await start({ maxLoginFailures: 3 });
    const client = new ConsoleClient(url);
    for (let attempt = 0; attempt < 3; attempt++) {
      const wrong = await client.login('finance-b', 'not-the-secret-pw');
      expect(wrong.status).toBe(401);
      expect(wrong.body).toContain('Unknown approver or wrong secret');
    }
    const limited = await client.login('finance-b', secretOf('finance-b'));
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(client.cookies.has('sg_console')).toBe(false);
  });

  it('refuses a login post without its form token (login CSRF)', async () => {
    const { url } = await start();
    const client = new ConsoleClient(url);
    const response = await client.post('/login', {
      approver: 'finance-b',
      secret: secretOf('finance-b'),
      next: '/',
    });
    expect(response.status).toBe(403);
    expect(client.cookies.has('sg_console')).toBe(false);
  });

  it('refuses an expired, a logged-out (replayed) and a forged session, changing nothing', async () => {
    const { f, url, as, snapshot } = await start();
    const proposal = await f.propose();
    const expired = await as('finance-b');
    const csrf = await expired.csrf();
    f.clock.advance(30 * 60_000 + 1);
    const before = await snapshot(proposal);
    expect((await expired.get('/')).status).toBe(303);
    const late = await expired.post(path(proposal, '/approve'), { csrf });
    expect(late.status).toBe(401);
    expect(late.body).toContain('session has expired');
    expect(await snapshot(proposal)).toEqual(before);

    const replayed = await as('finance-b');
    const stolen = replayed.cookies.get('sg_console') ?? '';
    const token = await replayed.csrf();
    expect((await replayed.post('/logout', { csrf: token })).status).toBe(303);
    const attacker = new ConsoleClient(url);
    attacker.cookies.set('sg_console', stolen);
    expect((await attacker.post(path(proposal, '/approve'), { csrf: token })).status).toBe(401);
    const forged = new ConsoleClient(url);
    forged.cookies.set('sg_console', 'A'.repeat(43));
    expect((await forged.get(path(proposal))).status).toBe(303);
    expect(await snapshot(proposal)).toEqual(before);
  });
});

describe('console: deciding', () => {
  it('two approvers approve through the forms; the proposal is authorized with their evidence', async () => {
    const { f, as } = await start();
    const proposal = await f.propose();
    const b = await as('finance-b');
    const inbox = await b.get('/');
    expect(inbox.body).toContain('Refund 500.00 EUR on ord_1001');
    expect(inbox.body).toContain(`data-proposal="${proposal}"`);
    const page = await b.get(path(proposal));
    expect(page.body).toContain('amount_over_auto_limit');
    expect(page.body).toContain((await f.store.getProposal(TENANT, proposal))?.commitment.value);
    const first = await b.post(path(proposal, '/approve'), { csrf: await b.csrf(), reason: 'ok' });
    expect(first.status).toBe(303);
    expect(first.location).toBe(`${path(proposal)}&done=approve`);
    const a = await as('finance-a');
    await a.post(path(proposal, '/approve'), { csrf: await a.csrf() });
    expect((await f.store.getProposal(TENANT, proposal))?.status).toBe('authorized');
    const after = await a.get(`${path(proposal)}&done=approve`);
    expect(after.body).toContain('Approvals: 2 of 2; status authorized');
    const recorded = (await f.ledger(proposal)).filter((e) => e.type === 'authority_recorded');
    expect(recorded.map((e) => [e.data.authority, e.data.channelAssurance])).toEqual([
      ['finance-b', 'medium'],
      ['finance-a', 'high'],
    ]);
  });

  it('refuses a post without the CSRF token or with another session’s, changing nothing', async () => {
    const { f, as, snapshot } = await start();
    const proposal = await f.propose();
    const b = await as('finance-b');
    const c = await as('finance-c');
    const before = await snapshot(proposal);
    const missing = await b.post(path(proposal, '/approve'), {});
    expect(missing.status).toBe(403);
    expect(missing.body).toContain('security token');
    expect((await b.post(path(proposal, '/approve'), { csrf: await c.csrf() })).status).toBe(403);
    expect(await snapshot(proposal)).toEqual(before);
  });

  it('refuses approving twice, an undeclared approver, a forged id, an expired and a decided proposal', async () => {
    const { f, as, snapshot } = await start();
    const proposal = await f.propose();
    const b = await as('finance-b');
    await b.post(path(proposal, '/approve'), { csrf: await b.csrf() });
    let before = await snapshot(proposal);
    const twice = await b.post(path(proposal, '/approve'), { csrf: await b.csrf() });
    expect(twice.status).toBe(409);
    expect(twice.body).toContain('already approved');
    const operator = await as(OPERATOR);
    const undeclared = await operator.post(path(proposal, '/approve'), {
      csrf: await operator.csrf(),
    });
    expect(undeclared.status).toBe(403);
    expect(undeclared.body).toContain('not a declared approver');
    const outsider = await as('outsider');
    const hidden = await outsider.post(path(proposal, '/approve'), { csrf: await outsider.csrf() });
    const forged = await b.post(path('prop_does_not_exist', '/approve'), { csrf: await b.csrf() });
    expect(hidden.status).toBe(404);
    expect(forged.status).toBe(404);
    const alert = (body: string, id: string) =>
      /role="alert">([^<]*)</.exec(body)?.[1]?.replace(id, 'ID');
    expect(alert(hidden.body, proposal)).toBe(alert(forged.body, 'prop_does_not_exist'));
    expect(hidden.body).toContain('was not found (or you may not see it)');
    expect(await snapshot(proposal)).toEqual(before);

    const denied = await f.propose({ orderId: 'ord_deny' });
    const c = await as('finance-c');
    expect(
      (await c.post(path(denied, '/deny'), { csrf: await c.csrf(), reason: 'fraud' })).status,
    ).toBe(303);
    before = await snapshot(denied);
    const decided = await b.post(path(denied, '/approve'), { csrf: await b.csrf() });
    expect(decided.status).toBe(409);
    expect(decided.body).toContain('already denied');
    expect(await snapshot(denied)).toEqual(before);

    const expiring = await f.propose({ orderId: 'ord_exp' });
    f.clock.advance(f.refund.proposalTtlMs + 1);
    const a = await as('finance-a');
    const expired = await a.post(path(expiring, '/approve'), { csrf: await a.csrf() });
    expect(expired.status).toBe(409);
    expect(expired.body).toContain('expired');
    expect((await f.ledger(expiring)).some((e) => e.type === 'authority_recorded')).toBe(false);
  });

  it('lets one of a racing deny and approve win over HTTP and tells the other', async () => {
    const { f, as } = await start();
    const proposal = await f.propose();
    const a = await as('finance-a');
    await a.post(path(proposal, '/approve'), { csrf: await a.csrf() });
    const b = await as('finance-b');
    const c = await as('finance-c');
    const [bToken, cToken] = [await b.csrf(), await c.csrf()];
    const [approve, deny] = await Promise.all([
      b.post(path(proposal, '/approve'), { csrf: bToken }),
      c.post(path(proposal, '/deny'), { csrf: cToken, reason: 'no' }),
    ]);
    expect([approve.status, deny.status].sort()).toEqual([303, 409]);
    const loser = approve.status === 409 ? approve : deny;
    expect(loser.body).toMatch(/already (approved by enough approvers|denied)/);
    expect((await f.ledger(proposal)).filter((e) => e.type === 'authority_recorded')).toHaveLength(
      2,
    );
  });

  it('refuses an oversized post with 413 and changes nothing', async () => {
    const { f, as, snapshot } = await start();
    const proposal = await f.propose();
    const b = await as('finance-b');
    const before = await snapshot(proposal);
    const big = await b.post(path(proposal, '/deny'), {
      csrf: await b.csrf(),
      reason: 'x'.repeat(40_000),
    });
    expect(big.status).toBe(413);
    expect(await snapshot(proposal)).toEqual(before);
  });
});

describe('console: hostile text, operators, live inbox', () => {
  const HOSTILE = '<script>alert(1)</script>"><img src=x onerror=alert(2)>';

  it('escapes HTML and script in every displayed field', async () => {
    const { f, as } = await start();
    const proposal = await f.propose(
      { orderId: `ord_${HOSTILE}`, customerId: HOSTILE, reason: HOSTILE, requestId: HOSTILE },
      `principal ${HOSTILE}`,
    );
    const b = await as('finance-b');
    await b.post(path(proposal, '/approve'), { csrf: await b.csrf(), reason: HOSTILE });
    const pages = [
      await b.get('/'),
      await b.get(`/?requester=${encodeURIComponent(HOSTILE)}`),
      await b.get(path(proposal)),
      await b.get(path(proposal, '/timeline')),
      await b.get(`/proposals/${encodeURIComponent(HOSTILE)}`),
    ];
    for (const page of pages) {
      expect(page.body).not.toContain('<script>alert');
      expect(page.body).not.toContain('<img src=x');
    }
    expect(pages[0]?.body).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(pages[2]?.body).toContain('principal &lt;script&gt;');
    expect(pages[4]?.status).toBe(404);
  });

  it('shows stuck proposals to operators and records their resolution', async () => {
    const { f, as } = await start();
    f.provider.steps = ['lost_before_write'];
    f.provider.absentAnswer = 'unknown';
    const run = await f.guard.run(f.refund, {
      tenant: TENANT,
      input: {
        orderId: 'ord_out',
        amount: '42.00',
        currency: 'EUR',
        customerId: 'cus_ada',
        reason: 'x',
      },
      principal: 'agent-svc',
    });
    for (let i = 0; i < 10; i++) {
      if ((await f.store.getProposal(TENANT, run.proposal))?.status === 'verification_unresolved')
        break;
      f.clock.advance(Math.max(f.refund.executionLeaseMs, f.refund.verificationDelayMs) + 1);
      await f.guard.reconcile(f.refund, { tenant: TENANT, proposal: run.proposal });
    }
    const ops = await as(OPERATOR);
    const queue = await ops.get('/operator');
    expect(queue.body).toContain(`data-proposal="${run.proposal}"`);
    const b = await as('finance-b');
    const refused = await b.post(path(run.proposal, '/resolve'), {
      csrf: await b.csrf(),
      finding: 'absent',
      note: 'x',
    });
    expect(refused.status).toBe(403);
    const resolved = await ops.post(path(run.proposal, '/resolve'), {
      csrf: await ops.csrf(),
      finding: 'absent',
      note: 'Checked the dashboard: no refund',
    });
    expect(resolved.status).toBe(303);
    expect((await f.store.getProposal(TENANT, run.proposal))?.status).toBe('failed_known');
    const [attested] = (await f.ledger(run.proposal)).filter((e) => e.type === 'operator_resolved');
    expect(attested?.data).toMatchObject({ operator: OPERATOR, finding: 'absent' });
  });

  it('streams inbox changes over server-sent events', async () => {
    const { f, url, as } = await start();
    const b = await as('finance-b');
    const controller = new AbortController();
    const response = await fetch(`${url}/events`, {
      headers: { cookie: `sg_console=${b.cookies.get('sg_console')}` },
      signal: controller.signal,
    });
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    let received = '';
    const until = async (pattern: RegExp) => {
      while (!pattern.test(received)) {
        const chunk = await reader.read();
        if (chunk.done) throw new Error(`stream ended before ${pattern}: ${received}`);
        received += decoder.decode(chunk.value);
      }
    };
    await until(/Nothing waits for your approval/);
    const proposal = await f.propose();
    await until(new RegExp(`data-proposal="${proposal}"`));
    controller.abort();
  });
});
