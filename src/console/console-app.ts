/**
 * The console's routes (Hono): login and sessions, the inbox with its live stream, the proposal
 * page with approve / deny / resolve, the timeline and the operator page. Every decision is the
 * approvals service's; this module only authenticates, checks CSRF and translates.
 */
import { randomBytes } from 'node:crypto';
import { getConnInfo } from '@hono/node-server/conninfo';
import { type Context, Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import { streamSSE } from 'hono/streaming';
import { ApprovalsError, type ApprovalsRefusal } from '../approvals/approvals-errors.js';
import type { ApprovalsService } from '../approvals/approvals-service.js';
import type { PendingFilter } from '../approvals/approvals-types.js';
import type { ApproverRegistry, AuthenticatedApprover } from '../approvals/approver-registry.js';
import type { Clock, OperatorFinding } from '../core/guard.js';
import { CONSOLE_CSS, CONSOLE_JS } from './console-assets.js';
import { inboxPage, inboxRows } from './console-inbox-page.js';
import { loginPage, messagePage, type PageViewer } from './console-layout.js';
import type { LoginLimiter } from './console-login-limiter.js';
import { operatorPage } from './console-operator-page.js';
import { proposalPage, proposalPath } from './console-proposal-page.js';
import { type ConsoleSession, type SessionStore, sameSecret } from './console-sessions.js';
import { timelinePage } from './console-timeline-page.js';

/** What the routes need (built by `createConsole`). */
export interface ConsoleAppContext {
  readonly service: ApprovalsService;
  readonly registry: ApproverRegistry;
  readonly sessions: SessionStore;
  readonly limiter: LoginLimiter;
  readonly clock: Clock;
  /** Largest request body, in bytes. */
  readonly bodyLimitBytes: number;
  /** How often the live inbox looks for changes, in ms. */
  readonly livePollMs: number;
  /** Mark cookies `Secure` (when served over HTTPS). */
  readonly secureCookies: boolean;
  /** Live streams to end when the console closes. */
  readonly streams: Set<{ abort(): void }>;
}

const SESSION_COOKIE = 'sg_console';
const LOGIN_COOKIE = 'sg_login';

const CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'; object-src 'none'";

const REFUSAL_STATUS: Readonly<Record<ApprovalsRefusal, number>> = {
  proposal_not_found: 404,
  approver_not_declared: 403,
  operator_not_declared: 403,
  already_decided: 409,
  proposal_not_pending: 409,
  proposal_expired: 409,
  evidence_refused: 403,
  proposal_not_resolvable: 409,
  invalid_request: 400,
  authentication_failed: 401,
};

/** A path inside the console to go back to after login; anything else is the inbox. */
const safeNext = (value: unknown): string =>
  typeof value === 'string' && /^\/(?![/\\])[^\s]{0,500}$/.test(value) ? value : '/';

const text = (value: unknown, max: number): string | undefined =>
  typeof value === 'string' && value.length <= max ? value : undefined;

/** Builds the Hono app. */
export function createConsoleApp(context: ConsoleAppContext): Hono {
  const app = new Hono();
  const { service, registry, sessions } = context;

  app.use('*', async (c, next) => {
    await next();
    c.header('Content-Security-Policy', CSP);
    c.header('X-Content-Type-Options', 'nosniff');
    c.header('Referrer-Policy', 'no-referrer');
    c.header('X-Frame-Options', 'DENY');
    if (!c.res.headers.has('Cache-Control')) c.header('Cache-Control', 'no-store');
  });
  app.use(
    '*',
    bodyLimit({
      maxSize: context.bodyLimitBytes,
      onError: (c) =>
        c.html(
          messagePage(
            'Too large',
            `The form was larger than ${context.bodyLimitBytes} bytes and was not read; nothing was changed. Shorten the reason or note.`,
            undefined,
          ),
          413,
        ),
    }),
  );

  const pageViewer = (session: ConsoleSession, approver: AuthenticatedApprover): PageViewer => ({
    id: approver.id,
    csrfToken: session.csrfToken,
    operates: service.actionsOf(approver).operates.length > 0,
  });

  /** The session's approver, or undefined (expired, logged out, forged, removed from config). */
  const current = (c: Context) => {
    const session = sessions.get(getCookie(c, SESSION_COOKIE));
    const approver =
      session === undefined ? undefined : registry.lookup(session.approver, 'console');
    return session === undefined || approver === undefined ? undefined : { session, approver };
  };

  const toLogin = (c: Context) => {
    const url = new URL(c.req.url);
    return c.redirect(`/login?next=${encodeURIComponent(url.pathname + url.search)}`, 303);
  };

  const refusalPage = (
    c: Context,
    error: unknown,
    viewer: PageViewer | undefined,
    back?: string,
  ) => {
    if (!(error instanceof ApprovalsError)) throw error;
    const titles: Partial<Record<ApprovalsRefusal, string>> = {
      proposal_not_found: 'Not found',
      already_decided: 'Already decided',
      proposal_not_pending: 'No longer pending',
      proposal_expired: 'Expired',
    };
    return c.html(
      messagePage(
        titles[error.code] ?? 'Refused',
        `${error.message}. Nothing was changed.`,
        viewer,
        back === undefined ? undefined : { href: back, label: 'Back to the proposal' },
      ),
      REFUSAL_STATUS[error.code] as 400,
    );
  };

  /** POST guard: a live session and the right CSRF token, else a refusal that changes nothing. */
  const postSession = async (c: Context) => {
    const who = current(c);
    const form = await c.req.parseBody().catch(() => ({}) as Record<string, unknown>);
    if (who === undefined) {
      return {
        refused: c.html(
          messagePage(
            'Session ended',
            'Your session has expired or is not valid; log in again. Nothing was changed.',
            undefined,
            { href: '/login', label: 'Log in' },
          ),
          401,
        ),
      } as const;
    }
    if (!sessions.checkCsrf(who.session, form.csrf)) {
      return {
        refused: c.html(
          messagePage(
            'Form expired',
            'The form was missing its security token (or it was from another session); reload the page and try again. Nothing was changed.',
            pageViewer(who.session, who.approver),
          ),
          403,
        ),
      } as const;
    }
    return { who, form } as const;
  };

  app.get('/assets/console.css', (c) => {
    c.header('Cache-Control', 'public, max-age=300');
    return c.body(CONSOLE_CSS, 200, { 'Content-Type': 'text/css; charset=utf-8' });
  });
  app.get('/assets/console.js', (c) => {
    c.header('Cache-Control', 'public, max-age=300');
    return c.body(CONSOLE_JS, 200, { 'Content-Type': 'text/javascript; charset=utf-8' });
  });

  app.get('/login', (c) => {
    const loginToken = randomBytes(24).toString('base64url');
    setCookie(c, LOGIN_COOKIE, loginToken, {
      httpOnly: true,
      sameSite: 'Strict',
      path: '/login',
      secure: context.secureCookies,
      maxAge: 1800,
    });
    return c.html(loginPage({ loginToken, next: safeNext(c.req.query('next')) }));
  });

  app.post('/login', async (c) => {
    const form = await c.req.parseBody().catch(() => ({}) as Record<string, unknown>);
    const next = safeNext(form.next);
    const approverId = text(form.approver, 128) ?? '';
    const again = (message: string, status: 400 | 401 | 403 | 429) => {
      const loginToken = randomBytes(24).toString('base64url');
      setCookie(c, LOGIN_COOKIE, loginToken, {
        httpOnly: true,
        sameSite: 'Strict',
        path: '/login',
        secure: context.secureCookies,
        maxAge: 1800,
      });
      return c.html(loginPage({ loginToken, next, message, approver: approverId }), status);
    };
    const cookieToken = getCookie(c, LOGIN_COOKIE);
    if (
      cookieToken === undefined ||
      typeof form.login_token !== 'string' ||
      !sameSecret(cookieToken, form.login_token)
    ) {
      return again('The login form expired; enter your id and secret again.', 403);
    }
    const address = getConnInfo(c).remote.address ?? 'unknown';
    const keys = [`ip:${address}`, `id:${approverId}`];
    const waitMs = context.limiter.retryAfterMs(keys);
    if (waitMs > 0) {
      c.header('Retry-After', String(Math.ceil(waitMs / 1000)));
      return again(
        `Too many failed logins; try again in ${Math.ceil(waitMs / 60_000)} minute(s).`,
        429,
      );
    }
    let approver: AuthenticatedApprover;
    try {
      approver = await registry.authenticate(approverId, text(form.secret, 1024) ?? '', 'console');
    } catch (error) {
      if (!(error instanceof ApprovalsError)) throw error;
      context.limiter.fail(keys);
      return again(error.message, 401);
    }
    context.limiter.succeed([`id:${approverId}`]);
    sessions.destroy(getCookie(c, SESSION_COOKIE));
    const session = sessions.create(approver.id);
    deleteCookie(c, LOGIN_COOKIE, { path: '/login' });
    setCookie(c, SESSION_COOKIE, session.id, {
      httpOnly: true,
      sameSite: 'Strict',
      path: '/',
      secure: context.secureCookies,
    });
    return c.redirect(next, 303);
  });

  app.post('/logout', async (c) => {
    const checked = await postSession(c);
    if ('refused' in checked) return checked.refused;
    sessions.destroy(checked.who.session.id);
    deleteCookie(c, SESSION_COOKIE, { path: '/' });
    return c.redirect('/login', 303);
  });

  const filterOf = (c: Context): PendingFilter => {
    const pick = (name: string) => {
      const value = text(c.req.query(name), 256);
      return value === undefined || value === '' ? undefined : value;
    };
    const tenant = pick('tenant');
    const action = pick('action');
    const requester = pick('requester');
    return {
      ...(tenant === undefined ? {} : { tenant }),
      ...(action === undefined ? {} : { action }),
      ...(requester === undefined ? {} : { requester }),
    };
  };

  app.get('/', async (c) => {
    const who = current(c);
    if (who === undefined) return toLogin(c);
    const filter = filterOf(c);
    const items = await service.listPending(who.approver, filter);
    return c.html(
      inboxPage(items, filter, pageViewer(who.session, who.approver), {
        tenants: who.approver.tenants,
        actions: service.actionsOf(who.approver).approves,
      }),
    );
  });

  app.get('/events', (c) => {
    const who = current(c);
    if (who === undefined) return c.text('Log in first', 401);
    const filter = filterOf(c);
    return streamSSE(c, async (stream) => {
      context.streams.add(stream);
      stream.onAbort(() => {
        context.streams.delete(stream);
      });
      let last = '';
      while (!stream.aborted && !stream.closed) {
        if (sessions.get(who.session.id) === undefined) break;
        const rows = inboxRows(await service.listPending(who.approver, filter)).value.replace(
          /\n/g,
          ' ',
        );
        if (rows !== last) {
          await stream.writeSSE({ event: 'inbox', data: rows });
          last = rows;
        }
        await stream.sleep(context.livePollMs);
      }
      context.streams.delete(stream);
    });
  });

  app.get('/proposals/:id', async (c) => {
    const who = current(c);
    if (who === undefined) return toLogin(c);
    const viewer = pageViewer(who.session, who.approver);
    const tenant = text(c.req.query('tenant'), 256);
    try {
      const details = await service.show(
        { proposal: c.req.param('id'), ...(tenant ? { tenant } : {}) },
        who.approver,
      );
      const done = c.req.query('done');
      const flash =
        done === 'approve'
          ? `You approved. Approvals: ${details.approvals.approvedBy.length} of ${details.approvals.required}; status ${details.status}.`
          : done === 'reject'
            ? `You denied it; status ${details.status}.`
            : done === 'resolve'
              ? `Your finding was recorded; status ${details.status}.`
              : undefined;
      return c.html(proposalPage(details, viewer, flash));
    } catch (error) {
      return refusalPage(c, error, viewer);
    }
  });

  const decide = (decision: 'approve' | 'reject') => async (c: Context) => {
    const checked = await postSession(c);
    if ('refused' in checked) return checked.refused;
    const { who, form } = checked;
    const tenant = text(c.req.query('tenant'), 256);
    const address = { proposal: c.req.param('id') ?? '', ...(tenant ? { tenant } : {}) };
    const back = proposalPath({ proposal: address.proposal, tenant: tenant ?? '' });
    try {
      const reason = typeof form.reason === 'string' ? form.reason : undefined;
      const options = reason === undefined ? {} : { reason };
      const recorded =
        decision === 'approve'
          ? await service.approve(address, who.approver, options)
          : await service.deny(address, who.approver, options);
      return c.redirect(`${proposalPath(recorded)}&done=${decision}`, 303);
    } catch (error) {
      return refusalPage(c, error, pageViewer(who.session, who.approver), back);
    }
  };
  app.post('/proposals/:id/approve', decide('approve'));
  app.post('/proposals/:id/deny', decide('reject'));

  app.post('/proposals/:id/resolve', async (c) => {
    const checked = await postSession(c);
    if ('refused' in checked) return checked.refused;
    const { who, form } = checked;
    const tenant = text(c.req.query('tenant'), 256);
    const address = { proposal: c.req.param('id'), ...(tenant ? { tenant } : {}) };
    const viewer = pageViewer(who.session, who.approver);
    const back = proposalPath({ proposal: address.proposal, tenant: tenant ?? '' });
    try {
      const finding: OperatorFinding | undefined =
        form.finding === 'absent'
          ? { kind: 'absent' }
          : form.finding === 'present'
            ? {
                kind: 'present',
                receipt: {
                  id: text(form.receipt_id, 200) ?? '',
                  provider: text(form.receipt_provider, 100) ?? '',
                },
              }
            : undefined;
      if (finding === undefined) {
        throw new ApprovalsError(
          'invalid_request',
          'Choose what the provider showed: absent or present',
        );
      }
      const note = text(form.note, 4096);
      const recorded = await service.resolve(address, who.approver, {
        finding,
        ...(note === undefined ? {} : { note }),
      });
      return c.redirect(`${proposalPath(recorded)}&done=resolve`, 303);
    } catch (error) {
      return refusalPage(c, error, viewer, back);
    }
  });

  app.get('/proposals/:id/timeline', async (c) => {
    const who = current(c);
    if (who === undefined) return toLogin(c);
    const viewer = pageViewer(who.session, who.approver);
    const tenant = text(c.req.query('tenant'), 256);
    try {
      const timeline = await service.timeline(
        { proposal: c.req.param('id'), ...(tenant ? { tenant } : {}) },
        who.approver,
      );
      return c.html(timelinePage(timeline, viewer));
    } catch (error) {
      return refusalPage(c, error, viewer);
    }
  });

  app.get('/operator', async (c) => {
    const who = current(c);
    if (who === undefined) return toLogin(c);
    const items = await service.stuck(who.approver, filterOf(c));
    return c.html(operatorPage(items, pageViewer(who.session, who.approver)));
  });

  app.notFound((c) => c.html(messagePage('Not found', 'There is no such page.', undefined), 404));
  app.onError((error, c) => {
    process.stderr.write(
      `sideguard console: ${error instanceof Error ? error.stack : String(error)}\n`,
    );
    return c.html(
      messagePage(
        'Something failed',
        'The console hit an internal error; nothing more is known here. See the server log.',
        undefined,
      ),
      500,
    );
  });
  return app;
}
