import { generateKeyPair, exportJWK } from 'jose';
import Provider, { errors, type Configuration } from 'oidc-provider';
import oidcRequestContext from 'oidc-provider/lib/helpers/als.js';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DEV_IDP_PREFIX } from '../../src/domain/api/prefixes';

export const DEV_CLIENT_ID = 'local-dev-client';

/**
 * The identity provider used when no Google credentials are configured: oidc-provider
 * with its development login form (any login, any password), mounted in-process so the
 * very same OpenID Connect code path runs locally, in tests and in production.
 * Its state lives in memory: a restart only forgets logins that were in flight.
 */
export async function mountDevIdentityProvider(
  app: FastifyInstance,
  options: { appUrl: string; clientSecret: string; redirectUri: string; cookieKeys: string[]; trustProxy: boolean },
): Promise<void> {
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const jwk = { ...(await exportJWK(privateKey)), alg: 'RS256', use: 'sig', kid: 'dev-idp' };

  const configuration: Configuration = {
    clients: [
      {
        client_id: DEV_CLIENT_ID,
        client_secret: options.clientSecret,
        redirect_uris: [options.redirectUri],
        response_types: ['code'],
        grant_types: ['authorization_code'],
        token_endpoint_auth_method: 'client_secret_post',
      },
    ],
    jwks: { keys: [jwk] },
    cookies: { keys: options.cookieKeys },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name', 'picture'] },
    conformIdTokenClaims: false,
    ttl: { Interaction: 600, Session: 3600, Grant: 3600, AuthorizationCode: 60, AccessToken: 600, IdToken: 600 },
    pkce: { required: () => true },
    features: { devInteractions: { enabled: true } },
    // A local first-party client: skip the consent page, as Google does for a known app.
    loadExistingGrant: async (ctx) => {
      const accountId = ctx.oidc.session!.accountId!;
      const grantId = ctx.oidc.result?.consent?.grantId ?? ctx.oidc.session?.grantIdFor(ctx.oidc.client!.clientId);
      const existing = grantId ? await ctx.oidc.provider.Grant.find(grantId) : undefined;
      // The browser's provider session may have signed in another account before (a logout,
      // then the form again): that account's grant is not this one's.
      if (existing?.accountId === accountId) return existing;
      const grant = new ctx.oidc.provider.Grant({ clientId: ctx.oidc.client!.clientId, accountId });
      grant.addOIDCScope('openid email profile');
      await grant.save();
      return grant;
    },
    findAccount: (_ctx, login) => {
      // The login typed into the form becomes the account: an e-mail is used as is,
      // anything else gets a local address so every account has one.
      const trimmed = login.trim().toLowerCase();
      const email = trimmed.includes('@') ? trimmed : `${trimmed.replace(/[^a-z0-9._-]/g, '') || 'user'}@local.test`;
      const name = email.split('@')[0] ?? email;
      return {
        accountId: login,
        claims: () => ({ sub: email, email, email_verified: true, name, picture: undefined }),
      };
    },
    // The browser never stays on a provider error page: Back after signing in or out reaches
    // an interaction already used up ("interaction session not found"), which is no error
    // for the person, so it goes to the sign-in page; anything else goes there saying that
    // the sign-in failed, in the user's language (issue #26).
    renderError: (ctx, _out, error) => {
      const usedUp = error instanceof errors.SessionNotFound;
      ctx.status = 303;
      ctx.redirect(`${options.appUrl}/login${usedUp ? '' : '?error=signin_failed'}`);
    },
  };

  const provider = new Provider(`${options.appUrl}${DEV_IDP_PREFIX}`, configuration);
  provider.proxy = options.trustProxy;
  const callback = provider.callback();

  await app.register(async (scope) => {
    // oidc-provider reads its own request bodies: leave the stream untouched.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', (_request, _payload, done) => {
      done(null, undefined);
    });
    // oidc-provider runs each request in an AsyncLocalStorage, and in Node 20 an enabled
    // one installs promise hooks that tax every await of the whole process (every API
    // request, chat stream and query: several times the cost of a bare await) for the rest
    // of its life. The storage is switched off again whenever no
    // sign-in request is in flight; its next request switches it on (run() does).
    let inFlight = 0;
    const handle = (request: FastifyRequest, reply: FastifyReply) => {
      reply.hijack();
      const raw = request.raw as typeof request.raw & { originalUrl?: string };
      raw.originalUrl = raw.url;
      raw.url = (raw.url ?? '/').slice(DEV_IDP_PREFIX.length) || '/';
      inFlight += 1;
      reply.raw.once('close', () => {
        inFlight -= 1;
        if (inFlight === 0) oidcRequestContext.disable();
      });
      void callback(raw, reply.raw);
    };
    // The provider's own protocol (OpenID Connect), not our API: left out of /api/openapi.json.
    const hidden = { schema: { hide: true } };
    scope.all(DEV_IDP_PREFIX, hidden, handle);
    scope.all(`${DEV_IDP_PREFIX}/*`, hidden, handle);
  });
}
