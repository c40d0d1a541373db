import { expect } from 'vitest';
import type { AnyMachineSnapshot } from 'xstate';
import type { User } from '../../src/domain/user';
import { sessionMachine, type SessionContext } from '../../src/machines/session';
import { describeModel, doneOf, errorOf, type Controls } from './harness';

const user: User = {
  id: 7,
  avatar: null,
  name: 'Anna',
  email: 'anna@example.com',
  createdAt: '2026-11-01T10:00:00.000Z',
  isActive: true,
  tokensAmount: 50,
  subscriptionType: 'starter',
  subscriptionStatus: 'active',
  subscriptionTokensTotal: 0,
  subscriptionTokensUsed: 0,
  nextBillingDate: null,
  trialEndsAt: null,
};

const redirects: string[] = [];
const logged: string[] = [];

describeModel('session', {
  machine: sessionMachine,
  events: (snapshot: AnyMachineSnapshot) => [
    { type: 'LOGIN', returnTo: '/chat/5' },
    { type: 'LOGOUT' },
    { type: 'USER.REFRESH' },
    { type: 'SESSION.EXPIRED' },
    { type: 'BALANCE.CHANGED', balance: 30 },
    { type: 'BALANCE.CHARGED', amount: 6 },
    ...doneOf(snapshot, 'fetchUser', user),
    ...errorOf(snapshot, 'fetchUser', new Error('401')),
    ...doneOf(snapshot, 'logout', undefined),
    ...errorOf(snapshot, 'logout', new Error('offline')),
  ],
  // The balance matters, not how it was reached: keeps the traversal finite.
  serializeState: (s) => JSON.stringify([s.value, (s.context as SessionContext).user?.tokensAmount ?? null]),
  sut: (controls: Controls) =>
    sessionMachine.provide({
      actors: { fetchUser: controls.promise('fetchUser'), logout: controls.promise('logout') } as never,
      actions: {
        redirectToSignIn: (_, params) => {
          redirects.push(params.returnTo);
        },
        logFailure: (_, params) => {
          logged.push(params.what);
        },
      },
    }),
  check: (snapshot, _controls, event) => {
    // SPEC: the browser goes to sign-in with the remembered page; failures are only logged.
    if (snapshot.matches({ unauthenticated: 'redirecting' }) && event.type === 'LOGIN') {
      expect(redirects.at(-1)).toBe('/chat/5');
    }
    if (event.type.startsWith('xstate.error.actor')) expect(logged.length).toBeGreaterThan(0);
    if (snapshot.matches('unauthenticated')) expect((snapshot.context as SessionContext).user).toBeNull();
    if (snapshot.matches('authenticated'))
      expect((snapshot.context as SessionContext).user?.tokensAmount).toBeGreaterThanOrEqual(0);
  },
});
