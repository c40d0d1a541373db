import { randomUUID } from 'node:crypto';
import {
  createSubscriptionPaymentBodySchema,
  createTokenPaymentBodySchema,
  formatRub,
  PLAN_LIST,
  PLANS,
  priceKopecks,
  SUBSCRIPTION_PERIOD_MONTHS,
  TRIAL_VERIFICATION_KOPECKS,
  type CreatePaymentResponse,
  type LedgerPage,
  type Payment,
  type PaymentHistory,
  type PaymentHistoryItem,
  type PlansResponse,
  type ReturnStatus,
  type Subscription,
  type SubscriptionPlanId,
} from '../../src/domain/billing';
import { paginationOf } from '../../src/domain/image-record';
import { sameOriginUrl } from '../../src/domain/redirect';
import type { Db, Executor } from '../db/client';
import { AppError } from '../errors';
import { balanceOf, findEntryByKey } from '../ledger/repository';
import type { LedgerService } from '../ledger/service';
import {
  PaymentProviderError,
  type PaymentProvider,
  type ProviderPayment,
  type ProviderRefund,
} from '../providers/payments/types';
import { toLedgerEntry } from './ledger-entries';
import * as repo from './repository';
import type { PaymentRow, SubscriptionRow } from './repository';

export interface PaymentsOptions {
  appUrl: string;
  /** A payment pending this long is re-read by the reconciler. */
  recheckAfterMs: number;
  /** A payment the provider has not decided after this long is closed as expired. */
  expireAfterMs: number;
  /** How long a claimed row stays with the instance working on it. */
  leaseMs: number;
  retryIntervalMs: number;
  maxRetries: number;
}

interface PayingUser {
  id: number;
  email: string;
}

const RETURN_PATH_DEFAULT = '/payment-status';

/**
 * Payments and subscriptions. Our payment row is written before the provider's, and its id
 * keys the provider's Idempotence-Key and the ledger row that credits it. Whatever learns
 * of a decision first (the return, a webhook, the reconciler, the renewal job) settles it
 * through `settle`, which marks the row paid and writes its ledger rows in one transaction,
 * once; every later caller finds it settled and changes nothing.
 */
export class PaymentsService {
  constructor(
    private readonly db: Db,
    private readonly ledger: LedgerService,
    readonly provider: PaymentProvider,
    private readonly options: PaymentsOptions,
    private readonly log: { warn(obj: object, msg: string): void; error(obj: object, msg: string): void },
  ) {}

  plans(): PlansResponse {
    return { plans: [...PLAN_LIST] };
  }

  async createTokenPayment(user: PayingUser, body: unknown): Promise<CreatePaymentResponse> {
    const parsed = createTokenPaymentBodySchema.safeParse(body ?? {});
    if (!parsed.success) throw new AppError('VALIDATION_ERROR', parsed.error.issues[0]?.message);
    const returnPath = this.returnPathOf(parsed.data.returnUrl);
    const tokens = parsed.data.tokensAmount;
    return this.open(user, {
      packageType: 'tokens',
      purpose: 'purchase',
      tokensAmount: tokens,
      amountKopecks: priceKopecks(tokens),
      description: `${tokens} tokens`,
      returnPath,
    });
  }

  /**
   * Pro's first subscription starts its trial with a 1 RUB card check, refunded at once;
   * the card is saved and charged the price when the trial ends. Premium (and a pro
   * subscriber who had the trial before) pays the first month at once.
   */
  async createSubscriptionPayment(user: PayingUser, body: unknown): Promise<CreatePaymentResponse> {
    const parsed = createSubscriptionPaymentBodySchema.safeParse(body ?? {});
    if (!parsed.success) throw new AppError('VALIDATION_ERROR', parsed.error.issues[0]?.message);
    const returnPath = this.returnPathOf(parsed.data.returnUrl);
    const planId = parsed.data.plan;
    const plan = PLANS[planId];
    // One first payment waits per subscription (a unique index, so across tabs and instances):
    // the same plan again gets the payment already opened, another plan supersedes it. Only
    // the payment that starts the subscription grants anything (startSubscription).
    for (let round = 0; round < 5; round += 1) {
      const subscription = await repo.openIncomplete(this.db, user.id, planId);
      if (!subscription) throw new AppError('SUBSCRIPTION_EXISTS');
      const trial = plan.trialDays > 0 && !subscription.trialUsed;
      const purpose = trial ? 'trial_verification' : 'subscription_first';
      const amountKopecks = trial ? TRIAL_VERIFICATION_KOPECKS : (plan.priceKopecks ?? 0);
      const pending = await repo.pendingFirstPayment(this.db, subscription.id);
      if (pending) {
        const same =
          pending.packageType === planId && pending.purpose === purpose && pending.amountKopecks === amountKopecks;
        if (same && (await this.stillOpen(pending))) return this.resume(user, pending);
        // Another plan, or a payment the provider has closed or decided meanwhile: look again.
        if (!same) await repo.markCanceled(this.db, pending.id, 'superseded');
        continue;
      }
      const row = await repo.insertFirstPayment(this.db, {
        id: randomUUID(),
        userId: user.id,
        provider: this.provider.kind,
        packageType: planId,
        purpose,
        subscriptionId: subscription.id,
        tokensAmount: plan.tokensPerMonth,
        amountKopecks,
        description: trial
          ? `${plan.name} trial: card check, refunded`
          : `${plan.name} subscription, ${SUBSCRIPTION_PERIOD_MONTHS} month`,
        returnPath,
      });
      // Another tab or instance wrote its first payment a moment earlier: the next round reuses it.
      if (!row) continue;
      return this.createAtProvider(user, row, true);
    }
    throw new AppError('PAYMENT_PROVIDER_ERROR', undefined, {
      cause: new Error('first payment: no stable pending payment after 5 rounds'),
    });
  }

  /**
   * Whether a pending first payment can be offered again: a fresh one yes; an older one is
   * re-read first (the customer may have paid or the provider closed it since).
   */
  private async stillOpen(pending: PaymentRow): Promise<boolean> {
    const age = Date.now() - pending.createdAt.getTime();
    if (pending.providerPaymentId === null || age < this.options.recheckAfterMs) return true;
    try {
      const current = await this.refresh(pending);
      return current?.status === 'pending';
    } catch (error) {
      this.log.warn({ err: error, paymentId: pending.id }, 'pending first payment could not be re-read; offered again');
      return true;
    }
  }

  /**
   * The payment another tab opened: its confirmation address, or (while that tab still waits
   * for the provider) the same create under the same Idempotence-Key, which gives the same
   * provider payment.
   */
  private async resume(user: PayingUser, row: PaymentRow): Promise<CreatePaymentResponse> {
    if (row.confirmationUrl) {
      return {
        paymentId: row.id,
        confirmationUrl: row.confirmationUrl,
        amount: formatRub(row.amountKopecks),
        currency: 'RUB',
      };
    }
    return this.createAtProvider(user, row, true);
  }

  async getPayment(userId: number, id: string): Promise<Payment> {
    const row = await repo.findOwnedPayment(this.db, userId, id);
    if (!row) throw new AppError('NOT_FOUND');
    return toPayment(row);
  }

  /**
   * The browser back from the provider: the payment is re-read and settled, then the
   * status page shows the result. Only the owner's payment; a provider that cannot be
   * reached leaves it pending (the status page keeps checking).
   */
  async returnFromProvider(userId: number, id: string): Promise<{ location: string }> {
    let row = await repo.findOwnedPayment(this.db, userId, id);
    if (!row) throw new AppError('NOT_FOUND');
    if (row.creditedAt === null && row.providerPaymentId !== null) {
      try {
        row = (await this.refresh(row)) ?? row;
      } catch (error) {
        this.log.warn({ err: error, paymentId: id }, 'payment return: provider not reachable');
      }
    }
    const status: ReturnStatus =
      row.status === 'succeeded' ? 'success' : row.status === 'canceled' ? 'failed' : 'pending';
    const query = new URLSearchParams({ paymentId: row.id, status });
    return { location: `${row.returnPath}?${query.toString()}` };
  }

  /**
   * A notification (a webhook from an allowed sender, or the sandbox after Pay/Decline):
   * only the id is taken from it; the payment itself is re-read from the provider.
   * Unknown payments are ignored.
   */
  async notified(providerObjectId: string, event = 'payment.succeeded'): Promise<void> {
    // refund.succeeded carries a refund (its id, and the payment in payment_id).
    if (event.startsWith('refund.')) return this.refundNotified(providerObjectId);
    const providerPaymentId = providerObjectId;
    const row = await repo.findByProviderId(this.db, providerPaymentId);
    if (!row) {
      this.log.warn({ providerPaymentId }, 'notification for an unknown payment ignored');
      return;
    }
    await this.refresh(row);
  }

  /** Re-reads the payment from the provider and settles it; returns the row as it is now. */
  async refresh(row: PaymentRow, now = new Date()): Promise<PaymentRow | undefined> {
    if (row.providerPaymentId === null) return row;
    const remote = await this.provider.getPayment(row.providerPaymentId);
    await this.settle(row, remote, now);
    return repo.findPayment(this.db, row.id);
  }

  /**
   * Applies the provider's word on a payment: at most once, whoever calls. Says what this
   * call changed ('none' when another caller had already settled it or nothing is decided).
   */
  async settle(row: PaymentRow, remote: ProviderPayment, now = new Date()): Promise<'credited' | 'canceled' | 'none'> {
    if (remote.id !== row.providerPaymentId && row.providerPaymentId !== null) {
      throw new Error(`payment ${row.id}: provider answered for ${remote.id}`);
    }
    if (remote.status === 'succeeded') {
      if (remote.amountKopecks !== row.amountKopecks) {
        this.log.error(
          { paymentId: row.id, expected: row.amountKopecks, got: remote.amountKopecks },
          'provider amount differs: not credited',
        );
        return 'none';
      }
      const settled = await this.db.transaction(async (tx) => {
        const claimed = await repo.claimSucceeded(
          tx,
          row.id,
          remote.paymentMethod?.saved ? remote.paymentMethod.id : null,
        );
        if (!claimed) return undefined;
        await this.applySucceeded(tx, claimed, now);
        return claimed;
      });
      if (settled?.purpose === 'trial_verification') await this.refundTrialCheck(settled);
      return settled ? 'credited' : 'none';
    }
    if (remote.status === 'canceled') {
      const canceled = await repo.markCanceled(this.db, row.id, remote.cancellationReason ?? 'canceled');
      if (canceled?.purpose === 'renewal') await this.renewalFailed(canceled, now);
      return canceled ? 'canceled' : 'none';
    }
    // pending / waiting_for_capture: not decided yet.
    return 'none';
  }

  private async applySucceeded(tx: Executor, payment: PaymentRow, now: Date): Promise<void> {
    switch (payment.purpose) {
      case 'purchase':
        await this.ledger.credit(
          {
            userId: payment.userId,
            amount: payment.tokensAmount,
            reason: 'purchase',
            reference: `payment:${payment.id}`,
            idempotencyKey: `payment:${payment.id}`,
          },
          tx,
        );
        return;
      case 'trial_verification':
      case 'subscription_first':
        await this.startSubscription(tx, payment, now);
        return;
      case 'renewal':
        await this.renewSubscription(tx, payment, now);
        return;
    }
  }

  private async startSubscription(tx: Executor, payment: PaymentRow, now: Date): Promise<void> {
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
  private async renewSubscription(tx: Executor, payment: PaymentRow, now: Date): Promise<void> {
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

  private async renewalFailed(payment: PaymentRow, now: Date): Promise<void> {
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
    const used = sub.periodLedgerId === null ? 0 : await repo.spentSince(tx, sub.userId, sub.periodLedgerId);
    await repo.setUserSubscription(tx, sub.userId, {
      subscriptionType: sub.plan,
      subscriptionStatus: sub.status,
      subscriptionTokensTotal: sub.periodTokens,
      subscriptionTokensUsed: Math.min(used, sub.periodTokens),
      nextBillingDate: sub.cancelAtPeriodEnd ? null : sub.periodEnd,
      trialEndsAt: sub.trialEndsAt,
    });
  }

  /**
   * The 1 RUB card check goes back at once, and is followed until the provider says the refund
   * succeeded: a pending refund is re-read (by the reconciler), a canceled one is asked for
   * again under a new Idempotence-Key, a call that failed is repeated under the same key.
   */
  private async refundTrialCheck(payment: PaymentRow): Promise<void> {
    if (payment.providerPaymentId === null || payment.refundedAt !== null) return;
    try {
      const last = (await repo.refundsOf(this.db, payment.id)).filter((r) => r.origin === 'ours').at(-1);
      if (last?.status === 'succeeded') {
        await repo.markRefunded(this.db, payment.id);
        return;
      }
      if (last?.status === 'pending') {
        const remote = await this.provider.getRefund(last.providerRefundId);
        await this.applyRefund(payment, remote, 'ours', last.attempt);
        if (remote.status !== 'canceled') return;
      }
      const attempt = last ? last.attempt + 1 : 0;
      const remote = await this.provider.refund({
        idempotenceKey: attempt === 0 ? `refund:${payment.id}` : `refund:${payment.id}:${attempt}`,
        providerPaymentId: payment.providerPaymentId,
        amountKopecks: payment.amountKopecks,
        description: 'Trial card check refund',
      });
      await this.applyRefund(payment, remote, 'ours', attempt);
      if (remote.status !== 'succeeded') {
        this.log.warn(
          { paymentId: payment.id, refundId: remote.id, status: remote.status, reason: remote.cancellationReason },
          'trial card check refund not succeeded yet; followed by the reconciler',
        );
      }
    } catch (error) {
      this.log.warn({ err: error, paymentId: payment.id }, 'trial card check refund failed; retried later');
    }
  }

  /**
   * A `refund.*` notification: only the refund's id is taken from it; the refund is re-read
   * from the provider, and its `payment_id` names the payment.
   */
  private async refundNotified(providerRefundId: string): Promise<void> {
    let remote: ProviderRefund;
    try {
      remote = await this.provider.getRefund(providerRefundId);
    } catch (error) {
      if (error instanceof PaymentProviderError && error.kind === 'not_found') {
        this.log.warn({ providerRefundId }, 'notification for a refund the provider does not know: ignored');
        return;
      }
      throw error;
    }
    const payment = await repo.findByProviderId(this.db, remote.paymentId);
    if (!payment) {
      this.log.warn({ providerRefundId, providerPaymentId: remote.paymentId }, 'refund of an unknown payment ignored');
      return;
    }
    const ours = (await repo.refundsOf(this.db, payment.id)).find((r) => r.providerRefundId === remote.id);
    await this.applyRefund(payment, remote, ours?.origin ?? 'provider', ours?.attempt ?? 0);
  }

  /**
   * Records a refund's state and, once it has succeeded, settles it once: the tokens the
   * refunded amount paid for are taken back with a ledger row, as far as the balance allows;
   * the rest (already spent) stays recorded on the refund for the operator. A card check
   * bought nothing, so its refund takes nothing.
   */
  private async applyRefund(
    payment: PaymentRow,
    remote: ProviderRefund,
    origin: 'ours' | 'provider',
    attempt: number,
  ): Promise<void> {
    if (remote.paymentId !== payment.providerPaymentId) {
      throw new Error(`payment ${payment.id}: refund ${remote.id} is for ${remote.paymentId}`);
    }
    await repo.upsertRefund(this.db, {
      paymentId: payment.id,
      userId: payment.userId,
      providerRefundId: remote.id,
      origin,
      attempt,
      status: remote.status,
      amountKopecks: remote.amountKopecks,
      cancellationReason: remote.cancellationReason,
    });
    if (remote.status !== 'succeeded') return;
    if (payment.purpose === 'trial_verification') {
      await repo.markRefunded(this.db, payment.id);
      await this.db.transaction((tx) => repo.claimRefundSettlement(tx, remote.id));
      return;
    }
    let current: PaymentRow = payment;
    if (current.creditedAt === null) current = (await this.refresh(current)) ?? current;
    const paid = current;
    if (paid.creditedAt === null) {
      this.log.error(
        { paymentId: paid.id, refundId: remote.id },
        'refund of a payment never credited: nothing to take',
      );
    }
    const due =
      paid.creditedAt === null || paid.amountKopecks <= 0
        ? 0
        : Math.min(paid.tokensAmount, Math.floor((paid.tokensAmount * remote.amountKopecks) / paid.amountKopecks));
    await this.db.transaction(async (tx) => {
      const claimed = await repo.claimRefundSettlement(tx, remote.id);
      if (!claimed || due <= 0) return;
      const balance = await repo.lockBalance(tx, paid.userId);
      const taken = Math.min(due, balance);
      if (taken > 0) {
        await this.ledger.charge(
          {
            userId: paid.userId,
            amount: taken,
            reason: 'payment_refund',
            reference: `payment:${paid.id}`,
            idempotencyKey: `payment_refund:${remote.id}`,
          },
          () => 'refund take-back exceeds the balance',
          tx,
        );
      }
      await repo.setRefundTokens(tx, claimed.id, taken, due - taken);
      if (due > taken) {
        this.log.warn(
          { paymentId: paid.id, refundId: remote.id, userId: paid.userId, due, taken, unrecovered: due - taken },
          'refunded payment: tokens already spent could not be taken back (npm run admin -- refunds)',
        );
      }
    });
  }

  // --- subscription reads and cancel ----------------------------------------------------

  async subscription(userId: number): Promise<Subscription | null> {
    const sub = await repo.findSubscription(this.db, userId);
    if (!sub || sub.status === 'incomplete' || sub.endedAt !== null) return null;
    const used = sub.periodLedgerId === null ? 0 : await repo.spentSince(this.db, userId, sub.periodLedgerId);
    return toSubscription(sub, Math.min(used, sub.periodTokens));
  }

  /** Stops renewal: the subscription stays usable until its period ends. */
  async cancel(userId: number): Promise<Subscription> {
    const result = await this.db.transaction(async (tx) => {
      const found = await repo.findSubscription(tx, userId);
      const sub = found ? await repo.lockSubscription(tx, found.id) : undefined;
      if (!sub || sub.status === 'incomplete' || sub.endedAt !== null) return undefined;
      if (sub.cancelAtPeriodEnd) return sub;
      const updated = await repo.updateSubscription(tx, sub.id, { cancelAtPeriodEnd: true, canceledAt: new Date() });
      await this.syncUser(tx, updated);
      return updated;
    });
    if (!result) throw new AppError('NOT_FOUND', 'No active subscription');
    const used = result.periodLedgerId === null ? 0 : await repo.spentSince(this.db, userId, result.periodLedgerId);
    return toSubscription(result, Math.min(used, result.periodTokens));
  }

  // --- lists --------------------------------------------------------------------------------

  async history(userId: number, page: number, limit: number): Promise<PaymentHistory> {
    const { rows, total } = await repo.listPayments(this.db, userId, page, limit);
    const refunds = await repo.refundsOfPayments(
      this.db,
      rows.map((row) => row.id),
    );
    return {
      payments: rows.map((row) => ({
        id: row.id,
        createdAt: row.createdAt.toISOString(),
        packageType: row.packageType,
        description: row.description,
        tokensAmount: row.tokensAmount,
        amount: formatRub(row.amountKopecks),
        currency: 'RUB' as const,
        status: row.status,
        refund: refundState(refunds.filter((r) => r.paymentId === row.id)),
      })),
      pagination: paginationOf(page, limit, total),
    };
  }

  async ledgerPage(userId: number, page: number, limit: number): Promise<LedgerPage> {
    const { rows, total } = await repo.listLedger(this.db, userId, page, limit);
    return { entries: rows.map(toLedgerEntry), pagination: paginationOf(page, limit, total) };
  }

  // --- background work ----------------------------------------------------------------------

  /**
   * Re-reads payments left pending for a while, closes those the provider never decided,
   * and retries trial-check refunds. Claims rows so instances share the work.
   */
  async reconcile(now = new Date()): Promise<{ checked: number; expired: number }> {
    const olderThan = new Date(now.getTime() - this.options.recheckAfterMs);
    const claimed = await repo.claimPending(this.db, now, olderThan, this.leaseFrom(now), 20);
    let expired = 0;
    for (const row of claimed) {
      try {
        const current = row.providerPaymentId === null ? row : await this.refresh(row, now);
        const tooOld = now.getTime() - row.createdAt.getTime() >= this.options.expireAfterMs;
        if (current?.status === 'pending' && tooOld) {
          if (await repo.markCanceled(this.db, row.id, 'expired')) expired += 1;
        }
      } catch (error) {
        this.log.warn({ err: error, paymentId: row.id }, 'pending payment could not be re-read');
      } finally {
        await repo.releasePaymentLease(this.db, row.id);
      }
    }
    for (const payment of await repo.unrefundedTrialChecks(this.db, 20)) await this.refundTrialCheck(payment);
    return { checked: claimed.length, expired };
  }

  /**
   * Charges every subscription whose period has ended, once per period across instances:
   * a row is claimed (SKIP LOCKED plus a lease), the period's payment is written once per
   * (subscription, period, attempt), and the provider's Idempotence-Key is that payment's id.
   */
  async renew(now = new Date()): Promise<{ renewed: number; failed: number; ended: number }> {
    const claimed = await repo.claimDueSubscriptions(this.db, now, this.leaseFrom(now), 20);
    const counts = { renewed: 0, failed: 0, ended: 0 };
    for (const sub of claimed) {
      try {
        // The heartbeat: this row stays ours while it is worked on (same clock as the claim).
        await repo.extendSubscriptionLease(this.db, sub.id, this.leaseFrom(now));
        if (sub.cancelAtPeriodEnd || sub.paymentMethodId === null) {
          await this.db.transaction(async (tx) => {
            const locked = await repo.lockSubscription(tx, sub.id);
            if (locked && locked.status !== 'cancelled') await this.end(tx, locked, now);
          });
          counts.ended += 1;
          continue;
        }
        const outcome = await this.chargeRenewal(sub, now);
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

  private async chargeRenewal(sub: SubscriptionRow, now: Date): Promise<'credited' | 'canceled' | 'none'> {
    const plan = PLANS[sub.plan];
    const user = { id: sub.userId };
    let payment = await repo.insertRenewalOnce(this.db, {
      id: randomUUID(),
      userId: user.id,
      packageType: sub.plan,
      purpose: 'renewal',
      subscriptionId: sub.id,
      period: sub.period + 1,
      attempt: sub.failedAttempts,
      tokensAmount: plan.tokensPerMonth,
      amountKopecks: plan.priceKopecks ?? 0,
      description: `${plan.name} subscription renewal`,
      provider: this.provider.kind,
    });
    let remote: ProviderPayment;
    if (payment.providerPaymentId === null) {
      try {
        remote = await this.provider.createPayment({
          idempotenceKey: `payment:${payment.id}`,
          amountKopecks: payment.amountKopecks,
          description: payment.description,
          metadata: { paymentId: payment.id, userId: String(user.id) },
          paymentMethodId: sub.paymentMethodId ?? undefined,
          customerEmail: await this.emailOf(user.id),
        });
      } catch (error) {
        // A 4xx (e.g. 403: autopayments not enabled for the shop) is the provider's final answer
        // to this request: the attempt failed. The next one, after the retry interval, is a new
        // payment row and so a new Idempotence-Key. Unknown results (5xx, timeouts) are retried
        // with the same key on the next run.
        if (!(error instanceof PaymentProviderError) || error.kind === 'unavailable') throw error;
        this.log.error(
          {
            subscriptionId: sub.id,
            paymentId: payment.id,
            status: error.status,
            code: error.code,
            description: error.description,
            parameter: error.parameter,
          },
          'renewal charge refused by the payment provider: counted as a failed attempt',
        );
        const refused = await repo.markCanceled(this.db, payment.id, error.code ?? 'refused');
        if (refused) await this.renewalFailed(refused, now);
        return 'canceled';
      }
      await repo.setProviderPayment(this.db, payment.id, remote.id, null);
      payment = { ...payment, providerPaymentId: remote.id };
    } else {
      remote = await this.provider.getPayment(payment.providerPaymentId);
    }
    return this.settle(payment, remote, now);
  }

  private async emailOf(userId: number): Promise<string | undefined> {
    return repo.emailOf(this.db, userId);
  }

  private leaseFrom(now: Date): Date {
    return new Date(now.getTime() + this.options.leaseMs);
  }

  // --- creating ---------------------------------------------------------------------------

  private returnPathOf(returnUrl: string | undefined): string {
    if (returnUrl === undefined) return RETURN_PATH_DEFAULT;
    const url = sameOriginUrl(returnUrl, this.options.appUrl);
    if (!url) {
      throw new AppError('VALIDATION_ERROR', 'returnUrl must be an address on this site', {
        details: { field: 'returnUrl' },
      });
    }
    return url.pathname;
  }

  private async open(
    user: PayingUser,
    p: Pick<
      repo.NewPayment,
      'packageType' | 'purpose' | 'subscriptionId' | 'tokensAmount' | 'amountKopecks' | 'description' | 'returnPath'
    > & { savePaymentMethod?: boolean },
  ): Promise<CreatePaymentResponse> {
    const { savePaymentMethod, ...columns } = p;
    const row = await repo.insertPayment(this.db, {
      id: randomUUID(),
      userId: user.id,
      provider: this.provider.kind,
      ...columns,
    });
    return this.createAtProvider(user, row, savePaymentMethod);
  }

  /** Creates our payment at the provider; the key is our id, so a repeat gives the same payment. */
  private async createAtProvider(
    user: PayingUser,
    row: PaymentRow,
    savePaymentMethod: boolean | undefined,
  ): Promise<CreatePaymentResponse> {
    const id = row.id;
    let remote: ProviderPayment;
    try {
      remote = await this.provider.createPayment({
        idempotenceKey: `payment:${id}`,
        amountKopecks: row.amountKopecks,
        description: row.description,
        returnUrl: `${this.options.appUrl}/api/payments/${id}/return`,
        metadata: { paymentId: id, userId: String(user.id) },
        savePaymentMethod,
        customerEmail: user.email,
      });
    } catch (error) {
      await repo.markCanceled(this.db, id, 'provider_error');
      const cause = error instanceof PaymentProviderError ? error : undefined;
      throw new AppError('PAYMENT_PROVIDER_ERROR', undefined, { cause: cause ?? error });
    }
    if (!remote.confirmationUrl) {
      await repo.markCanceled(this.db, id, 'provider_error');
      throw new AppError('PAYMENT_PROVIDER_ERROR', undefined, { cause: new Error('no confirmation_url') });
    }
    await repo.setProviderPayment(this.db, id, remote.id, remote.confirmationUrl);
    return {
      paymentId: id,
      confirmationUrl: remote.confirmationUrl,
      amount: formatRub(row.amountKopecks),
      currency: 'RUB',
    };
  }
}

/** The history's view of a payment's refunds: the newest one's state, and what came back. */
function refundState(refunds: repo.RefundRow[]): PaymentHistoryItem['refund'] {
  const newest = refunds.at(-1);
  if (!newest) return null;
  const back = refunds.filter((r) => r.status === 'succeeded').reduce((sum, r) => sum + r.amountKopecks, 0);
  return { status: newest.status, amount: formatRub(back > 0 ? back : newest.amountKopecks) };
}

function toPayment(row: PaymentRow): Payment {
  return {
    id: row.id,
    status: row.status,
    packageType: row.packageType,
    tokensAmount: row.tokensAmount,
    amount: formatRub(row.amountKopecks),
    currency: 'RUB',
    createdAt: row.createdAt.toISOString(),
    cancellationReason: row.cancellationReason,
    credited: row.creditedAt !== null,
  };
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
