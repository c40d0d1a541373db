import { fromPromise } from 'xstate';
import type { User } from '../domain/user';
import { sessionMachine } from '../machines/session';
import { browserSessionActions } from './base';

/**
 * The session statechart for a page whose visitor cannot be signed in (mayBeSignedIn() is
 * false: no session mark on the page, no stored token). Its current-user check answers
 * "not signed in" at once, as fetchCurrentUser does then without a request, and signing
 * in leaves for the provider. The login page opened on its own runs it, without the API
 * client that the app's session (session.ts) needs.
 */
export const signedOutSessionMachine = sessionMachine.provide({
  actors: {
    // A 401, as fetchCurrentUser's ApiError has it.
    fetchUser: fromPromise<User>(() => Promise.reject(Object.assign(new Error('Not signed in'), { status: 401 }))),
    logout: fromPromise<void>(() => Promise.resolve()),
  },
  actions: browserSessionActions,
});
