import { describe, expect, it } from 'vitest';
import { createActor, fromPromise, waitFor, type AnyMachineSnapshot } from 'xstate';
import type { CreatePaymentResponse } from '../../src/domain/billing';
import {
  amountProblem,
  CREATE_PAYMENT_FAILED,
  purchaseMachine,
  type Order,
  type PurchaseContext,
} from '../../src/machines/purchase';
import { describeModel, doneOf, errorOf, type Controls } from './harness';

const created: CreatePaymentResponse = {
  paymentId: '9f1c2d3e-0000-4000-8000-000000000042',
  confirmationUrl: 'http://localhost/sandbox/checkout/42',
  amount: '70.00',
  currency: 'RUB',
};
const redirects: string[] = [];
const ctx = (s: AnyMachineSnapshot) => s.context as PurchaseContext;

describeModel('purchase', {
  machine: purchaseMachine,
  events: (snapshot) => [
    { type: 'OPEN' },
    { type: 'CLOSE' },
    { type: 'AMOUNT.CHANGE', value: '250' },
    { type: 'AMOUNT.CHANGE', value: '49' },
    { type: 'SUBMIT' },
    { type: 'SUBSCRIBE', plan: 'pro' },
    ...doneOf(snapshot, 'createPayment', created),
    ...errorOf(snapshot, 'createPayment', new Error('Internal server error')),
  ],
  sut: (controls: Controls) =>
    purchaseMachine.provide({
      actors: { createPayment: controls.promise('createPayment') } as never,
      actions: {
        redirect: (_, params) => {
          redirects.push(params.url);
        },
        logFailure: () => {},
      },
    }),
  check: (snapshot, controls, event) => {
    const context = ctx(snapshot);
    if (snapshot.matches('creating')) {
      // The order sent is the one on screen: the typed amount, or the chosen plan.
      const sent = controls.inputs.filter((i) => i.src === 'createPayment').at(-1)?.input as { order: Order };
      expect(sent.order).toEqual(context.order);
      if (sent.order.kind === 'tokens') expect(String(sent.order.tokensAmount)).toBe(context.amount);
      expect(context.failure).toBeNull();
    }
    if (snapshot.matches('redirecting') && event.type.startsWith('xstate.done.actor')) {
      expect(redirects.at(-1)).toBe(created.confirmationUrl);
    }
    if (snapshot.matches('failed')) expect(context.failure).toBe(CREATE_PAYMENT_FAILED);
    if (event.type === 'SUBMIT' && snapshot.matches('editing')) {
      expect(context.problem).toBe('Please check your input: 50 - 10,000 tokens');
    }
  },
});

describe('purchase rules', () => {
  it('accepts whole numbers from 50 to 10000 only (SPEC section 5)', () => {
    for (const good of ['50', '100', ' 2500 ', '10000']) expect(amountProblem(good)).toBeNull();
    for (const bad of ['', ' ', '49', '10001', '100.5', 'abc', '-100', '1e3x']) {
      expect(amountProblem(bad)).toBe('Please check your input: 50 - 10,000 tokens');
    }
  });

  it('buys the typed amount and sends the browser to the confirmation page', async () => {
    const orders: Order[] = [];
    const urls: string[] = [];
    const actor = createActor(
      purchaseMachine.provide({
        actors: {
          createPayment: fromPromise<CreatePaymentResponse, { order: Order }>(async ({ input }) => {
            orders.push(input.order);
            return created;
          }),
        },
        actions: { redirect: (_, params) => void urls.push(params.url) },
      }),
    ).start();
    actor.send({ type: 'OPEN' });
    // SPEC section 9: 100 tokens unless the user picks another amount.
    expect(actor.getSnapshot().context.amount).toBe('100');
    actor.send({ type: 'AMOUNT.CHANGE', value: '500' });
    actor.send({ type: 'SUBMIT' });
    await waitFor(actor, (s) => s.matches('redirecting'));
    expect(orders).toEqual([{ kind: 'tokens', tokensAmount: 500 }]);
    expect(urls).toEqual([created.confirmationUrl]);
  });
});
