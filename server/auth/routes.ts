import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { safeRedirectPath } from '../../src/domain/redirect';
import type { Config } from '../config';
import { isAppError } from '../errors';
import type { OidcClient, PendingLogin } from './oidc';
import { currentUser, requireUser, SESSION_COOKIE, sessionTokenOf } from './session';
import { toUserDto, type AuthService } from './service';

const PENDING_COOKIE = 'oidc_login';
const PENDING_TTL_SECONDS = 600;
/** Set by logout, read by the next sign-in: see OidcSettings.promptAfterLogout. */
const LOGGED_OUT_COOKIE = 'logged_out';
const LOGGED_OUT_TTL_SECONDS = 30 * 24 * 3600;
export const CALLBACK_PATH = '/auth/google/callback';

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

export function authRoutes(app: FastifyInstance, deps: { config: Config; auth: AuthService; oidc: OidcClient }): void {
  const { config, auth, oidc } = deps;
  const secure = config.appUrl.startsWith('https://');

  const clearPending = (reply: FastifyReply) => reply.clearCookie(PENDING_COOKIE, { path: '/auth' });

  app.get('/auth/google', async (request: FastifyRequest, reply: FastifyReply) => {
    const query = request.query as Record<string, unknown>;
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
      path: '/auth',
      httpOnly: true,
      sameSite: 'lax',
      secure,
      signed: true,
      maxAge: PENDING_TTL_SECONDS,
    });
    return reply.redirect(started.url);
  });

  app.get(CALLBACK_PATH, async (request: FastifyRequest, reply: FastifyReply) => {
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
    const query = request.query as Record<string, unknown>;
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
    reply.clearCookie(LOGGED_OUT_COOKIE, { path: '/auth' });
    request.log.info({ userId: session.user.id }, 'signed in');
    return reply.redirect(safeRedirectPath(pending.successRedirect, config.appUrl, '/dashboard'));
  });

  app.get('/auth/me', { preHandler: requireUser(auth) }, async (request) => {
    return { success: true, data: toUserDto(currentUser(request)) };
  });

  app.post('/auth/logout', async (request, reply) => {
    const token = sessionTokenOf(request);
    if (token) await auth.signOut(token);
    reply.clearCookie(SESSION_COOKIE, { path: '/' });
    reply.setCookie(LOGGED_OUT_COOKIE, '1', {
      path: '/auth',
      httpOnly: true,
      sameSite: 'lax',
      secure,
      maxAge: LOGGED_OUT_TTL_SECONDS,
    });
    return { success: true, message: 'Logged out' };
  });
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
