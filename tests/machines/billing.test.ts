import { describe, expect, it } from 'vitest';
import type { AnyMachineSnapshot } from 'xstate';
import { PLAN_LIST, type LedgerPage, type PaymentHistoryItem, type Subscription } from '../../src/domain/billing';
import { FALLBACK_SUBSCRIPTION, summarizeSubscription, withTokenAmount } from '../../src/domain/subscription';
import { billingMachine, type BillingContext, type BillingOverview } from '../../src/machines/billing';
import { describeModel, doneOf, errorOf, type Controls } from './harness';

const plans = [...PLAN_LIST];
const history: PaymentHistoryItem[] = [
  {
    id: '1',
    createdAt: '2026-11-23T10:00:00.000Z',
    packageType: 'tokens',
    description: 'Purchase of 100 tokens',
    tokensAmount: 100,
    amount: '70.00',
    currency: 'RUB',
    status: 'succeeded',
  },
];
const subscription = (status = 'trial', canceledAt: string | null = null): Subscription => ({
  // Statuses outside the list are allowed through here on purpose (SPEC lowercases them).
  status: status as Subscription['status'],
  plan: { name: 'pro', tokensPerMonth: 1000, trialDays: 7 },
  tokensUsedThisPeriod: 0,
  nextBillingDate: '2026-11-30T10:00:00.000Z',
  canceledAt,
  createdAt: '2026-11-23T10:00:00.000Z',
  trialEndsAt: '2026-11-30T10:00:00.000Z',
  cancelAtPeriodEnd: canceledAt !== null,
});
const ledger = (page: number): LedgerPage => ({
  entries: [
    {
      id: page,
      createdAt: '2026-11-23T10:00:00.000Z',
      delta: 50,
      balanceAfter: 50,
      kind: 'signup',
      params: {},
      description: 'Signup bonus',
    },
  ],
  pagination: { currentPage: page, totalPages: 2, total: 11, hasNext: page < 2, hasPrev: page > 1 },
});
const overview = (read: BillingOverview['subscription']): BillingOverview => ({ plans, history, subscription: read });

const logged: string[] = [];
let refreshed = 0;
let notified = 0;
const ctx = (s: AnyMachineSnapshot) => s.context as BillingContext;
const features = (c: BillingContext) => ({
  page: c.ledgerPage,
  shown: c.ledger?.pagination.currentPage ?? null,
  subscription: c.subscription?.canceledAt ?? c.subscription?.status ?? null,
  subscriptionFailed: c.subscriptionFailed,
  error: c.error,
  ledgerError: c.ledgerError,
  cancelError: c.cancelError,
});

describeModel('billing', {
  machine: billingMachine,
  // Ledger paging while the subscription rests, cancelling while the ledger rests on page
  // 1: the two regions are independent, and every transition is still taken.
  events: (snapshot) => {
    const c = ctx(snapshot);
    const subscriptionIdle = snapshot.matches({ ready: { subscription: 'idle' } });
    const ledgerResting = snapshot.matches({ ready: { ledger: 'ready' } }) && c.ledgerPage === 1;
    return [
      { type: 'RETRY' },
      ...(subscriptionIdle
        ? [{ type: 'LEDGER.PAGE', page: 2 }, { type: 'LEDGER.PAGE', page: 1 }, { type: 'LEDGER.RETRY' }]
        : []),
      ...(ledgerResting ? [{ type: 'CANCEL.REQUEST' }, { type: 'CANCEL.CONFIRM' }, { type: 'CANCEL.DISMISS' }] : []),
      ...doneOf(snapshot, 'loadBilling', overview({ ok: true, subscription: subscription() })),
      ...doneOf(snapshot, 'loadBilling', overview({ ok: false, error: new Error('offline') })),
      ...errorOf(snapshot, 'loadBilling', new Error('Internal server error')),
      ...doneOf(snapshot, 'loadLedger', ledger(ctx(snapshot).ledgerPage)),
      ...errorOf(snapshot, 'loadLedger', new Error('Network error occurred')),
      ...doneOf(snapshot, 'cancelSubscription', subscription('trial', '2026-11-24T10:00:00.000Z')),
      ...errorOf(snapshot, 'cancelSubscription', new Error('Internal server error')),
    ];
  },
  // The ledger's page content follows its page number; keep the traversal small.
  // What the screen depends on; the SUT is compared on the same features.
  serializeState: (s) => JSON.stringify([s.value, features(ctx(s))]),
  projectContext: (c) => features(c as BillingContext),
  sut: (controls: Controls) =>
    billingMachine.provide({
      actors: {
        loadBilling: controls.promise('loadBilling'),
        loadLedger: controls.promise('loadLedger'),
        cancelSubscription: controls.promise('cancelSubscription'),
      } as never,
      actions: {
        logFailure: (_, params) => {
          logged.push(params.what);
        },
        refreshUser: () => {
          refreshed += 1;
        },
        notifyCancelled: () => {
          notified += 1;
        },
      },
    }),
  check: (snapshot, controls, event) => {
    const context = ctx(snapshot);
    if (snapshot.matches({ ready: { ledger: 'loading' } })) {
      const asked = controls.inputs.filter((i) => i.src === 'loadLedger').at(-1)?.input;
      expect(asked).toEqual({ page: context.ledgerPage, limit: 10 });
    }
    if (snapshot.matches('error')) expect(context.error).toBe('Internal server error');
    if (snapshot.matches('ready')) {
      expect(context.plans).toEqual(plans);
      expect(context.history).toEqual(history);
      // SPEC: a failed subscription read is only logged; the screen falls back to starter.
      if (context.subscriptionFailed) {
        expect(context.subscription).toBeNull();
        expect(logged).toContain('subscription loading');
      }
    }
    if (snapshot.matches({ ready: { subscription: 'confirming' } })) {
      expect(context.subscription?.canceledAt).toBeNull();
    }
    if (event.type.includes('cancelSubscription') || event.type.includes('subscription.cancelling')) {
      if (event.type.startsWith('xstate.done.actor')) {
        expect(context.subscription?.canceledAt).not.toBeNull();
        expect(refreshed).toBeGreaterThan(0);
        expect(notified).toBeGreaterThan(0);
      }
    }
    if (snapshot.matches({ ready: { subscription: 'failed' } }))
      expect(context.cancelError).toBe('Internal server error');
  },
});

describe('SPEC section 4 "Subscription loading"', () => {
  it('reads the plan, the lowercased status, the totals and the trial end', () => {
    expect(summarizeSubscription({ ...subscription('TRIAL'), tokensUsedThisPeriod: 120 }, 30)).toEqual({
      type: 'pro',
      status: 'trial',
      tokensTotal: 1000,
      tokensUsed: 120,
      trialEndsAt: '2026-11-30T10:00:00.000Z',
    });
    const premium = { ...subscription('active'), plan: { name: 'Premium', tokensPerMonth: 2500, trialDays: 0 } };
    expect(summarizeSubscription(premium, 0)).toMatchObject({ type: 'premium', tokensTotal: 2500, trialEndsAt: null });
    const other = { ...subscription(''), plan: { name: 'enterprise', tokensPerMonth: 5, trialDays: 3 } };
    expect(summarizeSubscription(other, 0)).toMatchObject({ type: 'starter', status: 'active' });
    // No trial end once cancelled.
    expect(summarizeSubscription(subscription('cancelled'), 0).trialEndsAt).toBeNull();
  });

  it('without a subscription: payg with tokens, else starter; on error starter', () => {
    expect(summarizeSubscription(null, 10)).toEqual({
      type: 'payg',
      status: 'active',
      tokensTotal: 0,
      tokensUsed: 0,
      trialEndsAt: null,
    });
    expect(summarizeSubscription(null, 0).type).toBe('starter');
    expect(FALLBACK_SUBSCRIPTION).toEqual({
      type: 'starter',
      status: 'active',
      tokensTotal: 0,
      tokensUsed: 0,
      trialEndsAt: null,
    });
  });

  it('a new token amount for pro or premium: used = total - amount, never below 0', () => {
    const pro = summarizeSubscription(subscription('active'), 0);
    expect(withTokenAmount(pro, 300).tokensUsed).toBe(700);
    expect(withTokenAmount(pro, 5000).tokensUsed).toBe(0);
    const payg = summarizeSubscription(null, 10);
    expect(withTokenAmount(payg, 300)).toEqual(payg);
  });
});
