import type { FastifyInstance } from 'fastify';
import { signInCallbackEndpoint } from '../../src/domain/api/auth';
import type { Config } from '../config';
import type { Db } from '../db/client';
import type { LedgerService } from '../ledger/service';
import { DEV_CLIENT_ID, mountDevIdentityProvider } from './dev-idp';
import { OidcClient } from './oidc';
import { authRoutes } from './routes';
import { AuthService } from './service';

/**
 * Sign-in and sessions: Google when its credentials are configured, else the in-process
 * identity provider (server/auth/dev-idp.ts) through the very same OpenID Connect code.
 */
export async function registerAuth(
  server: FastifyInstance,
  deps: { config: Config; db: Db; ledger: LedgerService; cookieSecret: string },
): Promise<AuthService> {
  const { config } = deps;
  const auth = new AuthService(deps.db, deps.ledger, {
    sessionTtlDays: config.SESSION_TTL_DAYS,
    starterTokens: config.STARTER_TOKENS,
  });
  const oidc = await signInProvider(server, config, deps.cookieSecret);
  authRoutes(server, { config, auth, oidc });
  return auth;
}

async function signInProvider(server: FastifyInstance, config: Config, cookieSecret: string): Promise<OidcClient> {
  const redirectUri = `${config.appUrl}${signInCallbackEndpoint.path}`;
  if (config.GOOGLE_CLIENT_ID && config.GOOGLE_CLIENT_SECRET) {
    return new OidcClient({
      issuer: config.GOOGLE_ISSUER,
      clientId: config.GOOGLE_CLIENT_ID,
      clientSecret: config.GOOGLE_CLIENT_SECRET,
      redirectUri,
      allowInsecure: false,
      prompt: 'select_account',
    });
  }
  const clientSecret = `dev-${cookieSecret.slice(0, 24)}`;
  await mountDevIdentityProvider(server, {
    appUrl: config.appUrl,
    clientSecret,
    redirectUri,
    cookieKeys: [cookieSecret],
    trustProxy: config.TRUST_PROXY !== false,
  });
  return new OidcClient({
    issuer: `${config.appUrl}/dev-idp`,
    clientId: DEV_CLIENT_ID,
    clientSecret,
    redirectUri,
    allowInsecure: config.appUrl.startsWith('http://'),
    promptAfterLogout: 'login',
  });
}
