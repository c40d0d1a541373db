import { z } from 'zod';
import { userRecordSchema } from '../user';
import { CROSS_SITE, doneMessage, endpoint, ok, redirectReply, refusals, SIGNED_IN_REFUSALS } from './contract';
import { SIGN_IN_PATH } from './sign-in';

/** Sign-in with Google (or the local identity provider) and the session (SPEC section 7). */

const tags = ['Auth'];

export const signInEndpoint = endpoint({
  method: 'GET',
  path: SIGN_IN_PATH,
  tags,
  summary: 'Sign in with Google (or the local identity provider): a redirect to it',
  description: 'A redirect that is not a path on this site, or is repeated, falls back to the default.',
  // Anything the query holds: the redirects are checked by the route, never refused here.
  query: z.looseObject({
    successRedirect: z.unknown().optional().describe('A path on this site to land on after signing in'),
    failureRedirect: z.unknown().optional().describe('A path on this site to land on when it fails'),
  }),
  replies: { 302: redirectReply, ...refusals(429, 500) },
});

export const signInCallbackEndpoint = endpoint({
  method: 'GET',
  path: '/auth/google/callback',
  tags,
  summary: "The identity provider's return: signs in and goes to the page asked for",
  description: 'A failed or refused sign-in goes to the failure page with an error in its query.',
  // The provider's answer; checked by the OpenID Connect client, never refused here.
  query: z.looseObject({
    code: z.unknown().optional(),
    state: z.unknown().optional(),
    error: z.unknown().optional(),
  }),
  replies: { 302: redirectReply, ...refusals(429, 500) },
});

export const currentUserEndpoint = endpoint({
  method: 'GET',
  path: '/auth/me',
  tags,
  summary: 'The signed-in user',
  replies: { 200: ok(userRecordSchema), ...refusals(...SIGNED_IN_REFUSALS) },
});

export const logoutEndpoint = endpoint({
  method: 'POST',
  path: '/auth/logout',
  tags,
  summary: 'Sign out',
  description: 'Answers 200 with or without a session; a request from another site answers 403.',
  replies: { 200: doneMessage, ...refusals(CROSS_SITE, 429, 500) },
});
