import { z } from 'zod';
import { userSchema, type User } from '../domain/user';
import { API_BASE, request } from './client';

/** Where a sign-in leads when no page was remembered. */
export const DEFAULT_RETURN_TO = '/dashboard';

export function fetchCurrentUser(): Promise<User> {
  return request((w) => w.get('/auth/me').json(), userSchema);
}

export async function logout(): Promise<void> {
  await request((w) => w.post(undefined, '/auth/logout').json(), z.unknown());
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
