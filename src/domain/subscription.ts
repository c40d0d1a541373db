import type { Subscription } from './billing';

/** What SPEC's rules read of a subscription: any plan name and status (they are normalised). */
export interface SubscriptionRecord {
  plan: { name: string; tokensPerMonth: number; trialDays: number };
  status: string;
  tokensUsedThisPeriod: number;
  createdAt: string;
}
import type { subscriptionStatuses, subscriptionTypes } from './user';

export type SubscriptionType = (typeof subscriptionTypes)[number];
export type SubscriptionStatus = (typeof subscriptionStatuses)[number] | (string & {});

/** What the billing screen shows about the user's plan (SPEC section 4 "Subscription loading"). */
export interface SubscriptionSummary {
  type: SubscriptionType;
  status: SubscriptionStatus;
  tokensTotal: number;
  tokensUsed: number;
  /** ISO date; only for a plan with a trial that is not cancelled. */
  trialEndsAt: string | null;
}

const DAY_MS = 24 * 60 * 60 * 1000;

/** SPEC: premium gives premium, pro gives pro, anything else starter. */
export function subscriptionTypeOf(planName: string): SubscriptionType {
  const name = planName.trim().toLowerCase();
  if (name === 'premium') return 'premium';
  if (name === 'pro') return 'pro';
  return 'starter';
}

function isCancelled(status: string): boolean {
  return status === 'cancelled' || status === 'canceled';
}

/**
 * SPEC section 4 "Subscription loading": with a subscription, its plan, lowercased status
 * (default active), the plan's monthly tokens, the tokens used this period and the trial
 * end (creation + trialDays, when trialDays > 0 and not cancelled). Without one: payg when
 * the user holds tokens, else starter; active; zeros.
 */
export function summarizeSubscription(
  subscription: SubscriptionRecord | null,
  tokensAmount: number,
): SubscriptionSummary {
  if (!subscription) {
    return {
      type: tokensAmount > 0 ? 'payg' : 'starter',
      status: 'active',
      tokensTotal: 0,
      tokensUsed: 0,
      trialEndsAt: null,
    };
  }
  const status = subscription.status.trim().toLowerCase() || 'active';
  const { trialDays } = subscription.plan;
  const created = Date.parse(subscription.createdAt);
  const trialEndsAt =
    trialDays > 0 && !isCancelled(status) && Number.isFinite(created)
      ? new Date(created + trialDays * DAY_MS).toISOString()
      : null;
  return {
    type: subscriptionTypeOf(subscription.plan.name),
    status,
    tokensTotal: subscription.plan.tokensPerMonth,
    tokensUsed: subscription.tokensUsedThisPeriod,
    trialEndsAt,
  };
}

/** SPEC: a failed subscription load is only logged and falls back to starter, active, zeros. */
export const FALLBACK_SUBSCRIPTION: SubscriptionSummary = {
  type: 'starter',
  status: 'active',
  tokensTotal: 0,
  tokensUsed: 0,
  trialEndsAt: null,
};

/** SPEC: when the token amount changes for pro or premium, used = total - amount, never below 0. */
export function withTokenAmount(summary: SubscriptionSummary, tokensAmount: number): SubscriptionSummary {
  if (summary.type !== 'pro' && summary.type !== 'premium') return summary;
  return { ...summary, tokensUsed: Math.max(0, summary.tokensTotal - tokensAmount) };
}

/** A subscription that still renews can be cancelled (at the period end). */
export function canCancelSubscription(subscription: Subscription | null): boolean {
  if (!subscription) return false;
  return !isCancelled(subscription.status.toLowerCase()) && !subscription.cancelAtPeriodEnd && !subscription.canceledAt;
}
