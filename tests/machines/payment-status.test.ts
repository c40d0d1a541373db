import { describe, expect, it } from 'vitest';
import { createActor, fromCallback, fromPromise, waitFor, type AnyMachineSnapshot } from 'xstate';
import type { Payment } from '../../src/domain/billing';
import {
  paymentStatusMachine,
  paymentStatusMessages,
  type PaymentStatusContext,
  type PaymentStatusInput,
} from '../../src/machines/payment-status';
import { describeModel, doneOf, errorOf, type Controls } from './harness';

const payment = (status: string): Payment => ({
  id: '42',
  // A status this page does not know is allowed through here on purpose.
  status: status as Payment['status'],
  packageType: 'tokens',
  tokensAmount: 100,
  amount: '70.00',
  currency: 'RUB',
  createdAt: '2026-11-23T10:00:00.000Z',
  cancellationReason: status === 'canceled' ? 'insufficient_funds' : null,
  credited: status === 'succeeded',
});

let refreshed = 0;
const ctx = (s: AnyMachineSnapshot) => s.context as PaymentStatusContext;

describeModel('payment-status', {
  machine: paymentStatusMachine,
  input: { paymentId: '42', status: 'success', maxChecks: 2 } satisfies PaymentStatusInput,
  events: (snapshot) => [
    // Only the running pause can say it is over.
    ...(snapshot.matches({ loading: 'waiting' }) ? [{ type: 'RECHECK' }] : []),
    { type: 'RETRY' },
    ...doneOf(snapshot, 'fetchPayment', payment('succeeded')),
    ...doneOf(snapshot, 'fetchPayment', payment('canceled')),
    ...doneOf(snapshot, 'fetchPayment', payment('pending')),
    ...doneOf(snapshot, 'fetchPayment', payment('waiting_for_capture')),
    ...errorOf(snapshot, 'fetchPayment', new Error('Network error occurred')),
  ],
  emittedBy: { RECHECK: 'pause' },
  sut: (controls: Controls) =>
    paymentStatusMachine.provide({
      actors: { fetchPayment: controls.promise('fetchPayment'), pause: controls.callback('pause') } as never,
      actions: {
        refreshBalance: () => {
          refreshed += 1;
        },
        logFailure: () => {},
      },
    }),
  check: (snapshot, controls, event) => {
    const context = ctx(snapshot);
    if (snapshot.matches({ loading: 'checking' })) {
      // The page asks the server about the payment named in the address.
      expect(controls.inputs.filter((i) => i.src === 'fetchPayment').at(-1)?.input).toEqual({ paymentId: '42' });
      expect(context.checks).toBeLessThanOrEqual(context.maxChecks);
    }
    if (snapshot.matches('success')) {
      expect(context.payment?.status).toBe('succeeded');
      expect(context.message).toBeNull();
      if (event.type.startsWith('xstate.done.actor')) expect(refreshed).toBeGreaterThan(0);
    }
    if (snapshot.matches('failed') && event.type.startsWith('xstate.error.actor')) {
      expect(context.message).toBe(paymentStatusMessages.checkFailed);
    }
    if (snapshot.matches('failed') && event.type.startsWith('xstate.done.actor')) {
      const status = (event as unknown as { output: Payment }).output.status;
      expect(context.message).toBe(
        status === 'canceled' ? paymentStatusMessages.failed : paymentStatusMessages.unknown,
      );
    }
    if (snapshot.matches('pending')) expect(context.checks).toBe(context.maxChecks);
  },
});

describe('payment status page', () => {
  const start = (input: PaymentStatusInput, fetch: (id: string) => Promise<Payment>) => {
    const asked: string[] = [];
    const actor = createActor(
      paymentStatusMachine.provide({
        actors: {
          fetchPayment: fromPromise<Payment, { paymentId: string }>(({ input: i }) => {
            asked.push(i.paymentId);
            return fetch(i.paymentId);
          }),
          pause: fromCallback(({ sendBack }) => {
            const timer = setTimeout(() => sendBack({ type: 'RECHECK' }), 1);
            return () => clearTimeout(timer);
          }),
        },
      }),
      { input },
    ).start();
    return { actor, asked };
  };

  it('without a payment id there is nothing to confirm: failed, unknown status', () => {
    const { actor, asked } = start({ status: 'success' }, () => Promise.resolve(payment('succeeded')));
    expect(actor.getSnapshot().value).toBe('failed');
    expect(actor.getSnapshot().context.message).toBe('Unknown payment status.');
    expect(asked).toEqual([]);
  });

  it('trusts the server over the address: status=success but the payment was declined', async () => {
    const { actor } = start({ paymentId: '7', status: 'success' }, () => Promise.resolve(payment('canceled')));
    await waitFor(actor, (s) => s.matches('failed'));
    expect(actor.getSnapshot().context.message).toBe('Payment failed. Please try again.');
  });

  it('keeps checking a pending payment until it is decided', async () => {
    const answers = ['pending', 'pending', 'succeeded'];
    const { actor, asked } = start({ paymentId: '9', status: 'pending' }, () =>
      Promise.resolve(payment(answers.shift() ?? 'succeeded')),
    );
    await waitFor(actor, (s) => s.matches('success'));
    expect(asked).toEqual(['9', '9', '9']);
  });

  it('stops after the last check, and checks again on request', async () => {
    const { actor, asked } = start({ paymentId: '9', maxChecks: 3 }, () => Promise.resolve(payment('pending')));
    await waitFor(actor, (s) => s.matches('pending'));
    expect(asked).toHaveLength(3);
    actor.send({ type: 'RETRY' });
    await waitFor(actor, (s) => s.matches('pending') && asked.length === 6);
  });
});
