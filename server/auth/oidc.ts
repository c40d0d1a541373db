import * as client from 'openid-client';
import type { IdentityClaims } from './repository';

export interface OidcSettings {
  issuer: string;
  clientId: string;
  clientSecret: string;
  redirectUri: string;
  /** Plain http is only allowed for the in-process identity provider. */
  allowInsecure: boolean;
  /** Google: 'select_account', so a person with several accounts can choose. */
  prompt?: string;
  /**
   * Asked for on the first sign-in after a logout, so that the provider's own session (still
   * open: logging out of the app does not end it) does not sign the same account in again
   * without a word; the local provider: 'login', its form again.
   */
  promptAfterLogout?: string;
}

export interface PendingLogin {
  state: string;
  nonce: string;
  codeVerifier: string;
}

/**
 * The OpenID Connect relying party: the same code talks to Google and to the in-process
 * provider. Discovery is done on first use and cached; a failed discovery is retried on
 * the next sign-in instead of failing the boot.
 */
export class OidcClient {
  private configuration?: Promise<client.Configuration>;

  constructor(private readonly settings: OidcSettings) {}

  private config(): Promise<client.Configuration> {
    this.configuration ??= client
      .discovery(
        new URL(this.settings.issuer),
        this.settings.clientId,
        this.settings.clientSecret,
        client.ClientSecretPost(this.settings.clientSecret),
        this.settings.allowInsecure ? { execute: [client.allowInsecureRequests], timeout: 10 } : { timeout: 10 },
      )
      .catch((error: unknown) => {
        this.configuration = undefined;
        throw error;
      });
    return this.configuration;
  }

  async start(options: { afterLogout?: boolean } = {}): Promise<{ url: string; pending: PendingLogin }> {
    const config = await this.config();
    const pending: PendingLogin = {
      state: client.randomState(),
      nonce: client.randomNonce(),
      codeVerifier: client.randomPKCECodeVerifier(),
    };
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: this.settings.redirectUri,
      scope: 'openid email profile',
      code_challenge: await client.calculatePKCECodeChallenge(pending.codeVerifier),
      code_challenge_method: 'S256',
      state: pending.state,
      nonce: pending.nonce,
    });
    const prompt = (options.afterLogout ? this.settings.promptAfterLogout : undefined) ?? this.settings.prompt;
    if (prompt) url.searchParams.set('prompt', prompt);
    return { url: url.href, pending };
  }

  /** Exchanges the code; throws on any mismatch (state, nonce, PKCE, signature). */
  async finish(callbackUrl: URL, pending: PendingLogin): Promise<IdentityClaims> {
    const config = await this.config();
    const tokens = await client.authorizationCodeGrant(config, callbackUrl, {
      pkceCodeVerifier: pending.codeVerifier,
      expectedState: pending.state,
      expectedNonce: pending.nonce,
      idTokenExpected: true,
    });
    const claims = tokens.claims();
    if (!claims) throw new Error('the identity provider returned no ID token');
    const email = typeof claims.email === 'string' ? claims.email : undefined;
    if (!email) throw new Error('the identity provider returned no e-mail');
    return {
      issuer: claims.iss,
      subject: claims.sub,
      email,
      name: typeof claims.name === 'string' ? claims.name : null,
      avatar: typeof claims.picture === 'string' ? claims.picture : null,
    };
  }
}
