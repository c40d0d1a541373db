import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../errors';
import type { UserRow } from './repository';
import type { AuthService } from './service';

export const SESSION_COOKIE = 'session';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by `requireUser` on protected routes. */
    user: UserRow | null;
  }
}

/** The session token from the httpOnly cookie, or from an Authorization bearer header. */
export function sessionTokenOf(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  if (header?.startsWith('Bearer ')) {
    const token = header.slice('Bearer '.length).trim();
    if (token) return token;
  }
  return request.cookies[SESSION_COOKIE] || undefined;
}

/** A preHandler for protected routes: 401 unless a live session is presented. */
export function requireUser(auth: AuthService) {
  return async (request: FastifyRequest, _reply: FastifyReply): Promise<void> => {
    const token = sessionTokenOf(request);
    const user = token ? await auth.userForToken(token) : undefined;
    if (!user) throw new AppError('UNAUTHORIZED');
    request.user = user;
  };
}

/** The live session's user, or undefined: for pages that send a visitor without one to sign in. */
export async function optionalUser(auth: AuthService, request: FastifyRequest): Promise<UserRow | undefined> {
  const token = sessionTokenOf(request);
  return token ? await auth.userForToken(token) : undefined;
}

/**
 * Where a browser without a session goes to come back to `path` once signed in: the
 * login page, which remembers it (SPEC section 2) and hands it to sign-in as
 * successRedirect.
 */
export function signInAndBack(path: string): string {
  return `/login?${new URLSearchParams({ redirect: path }).toString()}`;
}

/** The signed-in user of a route guarded by `requireUser`. */
export function currentUser(request: FastifyRequest): UserRow {
  if (!request.user) throw new AppError('UNAUTHORIZED');
  return request.user;
}
