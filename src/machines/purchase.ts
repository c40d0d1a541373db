import { assign, fromPromise, setup } from 'xstate';
import {
  billingErrorMessages,
  DEFAULT_TOKENS,
  parseTokensInput,
  TOKENS_AMOUNT_MESSAGE,
  type CreatePaymentResponse,
  type SubscriptionPlanId,
} from '../domain/billing';

/** What is being bought: a number of tokens, or the first period of a plan. */
export type Order = { kind: 'tokens'; tokensAmount: number } | { kind: 'subscription'; plan: SubscriptionPlanId };

export type PurchaseEvent =
  | { type: 'OPEN' }
  | { type: 'CLOSE' }
  /** The amount field as typed, or a preset's value. */
  | { type: 'AMOUNT.CHANGE'; value: string }
  | { type: 'SUBMIT' }
  | { type: 'SUBSCRIBE'; plan: SubscriptionPlanId };

export interface PurchaseContext {
  /** The amount field's text: the price follows it as the user types. */
  amount: string;
  order: Order | null;
  /** SPEC section 5's validation message: as soon as the amount typed cannot be bought. */
  problem: string | null;
  /** SPEC section 8's alert, after the payment could not be created. */
  failure: string | null;
}

export const CREATE_PAYMENT_FAILED = billingErrorMessages.createPayment;

/** SPEC section 5 "Token purchase": a whole number 50..10000, else its message. */
export function amountProblem(text: string): string | null {
  return parseTokensInput(text) === null ? TOKENS_AMOUNT_MESSAGE : null;
}

/**
 * SPEC section 4 "Purchase": the modal opens, creating the payment disables its buttons,
 * then the browser is sent to the provider's confirmation page; on failure the work stops
 * and an alert appears. Subscribing to a plan runs the same flow without the modal.
 */
export const purchaseMachine = setup({
  // Stryker disable all: type declarations only, erased when the code runs
  types: {
    context: {} as PurchaseContext,
    events: {} as PurchaseEvent,
  },
  // Stryker restore all
  // Stryker disable all: placeholders; the app and every test provide these actors
  actors: {
    createPayment: fromPromise<CreatePaymentResponse, { order: Order }>(() =>
      Promise.reject(new Error('createPayment not provided')),
    ),
  },
  // Stryker restore all
  actions: {
    /** Sends the browser to the provider's page; provided by the app. */
    redirect: (_, _params: { url: string }) => {},
    logFailure: (_, _params: { error: unknown }) => {},
    reset: assign({ amount: String(DEFAULT_TOKENS), order: null, problem: null, failure: null }),
    // The message shows at once, so no price is quoted for an amount nobody can buy.
    setAmount: assign((_, params: { value: string }) => ({
      amount: params.value,
      problem: amountProblem(params.value),
      failure: null,
    })),
    showProblem: assign(({ context }) => ({ problem: amountProblem(context.amount) })),
    orderTokens: assign(({ context }) => ({
      order: { kind: 'tokens', tokensAmount: parseTokensInput(context.amount) ?? DEFAULT_TOKENS },
      problem: null,
      failure: null,
    })),
    orderPlan: assign((_, params: { plan: SubscriptionPlanId }) => ({
      order: { kind: 'subscription', plan: params.plan },
      problem: null,
      failure: null,
    })),
    fail: assign({ failure: CREATE_PAYMENT_FAILED }),
    clearFailure: assign({ failure: null }),
  },
  guards: {
    amountValid: ({ context }) => amountProblem(context.amount) === null,
  },
}).createMachine({
  id: 'purchase',
  context: { amount: String(DEFAULT_TOKENS), order: null, problem: null, failure: null },
  initial: 'closed',
  states: {
    closed: {
      on: {
        OPEN: { target: 'editing', actions: 'reset' },
        SUBSCRIBE: {
          target: 'creating',
          actions: ['reset', { type: 'orderPlan', params: ({ event }) => ({ plan: event.plan }) }],
        },
      },
    },
    editing: {
      on: {
        'AMOUNT.CHANGE': { actions: { type: 'setAmount', params: ({ event }) => ({ value: event.value }) } },
        SUBMIT: [{ guard: 'amountValid', target: 'creating', actions: 'orderTokens' }, { actions: 'showProblem' }],
        CLOSE: { target: 'closed', actions: 'reset' },
      },
    },
    // The buttons are disabled: nothing the user does counts until the provider answers.
    creating: {
      invoke: {
        src: 'createPayment',
        input: ({ context }) => ({ order: context.order as Order }),
        onDone: {
          target: 'redirecting',
          actions: { type: 'redirect', params: ({ event }) => ({ url: event.output.confirmationUrl }) },
        },
        onError: {
          target: 'failed',
          actions: ['fail', { type: 'logFailure', params: ({ event }) => ({ error: event.error }) }],
        },
      },
    },
    // The browser is leaving for the checkout page.
    redirecting: {},
    failed: {
      on: {
        'AMOUNT.CHANGE': {
          target: 'editing',
          actions: { type: 'setAmount', params: ({ event }) => ({ value: event.value }) },
        },
        // Try again: the same order.
        SUBMIT: { target: 'creating', actions: 'clearFailure' },
        CLOSE: { target: 'closed', actions: 'reset' },
        SUBSCRIBE: {
          target: 'creating',
          actions: ['reset', { type: 'orderPlan', params: ({ event }) => ({ plan: event.plan }) }],
        },
      },
    },
  },
});
