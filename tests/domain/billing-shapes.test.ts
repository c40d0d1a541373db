import { describe, expect, it } from 'vitest';
import {
  CURRENCY,
  createPaymentReplySchema,
  paymentHistorySchema,
  subscriptionResponseSchema,
} from '../../src/domain/billing';

/** SPEC sections 3 and 7: what the billing calls answer, as the screen reads them. */

const pagination = { currentPage: 1, totalPages: 1, total: 1, hasNext: false, hasPrev: false };

const historyItem = {
  id: 'pay-1',
  createdAt: '2025-03-01T10:00:00.000Z',
  packageType: 'tokens',
  description: '100 tokens',
  tokensAmount: 100,
  amount: '70.00',
  currency: 'RUB',
  status: 'succeeded',
};

describe('payment history (SPEC section 3, "Payment history item" and "Pagination")', () => {
  it('keeps every field of an item and the pagination', () => {
    const history = { payments: [historyItem], pagination };
    expect(paymentHistorySchema.parse(history)).toEqual(history);
  });

  it.each(['id', 'createdAt', 'packageType', 'amount', 'currency', 'status'])('needs %s', (field) => {
    const item: Record<string, unknown> = { ...historyItem };
    delete item[field];
    expect(paymentHistorySchema.safeParse({ payments: [item], pagination }).success).toBe(false);
  });

  it.each(['currentPage', 'totalPages', 'total', 'hasNext', 'hasPrev'])('needs pagination.%s', (field) => {
    const page: Record<string, unknown> = { ...pagination };
    delete page[field];
    expect(paymentHistorySchema.safeParse({ payments: [], pagination: page }).success).toBe(false);
  });

  it('is in roubles', () => {
    expect(CURRENCY).toBe('RUB');
    const dollars = { ...historyItem, currency: 'USD' };
    expect(paymentHistorySchema.safeParse({ payments: [dollars], pagination }).success).toBe(false);
  });

  it('writes amounts with two decimals', () => {
    for (const amount of ['70', '70.0', '70.000', 'a70.00', '70.00a', '-70.00']) {
      const item = { ...historyItem, amount };
      expect(paymentHistorySchema.safeParse({ payments: [item], pagination }).success, amount).toBe(false);
    }
  });
});

describe('the subscription (SPEC section 3, "Subscription response")', () => {
  const subscription = {
    plan: { name: 'pro', tokensPerMonth: 1000, trialDays: 7 },
    status: 'trial',
    tokensUsedThisPeriod: 120,
    nextBillingDate: '2025-04-01T10:00:00.000Z',
    canceledAt: null,
    createdAt: '2025-03-01T10:00:00.000Z',
    trialEndsAt: '2025-03-08T10:00:00.000Z',
    cancelAtPeriodEnd: false,
  };

  it('keeps the plan, status, tokens used this period and the dates', () => {
    expect(subscriptionResponseSchema.parse(subscription)).toEqual(subscription);
  });

  it('is null when the user has none', () => {
    expect(subscriptionResponseSchema.parse(null)).toBeNull();
  });

  it.each(['name', 'tokensPerMonth', 'trialDays'])('needs plan.%s', (field) => {
    const plan: Record<string, unknown> = { ...subscription.plan };
    delete plan[field];
    expect(subscriptionResponseSchema.safeParse({ ...subscription, plan }).success).toBe(false);
  });

  it('reads the SPEC statuses in any spelling (SPEC 4 lowercases the status as it loads it)', () => {
    for (const status of ['active', 'cancelled', 'past_due', 'trial', 'ACTIVE', 'Trial']) {
      expect(subscriptionResponseSchema.safeParse({ ...subscription, status }).success, status).toBe(true);
    }
    expect(subscriptionResponseSchema.safeParse({ ...subscription, status: 42 }).success).toBe(false);
  });
});

describe('a token payment (SPEC section 7, create-token-payment)', () => {
  it('answers with the confirmation address the browser is sent to', () => {
    const reply = {
      success: true,
      data: { paymentId: 'pay-1', confirmationUrl: 'https://pay.example/confirm', amount: '70.00', currency: 'RUB' },
      confirmationUrl: 'https://pay.example/confirm',
    };
    expect(createPaymentReplySchema.parse(reply)).toEqual(reply);
    expect(createPaymentReplySchema.safeParse({ ...reply, success: false }).success).toBe(false);
    expect(createPaymentReplySchema.safeParse({ ...reply, confirmationUrl: undefined }).success).toBe(false);
  });
});
