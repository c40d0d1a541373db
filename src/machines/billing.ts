import { assign, fromPromise, setup } from 'xstate';
import type { LedgerPage, PaymentHistoryItem, Plan, Subscription } from '../domain/billing';
import { canCancelSubscription } from '../domain/subscription';

/** SPEC section 9: the billing screen shows page 1 of the payment history. */
export const HISTORY_PAGE = 1;
export const HISTORY_LIMIT = 10;
export const LEDGER_LIMIT = 10;

/** The subscription read may fail on its own: SPEC says that is only logged. */
export type SubscriptionRead = { ok: true; subscription: Subscription | null } | { ok: false; error: unknown };

export interface BillingOverview {
  plans: Plan[];
  history: PaymentHistoryItem[];
  subscription: SubscriptionRead;
}

export type BillingEvent =
  | { type: 'RETRY' }
  | { type: 'LEDGER.PAGE'; page: number }
  | { type: 'LEDGER.RETRY' }
  | { type: 'CANCEL.REQUEST' }
  | { type: 'CANCEL.CONFIRM' }
  | { type: 'CANCEL.DISMISS' };

export interface BillingContext {
  plans: Plan[];
  history: PaymentHistoryItem[];
  subscription: Subscription | null;
  /** The subscription could not be read: the screen falls back to starter (SPEC 4). */
  subscriptionFailed: boolean;
  ledger: LedgerPage | null;
  ledgerPage: number;
  error: string | null;
  ledgerError: string | null;
  cancelError: string | null;
}

function messageOf(error: unknown): string {
  return error instanceof Error && error.message ? error.message : 'Something went wrong';
}

/**
 * /billing: plans, the subscription, the payment history and the spend history (the
 * ledger, paged), and cancelling a subscription with a confirmation.
 */
export const billingMachine = setup({
  // Stryker disable all: type declarations only, erased when the code runs
  types: {
    context: {} as BillingContext,
    events: {} as BillingEvent,
  },
  // Stryker restore all
  // Stryker disable all: placeholders; the app and every test provide these actors
  actors: {
    loadBilling: fromPromise<BillingOverview>(() => Promise.reject(new Error('loadBilling not provided'))),
    loadLedger: fromPromise<LedgerPage, { page: number; limit: number }>(() =>
      Promise.reject(new Error('loadLedger not provided')),
    ),
    cancelSubscription: fromPromise<Subscription>(() => Promise.reject(new Error('cancelSubscription not provided'))),
  },
  // Stryker restore all
  actions: {
    // Stryker disable all: placeholders; the app and every test provide these actions
    /** SPEC: a failed subscription load is only logged. */
    logFailure: (_, _params: { what: string; error: unknown }) => {},
    /** The subscription changed on the server: the session reads the user again. */
    refreshUser: () => {},
    /** Tells the user the subscription will end at the period end; provided by the screen. */
    notifyCancelled: () => {},
    // Stryker restore all
    setOverview: assign((_, params: { overview: BillingOverview }) => ({
      plans: params.overview.plans,
      history: params.overview.history,
      subscription: params.overview.subscription.ok ? params.overview.subscription.subscription : null,
      subscriptionFailed: !params.overview.subscription.ok,
      error: null,
    })),
    setError: assign((_, params: { error: unknown }) => ({ error: messageOf(params.error) })),
    setLedger: assign((_, params: { ledger: LedgerPage }) => ({ ledger: params.ledger, ledgerError: null })),
    setLedgerPage: assign((_, params: { page: number }) => ({ ledgerPage: params.page })),
    setLedgerError: assign((_, params: { error: unknown }) => ({ ledgerError: messageOf(params.error) })),
    setSubscription: assign((_, params: { subscription: Subscription }) => ({
      subscription: params.subscription,
      cancelError: null,
    })),
    setCancelError: assign((_, params: { error: unknown }) => ({ cancelError: messageOf(params.error) })),
    clearCancelError: assign({ cancelError: null }),
  },
  guards: {
    cancellable: ({ context }) => canCancelSubscription(context.subscription),
    otherPage: ({ context }, params: { page: number }) =>
      params.page !== context.ledgerPage &&
      params.page >= 1 &&
      params.page <= Math.max(1, context.ledger?.pagination.totalPages ?? 1),
    subscriptionFailed: (_, params: { overview: BillingOverview }) => !params.overview.subscription.ok,
  },
}).createMachine({
  id: 'billing',
  context: {
    plans: [],
    history: [],
    subscription: null,
    subscriptionFailed: false,
    ledger: null,
    ledgerPage: 1,
    error: null,
    ledgerError: null,
    cancelError: null,
  },
  initial: 'loading',
  states: {
    loading: {
      invoke: {
        src: 'loadBilling',
        onDone: [
          {
            guard: { type: 'subscriptionFailed', params: ({ event }) => ({ overview: event.output }) },
            target: 'ready',
            actions: [
              { type: 'setOverview', params: ({ event }) => ({ overview: event.output }) },
              {
                type: 'logFailure',
                params: ({ event }) => ({
                  what: 'subscription loading',
                  error: event.output.subscription.ok ? null : event.output.subscription.error,
                }),
              },
            ],
          },
          { target: 'ready', actions: { type: 'setOverview', params: ({ event }) => ({ overview: event.output }) } },
        ],
        onError: { target: 'error', actions: { type: 'setError', params: ({ event }) => ({ error: event.error }) } },
      },
    },
    error: {
      on: { RETRY: 'loading' },
    },
    ready: {
      type: 'parallel',
      states: {
        ledger: {
          initial: 'loading',
          states: {
            loading: {
              invoke: {
                src: 'loadLedger',
                input: ({ context }) => ({ page: context.ledgerPage, limit: LEDGER_LIMIT }),
                onDone: {
                  target: 'ready',
                  actions: { type: 'setLedger', params: ({ event }) => ({ ledger: event.output }) },
                },
                onError: {
                  target: 'error',
                  actions: { type: 'setLedgerError', params: ({ event }) => ({ error: event.error }) },
                },
              },
            },
            ready: {
              on: {
                'LEDGER.PAGE': {
                  guard: { type: 'otherPage', params: ({ event }) => ({ page: event.page }) },
                  target: 'loading',
                  actions: { type: 'setLedgerPage', params: ({ event }) => ({ page: event.page }) },
                },
              },
            },
            error: {
              on: { 'LEDGER.RETRY': 'loading' },
            },
          },
        },
        subscription: {
          initial: 'idle',
          states: {
            idle: {
              on: { 'CANCEL.REQUEST': { guard: 'cancellable', target: 'confirming' } },
            },
            confirming: {
              on: { 'CANCEL.CONFIRM': 'cancelling', 'CANCEL.DISMISS': 'idle' },
            },
            cancelling: {
              invoke: {
                src: 'cancelSubscription',
                onDone: {
                  target: 'idle',
                  actions: [
                    { type: 'setSubscription', params: ({ event }) => ({ subscription: event.output }) },
                    'refreshUser',
                    'notifyCancelled',
                  ],
                },
                onError: {
                  target: 'failed',
                  actions: { type: 'setCancelError', params: ({ event }) => ({ error: event.error }) },
                },
              },
            },
            failed: {
              on: {
                'CANCEL.CONFIRM': { target: 'cancelling', actions: 'clearCancelError' },
                'CANCEL.DISMISS': { target: 'idle', actions: 'clearCancelError' },
              },
            },
          },
        },
      },
    },
  },
});
