import { describe, expect, it } from 'vitest';
import {
  createTokenPaymentBodySchema,
  formatRub,
  parseRub,
  parseTokensInput,
  PLANS,
  priceKopecks,
  TOKENS_AMOUNT_MESSAGE,
  tokensAmountSchema,
} from '../../src/domain/billing';

describe('billing rules', () => {
  it('prices tokens at 0.7 RUB in kopecks and writes two decimals', () => {
    expect(priceKopecks(100)).toBe(7000);
    expect(formatRub(priceKopecks(100))).toBe('70.00');
    expect(formatRub(priceKopecks(50))).toBe('35.00');
    expect(formatRub(priceKopecks(10000))).toBe('7000.00');
    expect(formatRub(5)).toBe('0.05');
    expect(formatRub(PLANS.pro.priceKopecks ?? 0)).toBe('700.00');
    expect(() => formatRub(1.5)).toThrow();
  });

  it('reads rouble strings back', () => {
    expect(parseRub('70.00')).toBe(7000);
    expect(parseRub('0.5')).toBe(50);
    expect(parseRub('1')).toBe(100);
    expect(parseRub('-1.00')).toBeNull();
    expect(parseRub('1.005')).toBeNull();
  });

  it('accepts whole numbers from 50 to 10000 and refuses the rest with SPEC text', () => {
    for (const ok of [50, 100, 10000]) expect(tokensAmountSchema.safeParse(ok).success).toBe(true);
    for (const bad of [49, 10001, 100.5, '100', null, undefined, Number.NaN]) {
      const result = tokensAmountSchema.safeParse(bad);
      expect(result.success).toBe(false);
      expect(result.error?.issues[0]?.message).toBe(TOKENS_AMOUNT_MESSAGE);
    }
    const missing = createTokenPaymentBodySchema.safeParse({ returnUrl: '/payment-status' });
    expect(missing.error?.issues[0]?.message).toBe(TOKENS_AMOUNT_MESSAGE);
  });

  it('parses the modal input', () => {
    expect(parseTokensInput(' 100 ')).toBe(100);
    expect(parseTokensInput('1e3')).toBeNull();
    expect(parseTokensInput('49')).toBeNull();
    expect(parseTokensInput('100.5')).toBeNull();
  });

  it('holds SPEC section 9 plans', () => {
    expect(PLANS.starter.signupTokens).toBe(50);
    expect([PLANS.pro.priceRub, PLANS.pro.tokensPerMonth, PLANS.pro.trialDays]).toEqual([700, 1000, 7]);
    expect([PLANS.premium.priceRub, PLANS.premium.tokensPerMonth, PLANS.premium.rollover]).toEqual([1400, 2500, true]);
    expect(PLANS.payg.pricePerTokenRub).toBe(0.7);
  });
});
