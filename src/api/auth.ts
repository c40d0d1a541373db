import { userSchema, type User } from '../domain/user';
import { mayBeSignedIn } from './base';
import { anyBody, ApiError, request } from './client';

export { DEFAULT_RETURN_TO, mayBeSignedIn, signInUrl } from './base';

export function fetchCurrentUser(): Promise<User> {
  // Skipping the call a signed-out visitor would get a 401 from saves the first screen a
  // round trip and the browser console an error.
  if (!mayBeSignedIn()) return Promise.reject(new ApiError('Not signed in', 401, 'UNAUTHORIZED'));
  return request((w) => w.get('/auth/me').json(), userSchema);
}

export async function logout(): Promise<void> {
  await request((w) => w.post(undefined, '/auth/logout').json(), anyBody);
}
