import type { Db } from '../db/client';
import type { LedgerService } from '../ledger/service';
import { PaymentProviderError, type PaymentProvider, type ProviderRefund } from '../providers/payments/types';
import * as repo from './repository';
import type { PaymentRow } from './repository';

/**
 * Refunds: the trial's 1 RUB card check given back at once and followed until it is, and
 * refunds the provider reports (a refund made in its dashboard), whose tokens are taken back.
 */
export class Refunds {
  constructor(
    private readonly db: Db,
    private readonly ledger: LedgerService,
    private readonly provider: PaymentProvider,
    private readonly log: { warn(obj: object, msg: string): void; error(obj: object, msg: string): void },
    /** Re-reads a payment from the provider and settles it (PaymentsService.refresh). */
    private readonly refresh: (row: PaymentRow) => Promise<PaymentRow | undefined>,
  ) {}

  /**
   * The 1 RUB card check goes back at once, and is followed until the provider says the refund
   * succeeded: a pending refund is re-read (by the reconciler), a canceled one is asked for
   * again under a new Idempotence-Key, a call that failed is repeated under the same key.
   */
  async refundTrialCheck(payment: PaymentRow): Promise<void> {
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
  async refundNotified(providerRefundId: string): Promise<void> {
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
}
