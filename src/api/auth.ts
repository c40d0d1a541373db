import { currentUserEndpoint, logoutEndpoint } from '../domain/api/auth';
import type { User } from '../domain/user';
import { mayBeSignedIn } from './base';
import { ApiError, call, callUnread } from './client';

export { DEFAULT_RETURN_TO, mayBeSignedIn, signInUrl } from './base';

export function fetchCurrentUser(): Promise<User> {
  // Skipping the call a signed-out visitor would get a 401 from saves the first screen a
  // round trip and the browser console an error.
  if (!mayBeSignedIn()) return Promise.reject(new ApiError('Not signed in', 401, 'UNAUTHORIZED'));
  return call(currentUserEndpoint, {});
}

/**
 * SPEC section 7: the logout's reply is not read. Any success means signed out, even one
 * whose body is not the `{ success, message }` our server sends.
 */
export function logout(): Promise<void> {
  return callUnread(logoutEndpoint, {});
}
