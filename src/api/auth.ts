import { SESSION_HINT_META } from '../domain/session-hint';
import { userSchema, type User } from '../domain/user';
import { anyBody, API_BASE, ApiError, authHeaders, request } from './client';

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

export function fetchCurrentUser(): Promise<User> {
  // Skipping the call a signed-out visitor would get a 401 from saves the first screen a
  // round trip and the browser console an error.
  if (!mayBeSignedIn()) return Promise.reject(new ApiError('Not signed in', 401, 'UNAUTHORIZED'));
  return request((w) => w.get('/auth/me').json(), userSchema);
}

export async function logout(): Promise<void> {
  await request((w) => w.post(undefined, '/auth/logout').json(), anyBody);
}

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
  return `${API_BASE}/auth/google?${params.toString()}`;
}
