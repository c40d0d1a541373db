import { assign, fromCallback, fromPromise, setup } from 'xstate';
import { billingErrorMessages, type Payment } from '../domain/billing';

/** SPEC section 8's texts of the payment page. */
export const paymentStatusMessages = {
  failed: billingErrorMessages.paymentFailed,
  unknown: billingErrorMessages.unknownStatus,
  checkFailed: billingErrorMessages.checkStatus,
} as const;

export type PaymentStatusMessage = (typeof paymentStatusMessages)[keyof typeof paymentStatusMessages];

export type PaymentStatusEvent =
  /** The pause between two checks of a pending payment is over. */
  | { type: 'RECHECK' }
  /** Still undecided after every check: the user asks once more. */
  | { type: 'RETRY' };

export interface PaymentStatusInput {
  paymentId?: string;
  /** What the return address said (success, failed, pending); the server has the last word. */
  status?: string;
  /** How many times a pending payment is checked before the page says it is still waiting. */
  maxChecks?: number;
}

export interface PaymentStatusContext {
  paymentId: string | null;
  /** The return address's status, read only when there is no payment to confirm. */
  hint: string | null;
  payment: Payment | null;
  message: PaymentStatusMessage | null;
  checks: number;
  maxChecks: number;
}

/** About a minute of checking, one check every RECHECK_INTERVAL_MS. */
export const DEFAULT_MAX_CHECKS = 30;
export const RECHECK_INTERVAL_MS = 2000;

/**
 * SPEC section 2 "Payment status page" and 4 "Payment page": loading, success, failed. With a
 * payment id the query's status is only a hint: the page confirms with GET /api/payments/{id}; while the
 * provider has not decided it keeps checking for a while, then offers to check again.
 */
export const paymentStatusMachine = setup({
  // Stryker disable all: type declarations only, erased when the code runs
  types: {
    context: {} as PaymentStatusContext,
    events: {} as PaymentStatusEvent,
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion -- xstate takes the input type from it
    input: {} as PaymentStatusInput,
  },
  // Stryker restore all
  actors: {
    // Stryker disable all: a placeholder; the app and every test provide this actor
    fetchPayment: fromPromise<Payment, { paymentId: string }>(() =>
      Promise.reject(new Error('fetchPayment not provided')),
    ),
    // Stryker restore all
    /** Waits before the next check of a pending payment. */
    pause: fromCallback<PaymentStatusEvent>(({ sendBack }) => {
      const timer = setTimeout(() => sendBack({ type: 'RECHECK' }), RECHECK_INTERVAL_MS);
      return () => clearTimeout(timer);
    }),
  },
  actions: {
    /** A paid payment changed the balance: the session reads the user again (the header updates). */
    refreshBalance: () => {},
    logFailure: (_, _params: { error: unknown }) => {},
    countCheck: assign(({ context }) => ({ checks: context.checks + 1 })),
    resetChecks: assign({ checks: 0 }),
    setPayment: assign((_, params: { payment: Payment }) => ({ payment: params.payment })),
    setMessage: assign((_, params: { message: PaymentStatusMessage }) => ({ message: params.message })),
  },
  guards: {
    noPaymentId: ({ context }) => context.paymentId === null,
    /** No payment to confirm, and the return address says this status. */
    unconfirmed: ({ context }, params: { status: string }) =>
      context.paymentId === null && context.hint === params.status,
    succeeded: (_, params: { payment: Payment }) => params.payment.status === 'succeeded',
    canceled: (_, params: { payment: Payment }) => params.payment.status === 'canceled',
    pending: (_, params: { payment: Payment }) => params.payment.status === 'pending',
    pendingWithChecksLeft: ({ context }, params: { payment: Payment }) =>
      params.payment.status === 'pending' && context.checks < context.maxChecks,
  },
}).createMachine({
  id: 'paymentStatus',
  context: ({ input }) => ({
    paymentId: input.paymentId?.trim() ? input.paymentId.trim() : null,
    hint: input.status ?? null,
    payment: null,
    message: null,
    checks: 0,
    maxChecks: input.maxChecks ?? DEFAULT_MAX_CHECKS,
  }),
  initial: 'loading',
  states: {
    loading: {
      // Without a payment id there is nothing to confirm: SPEC 4's rule for the status value
      // (success; failed; anything else is an unknown status).
      always: [
        { guard: { type: 'unconfirmed', params: { status: 'success' } }, target: 'success' },
        {
          guard: { type: 'unconfirmed', params: { status: 'failed' } },
          target: 'failed',
          actions: { type: 'setMessage', params: { message: paymentStatusMessages.failed } },
        },
        {
          guard: 'noPaymentId',
          target: 'failed',
          actions: { type: 'setMessage', params: { message: paymentStatusMessages.unknown } },
        },
      ],
      initial: 'checking',
      states: {
        checking: {
          entry: 'countCheck',
          invoke: {
            src: 'fetchPayment',
            input: ({ context }) => ({ paymentId: context.paymentId ?? '' }),
            onDone: [
              {
                guard: { type: 'succeeded', params: ({ event }) => ({ payment: event.output }) },
                target: '#paymentStatus.success',
                actions: [{ type: 'setPayment', params: ({ event }) => ({ payment: event.output }) }, 'refreshBalance'],
              },
              {
                guard: { type: 'canceled', params: ({ event }) => ({ payment: event.output }) },
                target: '#paymentStatus.failed',
                actions: [
                  { type: 'setPayment', params: ({ event }) => ({ payment: event.output }) },
                  { type: 'setMessage', params: { message: paymentStatusMessages.failed } },
                ],
              },
              {
                guard: { type: 'pendingWithChecksLeft', params: ({ event }) => ({ payment: event.output }) },
                target: 'waiting',
                actions: { type: 'setPayment', params: ({ event }) => ({ payment: event.output }) },
              },
              {
                guard: { type: 'pending', params: ({ event }) => ({ payment: event.output }) },
                target: '#paymentStatus.pending',
                actions: { type: 'setPayment', params: ({ event }) => ({ payment: event.output }) },
              },
              {
                target: '#paymentStatus.failed',
                actions: [
                  { type: 'setPayment', params: ({ event }) => ({ payment: event.output }) },
                  { type: 'setMessage', params: { message: paymentStatusMessages.unknown } },
                ],
              },
            ],
            onError: {
              target: '#paymentStatus.failed',
              actions: [
                { type: 'setMessage', params: { message: paymentStatusMessages.checkFailed } },
                { type: 'logFailure', params: ({ event }) => ({ error: event.error }) },
              ],
            },
          },
        },
        waiting: {
          invoke: { src: 'pause' },
          on: { RECHECK: 'checking' },
        },
      },
    },
    success: {},
    failed: {},
    /** The provider has not decided yet after every check. */
    pending: {
      on: { RETRY: { target: 'loading', actions: 'resetChecks' } },
    },
  },
});
