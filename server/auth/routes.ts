import type { FastifyInstance, FastifyReply } from 'fastify';
import { z } from 'zod';
import { currentUserEndpoint, logoutEndpoint, signInCallbackEndpoint, signInEndpoint } from '../../src/domain/api/auth';
import { safeRedirectPath } from '../../src/domain/redirect';
import type { Config } from '../config';
import { isAppError } from '../errors';
import { route } from '../http/contract-route';
import type { OidcClient, PendingLogin } from './oidc';
import { currentUser, requireUser, SESSION_COOKIE, sessionTokenOf } from './session';
import type { AuthService } from './service';

const PENDING_COOKIE = 'oidc_login';
const PENDING_TTL_SECONDS = 600;
/** Set by logout, read by the next sign-in: see OidcSettings.promptAfterLogout. */
const LOGGED_OUT_COOKIE = 'logged_out';
const LOGGED_OUT_TTL_SECONDS = 30 * 24 * 3600;
/** The pending login and the logged-out mark are sent to the sign-in hops only, all under /auth. */
const SIGN_IN_COOKIE_PATH = '/auth';

const pendingSchema = z.object({
  state: z.string(),
  nonce: z.string(),
  codeVerifier: z.string(),
  successRedirect: z.string(),
  failureRedirect: z.string(),
});

function withParam(path: string, key: string, value: string): string {
  const url = new URL(path, 'http://x');
  url.searchParams.set(key, value);
  return `${url.pathname}${url.search}${url.hash}`;
}

export function authRoutes(
  server: FastifyInstance,
  deps: { config: Config; auth: AuthService; oidc: OidcClient },
): void {
  const { config, auth, oidc } = deps;
  const secure = config.appUrl.startsWith('https://');

  const clearPending = (reply: FastifyReply) => reply.clearCookie(PENDING_COOKIE, { path: SIGN_IN_COOKIE_PATH });

  route(server, signInEndpoint, {}, async (request, reply) => {
    const query = request.query;
    const successRedirect = safeRedirectPath(query.successRedirect, config.appUrl, '/dashboard');
    const failureRedirect = safeRedirectPath(query.failureRedirect, config.appUrl, '/login');
    let started: { url: string; pending: PendingLogin };
    try {
      started = await oidc.start({ afterLogout: request.cookies[LOGGED_OUT_COOKIE] === '1' });
    } catch (error) {
      request.log.error({ err: error }, 'identity provider discovery failed');
      return reply.redirect(withParam(failureRedirect, 'error', 'signin_unavailable'));
    }
    const pending = JSON.stringify({ ...started.pending, successRedirect, failureRedirect });
    reply.setCookie(PENDING_COOKIE, pending, {
      path: SIGN_IN_COOKIE_PATH,
      httpOnly: true,
      sameSite: 'lax',
      secure,
      signed: true,
      maxAge: PENDING_TTL_SECONDS,
    });
    return reply.redirect(started.url);
  });

  route(server, signInCallbackEndpoint, {}, async (request, reply) => {
    const raw = request.cookies[PENDING_COOKIE];
    clearPending(reply);
    const unsigned = raw ? request.unsignCookie(raw) : undefined;
    const parsed = unsigned?.valid && unsigned.value ? pendingSchema.safeParse(safeJson(unsigned.value)) : undefined;
    if (!parsed?.success) {
      request.log.warn('sign-in callback without a pending login');
      return reply.redirect(withParam('/login', 'error', 'signin_failed'));
    }
    const pending = parsed.data;
    const fail = (reason: string, error?: unknown) => {
      request.log.warn({ err: error, reason }, 'sign-in failed');
      return reply.redirect(withParam(pending.failureRedirect, 'error', 'signin_failed'));
    };
    const query = request.query;
    if (typeof query.error === 'string') return fail(`identity provider error: ${query.error}`);
    if (typeof query.code !== 'string' || query.code === '') return fail('missing code');

    let claims;
    try {
      claims = await oidc.finish(new URL(request.url, config.appUrl), pending);
    } catch (error) {
      return fail('code exchange or ID token check failed', error);
    }
    let session;
    try {
      session = await auth.signIn(claims, request.headers['user-agent'] ?? null);
    } catch (error) {
      if (isAppError(error) && error.code === 'ACCOUNT_DISABLED') {
        request.log.warn({ details: error.details }, 'sign-in refused: account disabled');
        return reply.redirect(withParam(pending.failureRedirect, 'error', 'account_disabled'));
      }
      throw error;
    }
    reply.setCookie(SESSION_COOKIE, session.token, {
      path: '/',
      httpOnly: true,
      sameSite: 'lax',
      secure,
      expires: session.expiresAt,
    });
    reply.clearCookie(LOGGED_OUT_COOKIE, { path: SIGN_IN_COOKIE_PATH });
    request.log.info({ userId: session.user.id }, 'signed in');
    return reply.redirect(safeRedirectPath(pending.successRedirect, config.appUrl, '/dashboard'));
  });

  route(server, currentUserEndpoint, { preHandler: requireUser(auth) }, async (request) => ({
    success: true as const,
    data: await auth.current(currentUser(request)),
  }));

  route(server, logoutEndpoint, {}, async (request, reply) => {
    const token = sessionTokenOf(request);
    if (token) await auth.signOut(token);
    reply.clearCookie(SESSION_COOKIE, { path: '/' });
    reply.setCookie(LOGGED_OUT_COOKIE, '1', {
      path: SIGN_IN_COOKIE_PATH,
      httpOnly: true,
      sameSite: 'lax',
      secure,
      maxAge: LOGGED_OUT_TTL_SECONDS,
    });
    return { success: true as const, message: 'Logged out' };
  });
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
