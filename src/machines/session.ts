import { assign, fromPromise, setup, type ActorRefFrom } from 'xstate';
import type { User } from '../domain/user';

export type SessionEvent =
  | { type: 'LOGIN'; returnTo: string }
  | { type: 'LOGOUT' }
  | { type: 'USER.REFRESH' }
  /** An API call answered 401: the session ended on the server (expired, logged out elsewhere). */
  | { type: 'SESSION.EXPIRED' }
  /** The server told us the new balance (e.g. balanceAfter of a chat reply). */
  | { type: 'BALANCE.CHANGED'; balance: number }
  /** A generation charged this many tokens (SPEC: reduce by tokens.charged). */
  | { type: 'BALANCE.CHARGED'; amount: number };

/**
 * What a paid reply tells the session: the balance after the charge when the server
 * states it, else the charge to take off the old figure (SPEC section 4, tokens.charged).
 */
export function chargeEvent(reply: { balanceAfter?: number; tokens: { charged: number } }): SessionEvent {
  return reply.balanceAfter !== undefined
    ? { type: 'BALANCE.CHANGED', balance: reply.balanceAfter }
    : { type: 'BALANCE.CHARGED', amount: reply.tokens.charged };
}

export interface SessionContext {
  user: User | null;
}

/**
 * SPEC section 4 "Session": loading -> authenticated | unauthenticated. The root actor of
 * the app; every screen reads the user and the balance from it.
 */
export const sessionMachine = setup({
  // Stryker disable all: type declarations only, erased when the code runs
  types: {
    context: {} as SessionContext,
    events: {} as SessionEvent,
  },
  // Stryker restore all
  // Stryker disable all: placeholders; the app and every test provide these actors
  actors: {
    fetchUser: fromPromise<User>(() => Promise.reject(new Error('fetchUser not provided'))),
    logout: fromPromise<void>(() => Promise.reject(new Error('logout not provided'))),
  },
  // Stryker restore all
  actions: {
    /** Sends the browser to the sign-in start; provided by the app. */
    redirectToSignIn: (_, _params: { returnTo: string }) => {},
    /** SPEC: failures of the auth check and of the server logout are only logged. */
    logFailure: (_, _params: { what: string; error: unknown }) => {},
    /** The session ended mid-work: what the user was typing waits for their sign-in (#26). */
    holdDrafts: () => {},
    /** A logout: nothing typed stays behind for the next person at the computer. */
    forgetDrafts: () => {},
    setUser: assign((_, params: { user: User }) => ({ user: params.user })),
    clearUser: assign({ user: null }),
    setBalance: assign(({ context }, params: { balance: number }) => ({
      user: context.user ? { ...context.user, tokensAmount: Math.max(0, params.balance) } : null,
    })),
  },
}).createMachine({
  id: 'session',
  context: { user: null },
  initial: 'loading',
  states: {
    loading: {
      invoke: {
        src: 'fetchUser',
        onDone: {
          target: 'authenticated',
          actions: { type: 'setUser', params: ({ event }) => ({ user: event.output }) },
        },
        onError: {
          target: 'unauthenticated',
          actions: [
            'clearUser',
            { type: 'logFailure', params: ({ event }) => ({ what: 'auth check', error: event.error }) },
          ],
        },
      },
    },
    authenticated: {
      initial: 'idle',
      on: {
        LOGOUT: { target: 'unauthenticated.loggingOut', actions: ['clearUser', 'forgetDrafts'] },
        // Not a logout: the visitor is told, and the page and drafts are kept for after sign-in.
        'SESSION.EXPIRED': { target: 'unauthenticated.expired', actions: ['clearUser', 'holdDrafts'] },
        'BALANCE.CHANGED': {
          actions: { type: 'setBalance', params: ({ event }) => ({ balance: event.balance }) },
        },
        'BALANCE.CHARGED': {
          actions: {
            type: 'setBalance',
            params: ({ context, event }) => ({ balance: (context.user?.tokensAmount ?? 0) - event.amount }),
          },
        },
      },
      states: {
        idle: {
          on: { 'USER.REFRESH': 'refreshing' },
        },
        refreshing: {
          invoke: {
            src: 'fetchUser',
            onDone: { target: 'idle', actions: { type: 'setUser', params: ({ event }) => ({ user: event.output }) } },
            onError: {
              target: 'idle',
              actions: { type: 'logFailure', params: ({ event }) => ({ what: 'user refresh', error: event.error }) },
            },
          },
        },
      },
    },
    unauthenticated: {
      initial: 'idle',
      states: {
        idle: {
          on: { LOGIN: 'redirecting' },
        },
        /** The server ended the session (an API call answered 401) while the user worked. */
        expired: {
          on: { LOGIN: 'redirecting' },
        },
        loggingOut: {
          invoke: {
            src: 'logout',
            onDone: 'idle',
            onError: {
              target: 'idle',
              actions: { type: 'logFailure', params: ({ event }) => ({ what: 'logout', error: event.error }) },
            },
          },
        },
        redirecting: {
          entry: {
            type: 'redirectToSignIn',
            params: ({ event }) => ({ returnTo: event.type === 'LOGIN' ? event.returnTo : '/dashboard' }),
          },
        },
      },
    },
  },
});

/** The session actor as the charts that tell it the balance (and the screens) hold it. */
export type SessionRef = ActorRefFrom<typeof sessionMachine>;
