import { z } from 'zod';
import { userSchema, type User } from '../domain/user';
import { API_BASE, request } from './client';

export function fetchCurrentUser(): Promise<User> {
  return request((w) => w.get('/auth/me').json(), userSchema);
}

export async function logout(): Promise<void> {
  await request((w) => w.post(undefined, '/auth/logout').json(), z.unknown());
}

/** The browser goes to the server, which starts the Google (or local) sign-in. */
export function signInUrl(returnTo: string): string {
  const origin = globalThis.location.origin;
  const params = new URLSearchParams({
    successRedirect: `${origin}${returnTo}`,
    failureRedirect: `${origin}/login`,
  });
  return `${API_BASE}/auth/google?${params.toString()}`;
}
