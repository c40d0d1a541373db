import type { FastifyInstance, FastifyReply } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { safeRedirectPath } from '../../src/domain/redirect';
import { subscriptionStatuses, subscriptionTypes } from '../../src/domain/user';
import type { Config } from '../config';
import { isAppError } from '../errors';
import { doneMessage, ok, redirect } from '../http/schemas';
import type { OidcClient, PendingLogin } from './oidc';
import { currentUser, requireUser, SESSION_COOKIE, sessionTokenOf } from './session';
import type { AuthService } from './service';

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

/** SPEC section 3's User, as /auth/me sends it. */
const userDto = z.object({
  id: z.number().int(),
  avatar: z.string().nullable(),
  name: z.string().nullable(),
  email: z.string(),
  createdAt: z.string(),
  isActive: z.boolean(),
  tokensAmount: z.number().int(),
  subscriptionType: z.enum(subscriptionTypes),
  subscriptionStatus: z.enum(subscriptionStatuses),
  subscriptionTokensTotal: z.number().int(),
  subscriptionTokensUsed: z.number().int(),
  nextBillingDate: z.string().nullable(),
  trialEndsAt: z.string().nullable(),
});

/** Anything the query holds: a redirect that is not ours, or repeated, falls back to the default. */
const signInQuery = z.looseObject({
  successRedirect: z.unknown().optional().describe('A path on this site to land on after signing in'),
  failureRedirect: z.unknown().optional().describe('A path on this site to land on when it fails'),
});
/** The provider's answer; checked by the OpenID Connect client, never refused here. */
const callbackQuery = z.looseObject({
  code: z.unknown().optional(),
  state: z.unknown().optional(),
  error: z.unknown().optional(),
});

function withParam(path: string, key: string, value: string): string {
  const url = new URL(path, 'http://x');
  url.searchParams.set(key, value);
  return `${url.pathname}${url.search}${url.hash}`;
}

export function authRoutes(app: FastifyInstance, deps: { config: Config; auth: AuthService; oidc: OidcClient }): void {
  const { config, auth, oidc } = deps;
  const server = app.withTypeProvider<ZodTypeProvider>();
  const tags = ['Auth'];
  const secure = config.appUrl.startsWith('https://');

  const clearPending = (reply: FastifyReply) => reply.clearCookie(PENDING_COOKIE, { path: '/auth' });

  const signIn = {
    schema: {
      tags,
      summary: 'Sign in with Google (or the local identity provider): a redirect to it',
      querystring: signInQuery,
      response: { 302: redirect },
    },
  };
  server.get('/auth/google', signIn, async (request, reply) => {
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
      path: '/auth',
      httpOnly: true,
      sameSite: 'lax',
      secure,
      signed: true,
      maxAge: PENDING_TTL_SECONDS,
    });
    return reply.redirect(started.url);
  });

  const callback = {
    schema: {
      tags,
      summary: "The identity provider's return: signs in and goes to the page asked for",
      querystring: callbackQuery,
      response: { 302: redirect },
    },
  };
  server.get(CALLBACK_PATH, callback, async (request, reply) => {
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
    reply.clearCookie(LOGGED_OUT_COOKIE, { path: '/auth' });
    request.log.info({ userId: session.user.id }, 'signed in');
    return reply.redirect(safeRedirectPath(pending.successRedirect, config.appUrl, '/dashboard'));
  });

  server.get(
    '/auth/me',
    { preHandler: requireUser(auth), schema: { tags, summary: 'The signed-in user', response: { 200: ok(userDto) } } },
    async (request) => ({ success: true as const, data: await auth.current(currentUser(request)) }),
  );

  server.post(
    '/auth/logout',
    { schema: { tags, summary: 'Sign out', response: { 200: doneMessage } } },
    async (request, reply) => {
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
      return { success: true as const, message: 'Logged out' };
    },
  );
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
