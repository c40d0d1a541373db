import { randomUUID } from 'node:crypto';
import {
  type CreateSubscriptionPaymentBody,
  type CreateTokenPaymentBody,
  formatRub,
  PLAN_LIST,
  PLANS,
  type CreatePaymentResponse,
  type LedgerPage,
  type Payment,
  type PaymentHistory,
  type PaymentHistoryItem,
  type PlansResponse,
  type ReturnStatus,
} from '../../src/domain/billing';
import { paginationOf } from '../../src/domain/image-record';
import type { Db, Executor } from '../db/client';
import { AppError } from '../errors';
import type { LedgerService } from '../ledger/service';
import { PaymentProviderError, type PaymentProvider, type ProviderPayment } from '../providers/payments/types';
import { toLedgerEntry } from './ledger-entries';
import { Checkout, type PayingUser } from './checkout';
import { Refunds } from './refunds';
import { Subscriptions } from './subscriptions';
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

/**
 * Payments: opened by Checkout (server/payments/checkout.ts), settled here. Our payment row
 * is written before the provider's, and its id keys the provider's Idempotence-Key and the ledger row that credits it. Whatever learns
 * of a decision first (the return, a webhook, the reconciler, the renewal job) settles it
 * through `settle`, which marks the row paid and writes its ledger rows in one transaction,
 * once; every later caller finds it settled and changes nothing.
 */
export class PaymentsService {
  /** What a settled payment means for its subscription (server/payments/subscriptions.ts). */
  readonly subscriptions: Subscriptions;
  private readonly refunds: Refunds;
  private readonly checkout: Checkout;

  constructor(
    private readonly db: Db,
    private readonly ledger: LedgerService,
    readonly provider: PaymentProvider,
    private readonly options: PaymentsOptions,
    private readonly log: { warn(obj: object, msg: string): void; error(obj: object, msg: string): void },
  ) {
    this.subscriptions = new Subscriptions(db, ledger, options, log);
    this.refunds = new Refunds(db, ledger, provider, log, (row) => this.refresh(row));
    this.checkout = new Checkout(db, provider, options, log, (row) => this.refresh(row));
  }

  plans(): PlansResponse {
    return { plans: [...PLAN_LIST] };
  }

  createTokenPayment(user: PayingUser, body: CreateTokenPaymentBody): Promise<CreatePaymentResponse> {
    return this.checkout.createTokenPayment(user, body);
  }

  createSubscriptionPayment(user: PayingUser, body: CreateSubscriptionPaymentBody): Promise<CreatePaymentResponse> {
    return this.checkout.createSubscriptionPayment(user, body);
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
    if (event.startsWith('refund.')) return this.refunds.refundNotified(providerObjectId);
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
      if (settled?.purpose === 'trial_verification') await this.refunds.refundTrialCheck(settled);
      return settled ? 'credited' : 'none';
    }
    if (remote.status === 'canceled') {
      const canceled = await repo.markCanceled(this.db, row.id, remote.cancellationReason ?? 'canceled');
      if (canceled?.purpose === 'renewal') await this.subscriptions.renewalFailed(canceled, now);
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
        await this.subscriptions.start(tx, payment, now);
        return;
      case 'renewal':
        await this.subscriptions.renewed(tx, payment, now);
        return;
    }
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
    const claimed = await repo.claimPending(this.db, olderThan, this.options.leaseMs, 20);
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
    for (const payment of await repo.unrefundedTrialChecks(this.db, 20)) await this.refunds.refundTrialCheck(payment);
    return { checked: claimed.length, expired };
  }

  /** Charges every subscription whose period has ended (Subscriptions.renew), once per period. */
  async renew(now = new Date()): Promise<{ renewed: number; failed: number; ended: number }> {
    return this.subscriptions.renew(now, (sub, at) => this.chargeRenewal(sub, at));
  }

  /** A renewal's payment: written once per (subscription, period, attempt), then settled. */
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
        if (refused) await this.subscriptions.renewalFailed(refused, now);
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
