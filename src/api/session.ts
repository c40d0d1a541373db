import { fromPromise } from 'xstate';
import type { User } from '../domain/user';
import { sessionMachine } from '../machines/session';
import { fetchCurrentUser, logout, signInUrl } from './auth';

/** The session machine wired to the real API and the real browser location. */
export const liveSessionMachine = sessionMachine.provide({
  actors: {
    fetchUser: fromPromise<User>(() => fetchCurrentUser()),
    logout: fromPromise<void>(() => logout()),
  },
  actions: {
    redirectToSignIn: (_, params) => {
      globalThis.location.assign(signInUrl(params.returnTo));
    },
    logFailure: (_, params) => {
      console.warn(`[session] ${params.what} failed`, params.error);
    },
  },
});
