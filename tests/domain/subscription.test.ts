import { describe, expect, it } from 'vitest';
import type { Subscription } from '../../src/domain/billing';
import {
  canCancelSubscription,
  FALLBACK_SUBSCRIPTION,
  summarizeSubscription,
  subscriptionTypeOf,
  withTokenAmount,
  type SubscriptionRecord,
  type SubscriptionSummary,
} from '../../src/domain/subscription';

/** SPEC section 4, "Subscription loading". */

const record = (overrides: Partial<SubscriptionRecord> = {}): SubscriptionRecord => ({
  plan: { name: 'pro', tokensPerMonth: 1000, trialDays: 0 },
  status: 'active',
  tokensUsedThisPeriod: 0,
  createdAt: '2025-03-01T10:00:00.000Z',
  ...overrides,
});

describe('subscription type from the plan name', () => {
  it('gives premium for premium, pro for pro and starter for anything else', () => {
    expect(subscriptionTypeOf('premium')).toBe('premium');
    expect(subscriptionTypeOf('pro')).toBe('pro');
    expect(subscriptionTypeOf('starter')).toBe('starter');
    expect(subscriptionTypeOf('payg')).toBe('starter');
    expect(subscriptionTypeOf('enterprise')).toBe('starter');
    expect(subscriptionTypeOf('')).toBe('starter');
  });

  it('reads the plan name whatever its case', () => {
    expect(subscriptionTypeOf('Premium')).toBe('premium');
    expect(subscriptionTypeOf('PRO')).toBe('pro');
  });
});

describe('summarizeSubscription with a subscription', () => {
  it('takes the plan, the monthly tokens and the tokens used this period', () => {
    const summary = summarizeSubscription(
      record({ plan: { name: 'premium', tokensPerMonth: 2500, trialDays: 0 }, tokensUsedThisPeriod: 300 }),
      0,
    );
    expect(summary).toEqual<SubscriptionSummary>({
      type: 'premium',
      status: 'active',
      tokensTotal: 2500,
      tokensUsed: 300,
      trialEndsAt: null,
    });
  });

  it('lowercases the status', () => {
    expect(summarizeSubscription(record({ status: 'PAST_DUE' }), 0).status).toBe('past_due');
    expect(summarizeSubscription(record({ status: 'Trial' }), 0).status).toBe('trial');
  });

  it('defaults the status to active', () => {
    expect(summarizeSubscription(record({ status: '' }), 0).status).toBe('active');
  });

  it('ends the trial trialDays days after the subscription was created', () => {
    const summary = summarizeSubscription(
      record({ plan: { name: 'pro', tokensPerMonth: 1000, trialDays: 7 }, status: 'trial' }),
      0,
    );
    expect(summary.trialEndsAt).toBe('2025-03-08T10:00:00.000Z');
  });

  it('has no trial end when trialDays is 0', () => {
    expect(summarizeSubscription(record(), 0).trialEndsAt).toBeNull();
  });

  it('has no trial end for a cancelled subscription', () => {
    const plan = { name: 'pro', tokensPerMonth: 1000, trialDays: 7 };
    expect(summarizeSubscription(record({ plan, status: 'cancelled' }), 0).trialEndsAt).toBeNull();
    expect(summarizeSubscription(record({ plan, status: 'Cancelled' }), 0).trialEndsAt).toBeNull();
  });

  it('does not depend on the balance', () => {
    expect(summarizeSubscription(record(), 0)).toEqual(summarizeSubscription(record(), 900));
  });
});

describe('summarizeSubscription without a subscription', () => {
  it('is payg when the user holds tokens', () => {
    expect(summarizeSubscription(null, 1)).toEqual<SubscriptionSummary>({
      type: 'payg',
      status: 'active',
      tokensTotal: 0,
      tokensUsed: 0,
      trialEndsAt: null,
    });
  });

  it('is starter when the user holds none', () => {
    expect(summarizeSubscription(null, 0)).toEqual<SubscriptionSummary>({
      type: 'starter',
      status: 'active',
      tokensTotal: 0,
      tokensUsed: 0,
      trialEndsAt: null,
    });
  });
});

describe('a failed subscription load', () => {
  it('falls back to starter, active and zeros', () => {
    expect(FALLBACK_SUBSCRIPTION).toEqual<SubscriptionSummary>({
      type: 'starter',
      status: 'active',
      tokensTotal: 0,
      tokensUsed: 0,
      trialEndsAt: null,
    });
  });
});

describe('withTokenAmount', () => {
  const summary = (type: SubscriptionSummary['type']): SubscriptionSummary => ({
    type,
    status: 'active',
    tokensTotal: 1000,
    tokensUsed: 0,
    trialEndsAt: null,
  });

  it('sets used tokens to total minus the new amount for pro and premium', () => {
    expect(withTokenAmount(summary('pro'), 400).tokensUsed).toBe(600);
    expect(withTokenAmount(summary('premium'), 1000).tokensUsed).toBe(0);
    expect(withTokenAmount(summary('premium'), 250).tokensUsed).toBe(750);
  });

  it('never goes below 0', () => {
    expect(withTokenAmount(summary('pro'), 1500).tokensUsed).toBe(0);
  });

  it('leaves starter and payg as they were', () => {
    expect(withTokenAmount(summary('starter'), 400)).toEqual(summary('starter'));
    expect(withTokenAmount(summary('payg'), 400)).toEqual(summary('payg'));
  });
});

describe('canCancelSubscription (POST /api/payments/cancel-subscription)', () => {
  const subscription = (overrides: Partial<Subscription> = {}): Subscription => ({
    plan: { name: 'pro', tokensPerMonth: 1000, trialDays: 7 },
    status: 'active',
    tokensUsedThisPeriod: 0,
    nextBillingDate: '2025-04-01T10:00:00.000Z',
    canceledAt: null,
    createdAt: '2025-03-01T10:00:00.000Z',
    trialEndsAt: null,
    cancelAtPeriodEnd: false,
    ...overrides,
  });

  it('offers cancelling a subscription that still renews, on trial or past due too', () => {
    expect(canCancelSubscription(subscription())).toBe(true);
    expect(canCancelSubscription(subscription({ status: 'trial' }))).toBe(true);
    expect(canCancelSubscription(subscription({ status: 'past_due' }))).toBe(true);
  });

  it('does not offer it without a subscription or once it is cancelled', () => {
    expect(canCancelSubscription(null)).toBe(false);
    expect(canCancelSubscription(subscription({ status: 'cancelled' }))).toBe(false);
    expect(canCancelSubscription(subscription({ cancelAtPeriodEnd: true }))).toBe(false);
    expect(canCancelSubscription(subscription({ canceledAt: '2025-03-10T10:00:00.000Z' }))).toBe(false);
  });
});
