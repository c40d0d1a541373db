import { fromPromise } from 'xstate';
import type { User } from '../domain/user';
import { sessionMachine } from '../machines/session';
import { fetchCurrentUser, logout } from './auth';
import { browserSessionActions } from './base';

/** The session machine wired to the real API and the real browser location. */
export const liveSessionMachine = sessionMachine.provide({
  actors: {
    fetchUser: fromPromise<User>(() => fetchCurrentUser()),
    logout: fromPromise<void>(() => logout()),
  },
  actions: browserSessionActions,
});
