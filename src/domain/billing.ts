import { z } from 'zod';
import { paginationSchema } from './image-record';
import { plainDecimalInteger } from './numbers';
import { subscriptionTypes } from './user';

/**
 * Billing rules shared by the browser and the server (SPEC sections 3, 5, 7, 9): the plans,
 * the token price, the purchase limits and the shapes of every /api/payments and /api/ledger
 * answer. The screen and the API read them from here, so a price is never written twice.
 * Isomorphic: no Node or DOM APIs.
 */

/** SPEC 9: 0.7 RUB per token, kept in kopecks so no sum is ever a float. */
export const TOKEN_PRICE_KOPECKS = 70;
export const MIN_TOKENS = 50;
export const MAX_TOKENS = 10000;
export const TOKEN_PRESETS = [50, 100, 500, 1000, 2500, 5000, 10000] as const;
export const DEFAULT_TOKENS = 100;
/** SPEC 9: the balance warning shows under this many tokens. */
export const LOW_BALANCE = 50;
/** SPEC 9: "About one generation per 5 tokens". */
export const TOKENS_PER_GENERATION_HINT = 5;
export const CURRENCY = 'RUB';

/** SPEC 5's text for a purchase outside 50..10000 or not a whole number. */
export const TOKENS_AMOUNT_MESSAGE = 'Please check your input: 50 - 10,000 tokens';

/** SPEC 8: what the purchase and the payment-status page say when something fails. */
export const billingErrorMessages = {
  createPayment: 'Error creating payment. Please try again.',
  paymentFailed: 'Payment failed. Please try again.',
  unknownStatus: 'Unknown payment status.',
  checkStatus: 'Error checking payment status.',
} as const;

export const PLAN_IDS = ['starter', 'pro', 'premium', 'payg'] as const;
export type PlanId = (typeof PLAN_IDS)[number];
/** The plans one subscribes to (the others need no payment of their own). */
export const SUBSCRIPTION_PLAN_IDS = ['pro', 'premium'] as const;
export type SubscriptionPlanId = (typeof SUBSCRIPTION_PLAN_IDS)[number];

export const planSchema = z.object({
  id: z.enum(PLAN_IDS),
  name: z.string(),
  /** Roubles per month; null for the plans without a monthly price (starter, payg). */
  priceRub: z.number().nullable(),
  /** Kopecks per month for a subscription plan, null otherwise. */
  priceKopecks: z.number().int().nullable(),
  tokensPerMonth: z.number().int(),
  /** Tokens given once at sign-up (starter). */
  signupTokens: z.number().int(),
  trialDays: z.number().int(),
  rollover: z.boolean(),
  /** payg only: roubles per token. */
  pricePerTokenRub: z.number().nullable(),
  /** i18n keys (namespace billing, `plans.features.<key>`) of the plan's feature lines. */
  features: z.array(z.string()).optional(),
});
export type Plan = z.infer<typeof planSchema>;

/** SPEC 9's four plans: the one definition the catalogue, the API and the renewal job read. */
export const PLANS: Readonly<Record<PlanId, Plan>> = {
  starter: {
    id: 'starter',
    name: 'Starter',
    priceRub: null,
    priceKopecks: null,
    tokensPerMonth: 0,
    signupTokens: 50,
    trialDays: 0,
    rollover: false,
    pricePerTokenRub: null,
    features: ['signupTokens', 'allModels', 'history7Days'],
  },
  pro: {
    id: 'pro',
    name: 'Pro',
    priceRub: 700,
    priceKopecks: 70000,
    tokensPerMonth: 1000,
    signupTokens: 0,
    trialDays: 7,
    rollover: false,
    pricePerTokenRub: null,
    features: ['monthlyTokens', 'trial', 'allModels', 'cancelAnytime'],
  },
  premium: {
    id: 'premium',
    name: 'Premium',
    priceRub: 1400,
    priceKopecks: 140000,
    tokensPerMonth: 2500,
    signupTokens: 0,
    trialDays: 0,
    rollover: true,
    pricePerTokenRub: null,
    features: ['monthlyTokens', 'rollover', 'allModels', 'cancelAnytime'],
  },
  payg: {
    id: 'payg',
    name: 'Pay-as-you-go',
    priceRub: null,
    priceKopecks: null,
    tokensPerMonth: 0,
    signupTokens: 0,
    trialDays: 0,
    rollover: false,
    pricePerTokenRub: TOKEN_PRICE_KOPECKS / 100,
    features: ['perToken', 'noExpiry', 'allModels'],
  },
};

export const PLAN_LIST: readonly Plan[] = PLAN_IDS.map((id) => PLANS[id]);

/**
 * Pro's trial verifies the card with a 1 RUB payment that saves the card and is refunded
 * at once; the price is first charged when the trial ends.
 */
export const TRIAL_VERIFICATION_KOPECKS = 100;

/** A subscription period: one calendar month from its start. */
export const SUBSCRIPTION_PERIOD_MONTHS = 1;

export function isSubscriptionPlanId(value: unknown): value is SubscriptionPlanId {
  return typeof value === 'string' && (SUBSCRIPTION_PLAN_IDS as readonly string[]).includes(value);
}

/** The price of `tokens` tokens in kopecks. */
export function priceKopecks(tokens: number): number {
  return tokens * TOKEN_PRICE_KOPECKS;
}

/** Kopecks as YooKassa's and the screen's two-decimal string: 7000 -> "70.00". */
export function formatRub(kopecks: number): string {
  if (!Number.isInteger(kopecks) || kopecks < 0) throw new Error(`kopecks must be a whole number >= 0: ${kopecks}`);
  const rub = Math.floor(kopecks / 100);
  const rest = kopecks % 100;
  return `${rub}.${rest.toString().padStart(2, '0')}`;
}

/** "70.00" -> 7000; null for anything that is not a non-negative amount with up to 2 decimals. */
export function parseRub(value: string): number | null {
  const match = /^(\d{1,12})(?:\.(\d{1,2}))?$/.exec(value);
  if (!match) return null;
  const [, rub = '0', fraction = ''] = match;
  return Number(rub) * 100 + Number(fraction.padEnd(2, '0'));
}

/** SPEC 5: a whole number of tokens from 50 to 10000; every failure says the same. */
export const tokensAmountSchema = z
  .number({ error: TOKENS_AMOUNT_MESSAGE })
  .int(TOKENS_AMOUNT_MESSAGE)
  .min(MIN_TOKENS, TOKENS_AMOUNT_MESSAGE)
  .max(MAX_TOKENS, TOKENS_AMOUNT_MESSAGE);

/**
 * The modal's input: the text the user typed, or null when it is not a valid amount.
 * Only digits count ("1e3", "100.5" and " " are not whole numbers of tokens).
 */
export function parseTokensInput(text: string): number | null {
  const trimmed = text.trim();
  if (!/^\d{1,6}$/.test(trimmed)) return null;
  const parsed = tokensAmountSchema.safeParse(Number(trimmed));
  return parsed.success ? parsed.data : null;
}

export const returnUrlSchema = z.string({ error: 'returnUrl must be an address on this site' }).max(2048);

export const createTokenPaymentBodySchema = z.object({
  tokensAmount: tokensAmountSchema,
  returnUrl: returnUrlSchema.optional(),
});
export type CreateTokenPaymentBody = z.infer<typeof createTokenPaymentBodySchema>;

export const createSubscriptionPaymentBodySchema = z.object({
  plan: z.enum(SUBSCRIPTION_PLAN_IDS, { error: 'plan must be pro or premium' }),
  returnUrl: returnUrlSchema.optional(),
});
export type CreateSubscriptionPaymentBody = z.infer<typeof createSubscriptionPaymentBodySchema>;

// --- API answers (inside `{success: true, data}`) --------------------------------------

export const PAYMENT_STATUSES = ['pending', 'succeeded', 'canceled'] as const;
export type PaymentStatus = (typeof PAYMENT_STATUSES)[number];
/** A refund at the provider: YooKassa's refund statuses. */
export const REFUND_STATUSES = ['pending', 'succeeded', 'canceled'] as const;
export type RefundStatus = (typeof REFUND_STATUSES)[number];
export const PACKAGE_TYPES = ['tokens', 'pro', 'premium'] as const;
export type PackageType = (typeof PACKAGE_TYPES)[number];

/** Two-decimal rouble string, as YooKassa writes amounts. */
const rubAmountSchema = z.string().regex(/^\d+\.\d{2}$/);

export const plansResponseSchema = z.object({ plans: z.array(planSchema) });
export type PlansResponse = z.infer<typeof plansResponseSchema>;

export const createPaymentResponseSchema = z.object({
  paymentId: z.string(),
  confirmationUrl: z.string(),
  amount: rubAmountSchema,
  currency: z.literal(CURRENCY),
});
export type CreatePaymentResponse = z.infer<typeof createPaymentResponseSchema>;

/** The whole body of a create call: SPEC reads `confirmationUrl` from data or the top level. */
export const createPaymentReplySchema = z.object({
  success: z.literal(true),
  data: createPaymentResponseSchema,
  confirmationUrl: z.string(),
});

export const paymentSchema = z.object({
  id: z.string(),
  /**
   * pending, succeeded or canceled; any other status the provider may report is kept as it is,
   * and the payment page says "Unknown payment status." (SPEC 4) rather than failing the check.
   */
  status: z.union([z.enum(PAYMENT_STATUSES), z.string()]),
  packageType: z.enum(PACKAGE_TYPES),
  tokensAmount: z.number().int(),
  amount: rubAmountSchema,
  currency: z.literal(CURRENCY),
  createdAt: z.string(),
  /** The provider's reason when canceled (insufficient_funds, expired_on_confirmation, ...). */
  cancellationReason: z.string().nullable(),
  /** Whether its tokens (or the subscription) have been granted. */
  credited: z.boolean(),
});
export type Payment = z.infer<typeof paymentSchema>;

export const paymentHistoryItemSchema = z.object({
  id: z.string(),
  createdAt: z.string(),
  packageType: z.enum(PACKAGE_TYPES),
  /** English fallback; the screen words it from packageType and tokensAmount. */
  description: z.string(),
  tokensAmount: z.number().int(),
  amount: rubAmountSchema,
  currency: z.literal(CURRENCY),
  status: z.enum(PAYMENT_STATUSES),
  /**
   * Money given back for this payment, if any (pro's card check, or a refund by the shop): the
   * newest refund's state, and what has come back so far (or, while none has, what is asked).
   */
  refund: z
    .object({ status: z.enum(REFUND_STATUSES), amount: rubAmountSchema })
    .nullable()
    .optional(),
});
export type PaymentHistoryItem = z.infer<typeof paymentHistoryItemSchema>;

export const paymentHistorySchema = z.object({
  payments: z.array(paymentHistoryItemSchema),
  pagination: paginationSchema,
});
export type PaymentHistory = z.infer<typeof paymentHistorySchema>;

export const HISTORY_DEFAULT_LIMIT = 10;
export const HISTORY_MAX_LIMIT = 100;

const pageMessage = `page must be a whole number from 1; limit from 1 to ${HISTORY_MAX_LIMIT}`;

/**
 * The page asked of the payment history and of the ledger. Plain digits only, as README says
 * and the gallery does: 0x10, 1e3 and " 2" are refused.
 */
export const billingPageQuerySchema = z.object({
  page: plainDecimalInteger({ message: pageMessage, min: 1 }).default(1),
  limit: plainDecimalInteger({ message: pageMessage, min: 1, max: HISTORY_MAX_LIMIT }).default(HISTORY_DEFAULT_LIMIT),
});

/**
 * A payment named in a path: any text, so that one that is not a payment id answers like an
 * unknown one (404), never with a 400 that tells ids apart.
 */
export const paymentIdParamsSchema = z.object({ id: z.string().describe('The payment id (a UUID)') });

export const subscriptionSchema = z.object({
  plan: z.object({
    /** SPEC 4 reads any name: premium gives premium, pro gives pro, anything else starter. */
    name: z.string(),
    tokensPerMonth: z.number().int(),
    trialDays: z.number().int(),
  }),
  /** SPEC 4 lowercases the status (default active): any spelling is read, not refused. */
  status: z.string(),
  tokensUsedThisPeriod: z.number().int(),
  nextBillingDate: z.string().nullable(),
  canceledAt: z.string().nullable(),
  createdAt: z.string(),
  trialEndsAt: z.string().nullable(),
  /** Cancelled by the user: it stays usable until nextBillingDate and is not renewed. */
  cancelAtPeriodEnd: z.boolean(),
});
export type Subscription = z.infer<typeof subscriptionSchema>;

/** GET /api/payments/subscription: null when the user has none. */
export const subscriptionResponseSchema = subscriptionSchema.nullable();

export const LEDGER_KINDS = [
  'signup',
  'image',
  'portrait',
  'chat',
  /** The unused part of a chat reply's reservation, returned. */
  'chat_release',
  'refund',
  'purchase',
  'subscription_grant',
  'subscription_expiry',
  'admin',
  /** A payment refunded at the provider: the tokens it paid for, taken back. */
  'payment_refund',
  'other',
] as const;
export type LedgerKind = (typeof LEDGER_KINDS)[number];

export const ledgerEntrySchema = z.object({
  id: z.number().int(),
  createdAt: z.string(),
  /** Negative for spending, positive for credits. */
  delta: z.number().int(),
  balanceAfter: z.number().int(),
  /** What the change was for, as a code; the screen words it in its language. */
  kind: z.enum(LEDGER_KINDS),
  /**
   * The values the screen words the row with: model is an id (an image model's, the
   * portrait's or a chat model's), tokens a count, plan a plan id.
   */
  params: z.object({
    model: z.string().optional(),
    tokens: z.number().int().optional(),
    paymentId: z.string().optional(),
    plan: z.string().optional(),
  }),
});
export type LedgerEntry = z.infer<typeof ledgerEntrySchema>;

export const ledgerPageSchema = z.object({
  entries: z.array(ledgerEntrySchema),
  pagination: paginationSchema,
});
export type LedgerPage = z.infer<typeof ledgerPageSchema>;

export const subscriptionTypeSchema = z.enum(subscriptionTypes);

/** Reasons a customer may pick when declining on the sandbox's checkout page, as YooKassa names them. */
export const SANDBOX_DECLINE_REASONS = [
  'insufficient_funds',
  '3d_secure_failed',
  'card_expired',
  'payment_method_restricted',
  'canceled_by_merchant',
] as const;
export type SandboxDeclineReason = (typeof SANDBOX_DECLINE_REASONS)[number];

/** The payment-status page's query `status`, as the return route sends it. */
export const RETURN_STATUSES = ['success', 'failed', 'pending'] as const;
export type ReturnStatus = (typeof RETURN_STATUSES)[number];
