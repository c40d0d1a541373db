import { fromPromise } from 'xstate';
import type { User } from '../domain/user';
import { sessionMachine } from '../machines/session';
import { fetchCurrentUser, logout } from './auth';
import { goToSignIn } from './base';
import { ApiError } from './client';

/** The session machine wired to the real API and the real browser location. */
export const liveSessionMachine = sessionMachine.provide({
  actors: {
    fetchUser: fromPromise<User>(() => fetchCurrentUser()),
    logout: fromPromise<void>(() => logout()),
  },
  actions: {
    redirectToSignIn: (_, params) => goToSignIn(params.returnTo),
    logFailure: (_, params) => {
      // A 401 is the answer for a visitor who is not signed in, not a failure: a short
      // line, without the error (whose stack an open DevTools would have to serialise).
      if (params.error instanceof ApiError && params.error.status === 401) {
        console.log(`[session] ${params.what}: not signed in`);
      } else console.warn(`[session] ${params.what} failed`, params.error);
    },
  },
});
