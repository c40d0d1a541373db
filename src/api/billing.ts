import { fromPromise } from 'xstate';
import type { CreatePaymentResponse, LedgerPage, Payment, Subscription } from '../domain/billing';
import { billingMachine, HISTORY_LIMIT, HISTORY_PAGE, type BillingOverview } from '../machines/billing';
import { paymentStatusMachine } from '../machines/payment-status';
import { purchaseMachine, type Order } from '../machines/purchase';
import {
  cancelSubscription,
  createSubscriptionPayment,
  createTokenPayment,
  fetchLedger,
  fetchPayment,
  fetchPaymentHistory,
  fetchPlans,
  fetchSubscription,
} from './payments';

/** The billing machine wired to the API; the screen adds what needs the session and toasts. */
export const liveBillingMachine = billingMachine.provide({
  actors: {
    loadBilling: fromPromise<BillingOverview>(async () => {
      const [plans, history, subscription] = await Promise.all([
        fetchPlans(),
        fetchPaymentHistory(HISTORY_PAGE, HISTORY_LIMIT),
        fetchSubscription().then(
          (value) => ({ ok: true as const, subscription: value }),
          (error: unknown) => ({ ok: false as const, error }),
        ),
      ]);
      return { plans, history: history.payments, subscription };
    }),
    loadLedger: fromPromise<LedgerPage, { page: number; limit: number }>(({ input }) =>
      fetchLedger(input.page, input.limit),
    ),
    cancelSubscription: fromPromise<Subscription>(() => cancelSubscription()),
  },
  actions: {
    logFailure: (_, params) => {
      console.warn(`[billing] ${params.what} failed`, params.error);
    },
  },
});

/** The purchase machine wired to the API and to the browser's location. */
export const livePurchaseMachine = purchaseMachine.provide({
  actors: {
    createPayment: fromPromise<CreatePaymentResponse, { order: Order }>(({ input }) =>
      input.order.kind === 'tokens'
        ? createTokenPayment(input.order.tokensAmount)
        : createSubscriptionPayment(input.order.plan),
    ),
  },
  actions: {
    redirect: (_, params) => {
      globalThis.location.assign(params.url);
    },
    logFailure: (_, params) => {
      console.warn('[purchase] creating the payment failed', params.error);
    },
  },
});

export const livePaymentStatusMachine = paymentStatusMachine.provide({
  actors: {
    fetchPayment: fromPromise<Payment, { paymentId: string }>(({ input }) => fetchPayment(input.paymentId)),
  },
  actions: {
    logFailure: (_, params) => {
      console.warn('[payment-status] checking the payment failed', params.error);
    },
  },
});
