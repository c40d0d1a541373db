import { describe, expect, it } from 'vitest';
import {
  createSubscriptionPaymentBodySchema,
  createTokenPaymentBodySchema,
  formatRub,
  isSubscriptionPlanId,
  ledgerEntrySchema,
  ledgerPageSchema,
  parseRub,
  paymentHistoryItemSchema,
  paymentSchema,
  PLAN_LIST,
  PLANS,
  plansResponseSchema,
  TOKENS_AMOUNT_MESSAGE,
} from '../../src/domain/billing';
import { billingEn } from '../../src/i18n/locales/billing.en';
import { billingRu } from '../../src/i18n/locales/billing.ru';

/** SPEC section 9, "Plans (information)". */
describe('the four plans', () => {
  it('are Starter, Pro, Premium and Pay-as-you-go, in that order', () => {
    expect(PLAN_LIST.map((plan) => [plan.id, plan.name])).toEqual([
      ['starter', 'Starter'],
      ['pro', 'Pro'],
      ['premium', 'Premium'],
      ['payg', 'Pay-as-you-go'],
    ]);
    for (const plan of PLAN_LIST) expect(PLANS[plan.id]).toBe(plan);
  });

  it('roll unused tokens over on Premium only', () => {
    expect(PLAN_LIST.filter((plan) => plan.rollover).map((plan) => plan.id)).toEqual(['premium']);
  });

  it("list features that say SPEC's plan text, each worded in Russian and English", () => {
    const features = Object.fromEntries(PLAN_LIST.map((plan) => [plan.id, plan.features ?? []]));
    expect(features.starter).toContain('signupTokens');
    expect(features.pro).toEqual(expect.arrayContaining(['monthlyTokens', 'trial']));
    expect(features.premium).toEqual(expect.arrayContaining(['monthlyTokens', 'rollover']));
    expect(features.payg).toContain('perToken');
    expect(features.pro).not.toContain('rollover');
    for (const [id, keys] of Object.entries(features)) {
      expect(keys.length, id).toBeGreaterThan(0);
      expect(new Set(keys).size, id).toBe(keys.length);
      for (const key of keys) {
        for (const catalogue of [billingRu.plans.features, billingEn.plans.features] as Record<string, string>[]) {
          expect(catalogue[key] ?? catalogue[`${key}_other`], `${id}: ${key}`).toBeTruthy();
        }
      }
    }
  });

  it('travel as GET /api/payments/plans sends them', () => {
    expect(plansResponseSchema.parse({ plans: PLAN_LIST })).toEqual({ plans: PLAN_LIST });
  });

  it('are subscribed to for Pro and Premium only', () => {
    expect(isSubscriptionPlanId('pro')).toBe(true);
    expect(isSubscriptionPlanId('premium')).toBe(true);
    for (const value of ['starter', 'payg', '', 'PRO', undefined, null, 42, ['pro']]) {
      expect(isSubscriptionPlanId(value)).toBe(false);
    }
  });
});

describe('payment bodies (SPEC section 7)', () => {
  it('words a bad token amount as SPEC 5 does', () => {
    expect(TOKENS_AMOUNT_MESSAGE).toBe('Please check your input: 50 - 10,000 tokens');
  });

  it('take a return address up to 2048 characters', () => {
    const returnUrl = `/payment-status?x=${'a'.repeat(2048 - '/payment-status?x='.length)}`;
    expect(createTokenPaymentBodySchema.parse({ tokensAmount: 100, returnUrl })).toEqual({
      tokensAmount: 100,
      returnUrl,
    });
    expect(createTokenPaymentBodySchema.safeParse({ tokensAmount: 100, returnUrl: `${returnUrl}a` }).success).toBe(
      false,
    );
    const notText = createTokenPaymentBodySchema.safeParse({ tokensAmount: 100, returnUrl: 42 });
    expect(notText.error?.issues[0]?.message).toMatch(/returnUrl/);
  });

  it('subscribe to pro or premium, and say so for another plan', () => {
    expect(createSubscriptionPaymentBodySchema.parse({ plan: 'premium', returnUrl: '/billing' })).toEqual({
      plan: 'premium',
      returnUrl: '/billing',
    });
    for (const plan of ['starter', 'payg', undefined, 7]) {
      const result = createSubscriptionPaymentBodySchema.safeParse({ plan });
      expect(result.error?.issues[0]?.message).toMatch(/pro or premium/);
    }
  });
});

describe('roubles', () => {
  it('write zero kopecks and refuse a negative amount', () => {
    expect(formatRub(0)).toBe('0.00');
    expect(formatRub(100)).toBe('1.00');
    expect(() => formatRub(-1)).toThrow();
    expect(() => formatRub(-100)).toThrow();
  });

  it('read whole roubles back', () => {
    expect(parseRub('70')).toBe(7000);
    expect(parseRub('0')).toBe(0);
  });
});

describe('payment and ledger answers', () => {
  it('keep every field of a payment', () => {
    const payment = {
      id: 'pay_1',
      status: 'canceled',
      packageType: 'tokens',
      tokensAmount: 100,
      amount: '70.00',
      currency: 'RUB',
      createdAt: '2026-01-02T10:00:00.000Z',
      cancellationReason: 'insufficient_funds',
      credited: false,
    };
    expect(paymentSchema.parse(payment)).toEqual(payment);
    // A status the provider adds later is kept, for the page to call it unknown (SPEC 8).
    expect(paymentSchema.parse({ ...payment, status: 'waiting_for_capture' }).status).toBe('waiting_for_capture');
    expect(paymentSchema.safeParse({ ...payment, amount: '70' }).success).toBe(false);
    expect(paymentSchema.safeParse({ ...payment, currency: 'USD' }).success).toBe(false);
  });

  it('keep every field of a ledger row and its page', () => {
    const entry = {
      id: 3,
      createdAt: '2026-01-02T10:00:00.000Z',
      delta: -16,
      balanceAfter: 34,
      kind: 'image',
      // A reason code and its values only: the browser words it (issue #27).
      params: { model: 'ultra', tokens: 16 },
    };
    const refund = {
      ...entry,
      id: 4,
      delta: 16,
      balanceAfter: 50,
      kind: 'refund',
      params: { paymentId: 'p', plan: 'pro' },
    };
    expect(ledgerEntrySchema.parse(entry)).toEqual(entry);
    const page = {
      entries: [entry, refund],
      pagination: { currentPage: 1, totalPages: 1, total: 2, hasNext: false, hasPrev: false },
    };
    expect(ledgerPageSchema.parse(page)).toEqual(page);
    expect(ledgerEntrySchema.safeParse({ ...entry, kind: 'gift' }).success).toBe(false);
    expect(ledgerEntrySchema.safeParse({ ...entry, delta: 1.5 }).success).toBe(false);
  });
});

describe('a payment history item with money given back', () => {
  it('keeps the refund state and amount', () => {
    const item = {
      id: 'pay_2',
      createdAt: '2026-01-02T10:00:00.000Z',
      packageType: 'pro',
      description: 'Pro subscription',
      tokensAmount: 0,
      amount: '1.00',
      currency: 'RUB',
      status: 'succeeded',
      refund: { status: 'succeeded', amount: '1.00' },
    };
    expect(paymentHistoryItemSchema.parse(item)).toEqual(item);
    expect(paymentHistoryItemSchema.parse({ ...item, refund: null }).refund).toBeNull();
    expect(paymentHistoryItemSchema.safeParse({ ...item, refund: { status: 'done', amount: '1.00' } }).success).toBe(
      false,
    );
  });
});
