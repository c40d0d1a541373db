import {
  PLANS,
  SUBSCRIPTION_PERIOD_MONTHS,
  type Subscription,
  type SubscriptionPlanId,
} from '../../src/domain/billing';
import type { Db, Executor } from '../db/client';
import { AppError } from '../errors';
import { balanceOf, findEntryByKey } from '../ledger/repository';
import type { LedgerService } from '../ledger/service';
import * as repo from './repository';
import type { PaymentRow, SubscriptionRow } from './repository';

export interface SubscriptionOptions {
  /** How long a claimed row stays with the instance working on it. */
  leaseMs: number;
  retryIntervalMs: number;
  maxRetries: number;
}

/**
 * A subscription's life: started by its first payment, renewed by each paid period (pro's
 * unused tokens expire, premium's roll over), retried and ended when renewals fail,
 * cancelled at the period's end. Payments (server/payments/service.ts) decide when a
 * payment has settled; this decides what that means for the subscription and its tokens,
 * in the same transaction.
 */
export class Subscriptions {
  constructor(
    private readonly db: Db,
    private readonly ledger: LedgerService,
    private readonly options: SubscriptionOptions,
    private readonly log: { warn(obj: object, msg: string): void },
  ) {}

  /** A first payment settled: the subscription starts (a trial, or its first month). */
  async start(tx: Executor, payment: PaymentRow, now: Date): Promise<void> {
    const sub = payment.subscriptionId === null ? undefined : await repo.lockSubscription(tx, payment.subscriptionId);
    if (!sub) throw new Error(`payment ${payment.id}: no subscription`);
    const plan = PLANS[payment.packageType as SubscriptionPlanId];
    if (payment.purpose === 'trial_verification' && (sub.status !== 'incomplete' || sub.trialUsed)) {
      // A card check that does not start the subscription (another one did, or the trial was
      // had): it is refunded like every check and grants nothing. One trial per user.
      this.log.warn(
        { paymentId: payment.id, subscriptionId: sub.id, status: sub.status },
        'a second trial card check was paid: refunded, nothing granted',
      );
      return;
    }
    if (sub.status !== 'incomplete') {
      // A second first payment (two tabs): the subscription runs already. The money buys
      // the plan's tokens rather than being lost.
      await this.ledger.credit(
        {
          userId: payment.userId,
          amount: plan.tokensPerMonth,
          reason: 'purchase',
          reference: `payment:${payment.id}`,
          idempotencyKey: `payment:${payment.id}`,
        },
        tx,
      );
      return;
    }
    const trial = payment.purpose === 'trial_verification';
    const periodEnd = trial ? addDays(now, plan.trialDays) : addMonths(now, SUBSCRIPTION_PERIOD_MONTHS);
    const grant = await this.grant(tx, payment, plan.tokensPerMonth);
    const updated = await repo.updateSubscription(tx, sub.id, {
      plan: plan.id as SubscriptionPlanId,
      status: trial ? 'trial' : 'active',
      paymentMethodId: payment.paymentMethodId,
      period: sub.period + 1,
      periodStart: now,
      periodEnd,
      periodTokens: plan.tokensPerMonth,
      periodLedgerId: grant,
      trialEndsAt: trial ? periodEnd : null,
      trialUsed: sub.trialUsed || trial,
      cancelAtPeriodEnd: false,
      canceledAt: null,
      endedAt: null,
      failedAttempts: 0,
      retryAt: null,
      createdAt: now,
    });
    await this.syncUser(tx, updated);
  }

  /** A paid renewal: pro's unused tokens expire, premium's roll over, the month's are granted. */
  async renewed(tx: Executor, payment: PaymentRow, now: Date): Promise<void> {
    const sub = payment.subscriptionId === null ? undefined : await repo.lockSubscription(tx, payment.subscriptionId);
    if (!sub || payment.period === null || sub.period >= payment.period) {
      throw new Error(`payment ${payment.id}: not the next period of its subscription`);
    }
    const plan = PLANS[sub.plan];
    const leftover = await this.leftover(tx, sub);
    let periodTokens = plan.tokensPerMonth;
    if (plan.rollover) periodTokens += leftover;
    else await this.expire(tx, sub, leftover, `payment:${payment.id}:expiry`, `payment:${payment.id}`);
    const grant = await this.grant(tx, payment, plan.tokensPerMonth);
    const start = sub.status === 'past_due' || sub.periodEnd === null ? now : sub.periodEnd;
    const updated = await repo.updateSubscription(tx, sub.id, {
      status: 'active',
      period: payment.period,
      periodStart: start,
      periodEnd: addMonths(start, SUBSCRIPTION_PERIOD_MONTHS),
      periodTokens,
      periodLedgerId: grant,
      trialEndsAt: null,
      failedAttempts: 0,
      retryAt: null,
    });
    await this.syncUser(tx, updated);
  }

  /** The period's grant, keyed by the payment that paid for it; returns its ledger id. */
  private async grant(tx: Executor, payment: PaymentRow, tokens: number): Promise<number> {
    const key = `payment:${payment.id}`;
    await this.ledger.credit(
      { userId: payment.userId, amount: tokens, reason: 'subscription_grant', reference: key, idempotencyKey: key },
      tx,
    );
    const entry = await findEntryByKey(tx, key);
    if (!entry) throw new Error(`grant ${key} not written`);
    return entry.id;
  }

  /**
   * Subscription tokens still unspent: the period's tokens minus what was spent since its
   * grant, and never more than the balance, so tokens bought separately are never counted.
   */
  private async leftover(tx: Executor, sub: SubscriptionRow): Promise<number> {
    if (sub.periodLedgerId === null) return 0;
    const spent = await repo.spentSince(tx, sub.userId, sub.periodLedgerId);
    const balance = (await balanceOf(tx, sub.userId)) ?? 0;
    return Math.max(0, Math.min(balance, sub.periodTokens - spent));
  }

  private async expire(tx: Executor, sub: SubscriptionRow, tokens: number, key: string, reference: string) {
    if (tokens <= 0) return;
    await this.ledger.charge(
      { userId: sub.userId, amount: tokens, reason: 'subscription_expiry', reference, idempotencyKey: key },
      () => 'subscription expiry exceeds the balance',
      tx,
    );
  }

  /** A renewal payment the provider refused: retried later, or the subscription ends. */
  async renewalFailed(payment: PaymentRow, now: Date): Promise<void> {
    if (payment.subscriptionId === null) return;
    await this.db.transaction(async (tx) => {
      const sub = await repo.lockSubscription(tx, payment.subscriptionId ?? -1);
      if (!sub || sub.status === 'cancelled' || sub.status === 'incomplete') return;
      // Only the current attempt's failure counts (a late duplicate of an old one does not).
      if (payment.period !== sub.period + 1 || payment.attempt !== sub.failedAttempts) return;
      const failed = sub.failedAttempts + 1;
      if (failed > this.options.maxRetries) {
        await this.end(tx, sub, now);
        return;
      }
      const updated = await repo.updateSubscription(tx, sub.id, {
        status: 'past_due',
        failedAttempts: failed,
        retryAt: new Date(now.getTime() + this.options.retryIntervalMs),
      });
      await this.syncUser(tx, updated);
    });
  }

  /** Ends a subscription: pro's unused tokens expire (premium's were paid for and stay). */
  private async end(tx: Executor, sub: SubscriptionRow, now: Date): Promise<void> {
    if (!PLANS[sub.plan].rollover) {
      const leftover = await this.leftover(tx, sub);
      const key = `subscription:${sub.id}:period:${sub.period}:end`;
      await this.expire(tx, sub, leftover, key, `subscription:${sub.id}`);
    }
    const updated = await repo.updateSubscription(tx, sub.id, {
      status: 'cancelled',
      endedAt: now,
      canceledAt: sub.canceledAt ?? now,
      retryAt: null,
      leaseUntil: null,
    });
    await this.syncUser(tx, updated);
  }

  private async syncUser(tx: Executor, sub: SubscriptionRow): Promise<void> {
    if (sub.status === 'cancelled' || sub.status === 'incomplete') {
      const balance = (await balanceOf(tx, sub.userId)) ?? 0;
      await repo.setUserSubscription(tx, sub.userId, {
        subscriptionType: balance > 0 ? 'payg' : 'starter',
        subscriptionStatus: 'active',
        subscriptionTokensTotal: 0,
        subscriptionTokensUsed: 0,
        nextBillingDate: null,
        trialEndsAt: null,
      });
      return;
    }
    await repo.setUserSubscription(tx, sub.userId, {
      subscriptionType: sub.plan,
      subscriptionStatus: sub.status,
      subscriptionTokensTotal: sub.periodTokens,
      subscriptionTokensUsed: await repo.usedThisPeriod(tx, sub),
      nextBillingDate: sub.cancelAtPeriodEnd ? null : sub.periodEnd,
      trialEndsAt: sub.trialEndsAt,
    });
  }

  async subscription(userId: number): Promise<Subscription | null> {
    const sub = await repo.findSubscription(this.db, userId);
    if (!repo.isRunning(sub)) return null;
    return toSubscription(sub, await repo.usedThisPeriod(this.db, sub));
  }

  /** Stops renewal: the subscription stays usable until its period ends. */
  async cancel(userId: number): Promise<Subscription> {
    const result = await this.db.transaction(async (tx) => {
      const found = await repo.findSubscription(tx, userId);
      const sub = found ? await repo.lockSubscription(tx, found.id) : undefined;
      if (!repo.isRunning(sub)) return undefined;
      if (sub.cancelAtPeriodEnd) return sub;
      const updated = await repo.updateSubscription(tx, sub.id, { cancelAtPeriodEnd: true, canceledAt: new Date() });
      await this.syncUser(tx, updated);
      return updated;
    });
    if (!result) throw new AppError('NOT_FOUND', 'No active subscription');
    return toSubscription(result, await repo.usedThisPeriod(this.db, result));
  }

  /**
   * Charges every subscription whose period has ended, once per period across instances:
   * a row is claimed (SKIP LOCKED plus a lease) and `charge` pays its period (PaymentsService: one payment per
   * subscription, period and attempt, whose id is the provider's Idempotence-Key).
   */
  async renew(
    now: Date,
    charge: (sub: SubscriptionRow, now: Date) => Promise<'credited' | 'canceled' | 'none'>,
  ): Promise<{ renewed: number; failed: number; ended: number }> {
    const claimed = await repo.claimDueSubscriptions(this.db, now, this.options.leaseMs, 20);
    const counts = { renewed: 0, failed: 0, ended: 0 };
    for (const sub of claimed) {
      try {
        // The heartbeat: this row stays ours while it is worked on (the database's clock, as the claim).
        await repo.extendSubscriptionLease(this.db, sub.id, this.options.leaseMs);
        if (sub.cancelAtPeriodEnd || sub.paymentMethodId === null) {
          await this.db.transaction(async (tx) => {
            const locked = await repo.lockSubscription(tx, sub.id);
            if (locked && locked.status !== 'cancelled') await this.end(tx, locked, now);
          });
          counts.ended += 1;
          continue;
        }
        const outcome = await charge(sub, now);
        if (outcome === 'credited') counts.renewed += 1;
        else if (outcome === 'canceled') counts.failed += 1;
      } catch (error) {
        this.log.warn({ err: error, subscriptionId: sub.id }, 'renewal attempt failed; retried on the next run');
      } finally {
        await repo.releaseSubscriptionLease(this.db, sub.id);
      }
    }
    return counts;
  }
}

function toSubscription(sub: SubscriptionRow, used: number): Subscription {
  const plan = PLANS[sub.plan];
  return {
    plan: { name: sub.plan, tokensPerMonth: plan.tokensPerMonth, trialDays: plan.trialDays },
    status: sub.status === 'incomplete' ? 'cancelled' : sub.status,
    tokensUsedThisPeriod: used,
    nextBillingDate: sub.cancelAtPeriodEnd ? null : (sub.periodEnd?.toISOString() ?? null),
    canceledAt: sub.canceledAt?.toISOString() ?? null,
    createdAt: sub.createdAt.toISOString(),
    trialEndsAt: sub.trialEndsAt?.toISOString() ?? null,
    cancelAtPeriodEnd: sub.cancelAtPeriodEnd,
  };
}

function addDays(date: Date, days: number): Date {
  return new Date(date.getTime() + days * 24 * 60 * 60_000);
}

function addMonths(date: Date, months: number): Date {
  const next = new Date(date.getTime());
  const day = next.getUTCDate();
  next.setUTCMonth(next.getUTCMonth() + months);
  // 31 January + 1 month is the last day of February, not 3 March.
  if (next.getUTCDate() !== day) next.setUTCDate(0);
  return next;
}
