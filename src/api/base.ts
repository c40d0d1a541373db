import { SIGN_IN_PATH } from '../domain/api/sign-in';
import { SESSION_HINT_META } from '../domain/session-hint';
import { forgetDrafts, holdDrafts } from './drafts';

/*
 * What a page needs of the API before it talks to it: where it is, the stored token, and
 * whether a visitor can be signed in at all. Kept apart from the client (wretch, the error
 * catalogue) so that the login page, which calls no API, loads none of that.
 */

/** Same origin by default; VITE_API_URL points the app at another API host. */
export const API_BASE: string = (import.meta.env.VITE_API_URL as string | undefined)?.replace(/\/+$/, '') ?? '';

export const AUTH_TOKEN_KEY = 'authToken';

function storedToken(): string | undefined {
  try {
    return globalThis.localStorage?.getItem(AUTH_TOKEN_KEY) ?? undefined;
  } catch {
    return undefined;
  }
}

/** Headers every call carries: the bearer token when one is stored (SPEC section 7). */
export function authHeaders(): Record<string, string> {
  const token = storedToken();
  return token ? { Authorization: `Bearer ${token}` } : {};
}

/**
 * Whether the current-user call can succeed at all: false only when this page came from
 * our own server (same origin, production build) without the mark it adds to pages served
 * with a session cookie (src/domain/session-hint.ts), and no bearer token is stored.
 */
export function mayBeSignedIn(): boolean {
  if (import.meta.env.DEV || API_BASE !== '' || 'Authorization' in authHeaders()) return true;
  return globalThis.document?.querySelector(`meta[name="${SESSION_HINT_META}"]`) != null;
}

/** Where a sign-in leads when no page was remembered. */
export const DEFAULT_RETURN_TO = '/dashboard';

/**
 * The browser goes to the server, which starts the Google (or local) sign-in. A failed or
 * cancelled sign-in comes back to /login still remembering the page, for the next try.
 */
export function signInUrl(returnTo: string, origin: string = globalThis.location.origin): string {
  const failure = returnTo === DEFAULT_RETURN_TO ? '/login' : `/login?${new URLSearchParams({ redirect: returnTo })}`;
  const params = new URLSearchParams({
    successRedirect: `${origin}${returnTo}`,
    failureRedirect: `${origin}${failure}`,
  });
  return `${API_BASE}${SIGN_IN_PATH}?${params.toString()}`;
}

/**
 * The session statechart's actions in the browser, the same for the app's session
 * (session.ts) and the login page's (signed-out-session.ts): sign-in leaves for the
 * provider, and failures are only logged (SPEC). A 401 is the answer for a visitor who is
 * not signed in, not a failure: a short line, without the error (whose stack an open
 * DevTools would have to serialise).
 */
export const browserSessionActions = {
  holdDrafts,
  forgetDrafts,
  redirectToSignIn: (_: unknown, params: { returnTo: string }) => {
    globalThis.location.assign(signInUrl(params.returnTo));
  },
  logFailure: (_: unknown, params: { what: string; error: unknown }) => {
    if ((params.error as { status?: unknown } | null | undefined)?.status === 401) {
      console.log(`[session] ${params.what}: not signed in`);
    } else console.warn(`[session] ${params.what} failed`, params.error);
  },
};
