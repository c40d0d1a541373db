import type { Plan } from '../../../src/domain/billing';

/* Replies of our API that several screen suites share. */

/** SPEC section 9's plans as GET /api/payments/plans carries them. */
export const PLANS: Plan[] = [
  {
    id: 'starter',
    name: 'Starter',
    priceRub: null,
    priceKopecks: null,
    tokensPerMonth: 0,
    signupTokens: 50,
    trialDays: 0,
    rollover: false,
    pricePerTokenRub: null,
    features: ['signupTokens', 'history7Days'],
  },
  {
    id: 'pro',
    name: 'Pro',
    priceRub: 700,
    priceKopecks: 70000,
    tokensPerMonth: 1000,
    signupTokens: 0,
    trialDays: 7,
    rollover: false,
    pricePerTokenRub: null,
    features: ['monthlyTokens', 'trial'],
  },
  {
    id: 'premium',
    name: 'Premium',
    priceRub: 1400,
    priceKopecks: 140000,
    tokensPerMonth: 2500,
    signupTokens: 0,
    trialDays: 0,
    rollover: true,
    pricePerTokenRub: null,
    features: ['monthlyTokens', 'rollover'],
  },
  {
    id: 'payg',
    name: 'Pay-as-you-go',
    priceRub: null,
    priceKopecks: null,
    tokensPerMonth: 0,
    signupTokens: 0,
    trialDays: 0,
    rollover: false,
    pricePerTokenRub: 0.7,
    features: ['perToken'],
  },
];
