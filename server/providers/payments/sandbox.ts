import { randomUUID } from 'node:crypto';
import { pathOf } from '../../../src/domain/api/contract';
import { sandboxCheckoutPageEndpoint } from '../../../src/domain/api/payments';
import type { SandboxDeclineReason } from '../../../src/domain/billing';
import type { Db } from '../../db/client';
import * as repo from './sandbox-repository';
import {
  PaymentProviderError,
  type CreatePaymentRequest,
  type PaymentProvider,
  type ProviderPayment,
  type ProviderRefund,
  type RefundRequest,
} from './types';

/**
 * The offline payment provider: it keeps payments in the database as YooKassa keeps them
 * on its side, shows its own checkout page (`/sandbox/checkout/{id}`, marked as a test),
 * and after Pay or Decline notifies the billing service the way a webhook would and sends
 * the browser back to the return address, so the very same settlement code runs.
 * A saved method is charged at once (renewals), as a test shop's autopayment is.
 */
export class SandboxProvider implements PaymentProvider {
  readonly kind = 'sandbox' as const;

  constructor(
    private readonly db: Db,
    private readonly appUrl: string,
  ) {}

  checkoutUrl(id: string): string {
    return `${this.appUrl}${pathOf(sandboxCheckoutPageEndpoint, { id })}`;
  }

  async createPayment(request: CreatePaymentRequest): Promise<ProviderPayment> {
    const id = `sb_${randomUUID()}`;
    const recurring = request.paymentMethodId !== undefined;
    const row = await repo.insertOnce(this.db, {
      id,
      idempotenceKey: request.idempotenceKey,
      status: recurring ? 'succeeded' : 'pending',
      amountKopecks: request.amountKopecks,
      description: request.description.slice(0, 128),
      returnUrl: request.returnUrl ?? null,
      metadata: JSON.stringify(request.metadata),
      savePaymentMethod: request.savePaymentMethod === true || recurring,
      paymentMethodId: request.paymentMethodId ?? null,
    });
    return this.toPayment(row);
  }

  async getPayment(providerPaymentId: string): Promise<ProviderPayment> {
    const row = await repo.findById(this.db, providerPaymentId);
    if (!row) throw new PaymentProviderError(`sandbox payment ${providerPaymentId} not found`, 'not_found');
    return this.toPayment(row);
  }

  /** A sandbox refund succeeds at once (it has no bank to wait for); its id is its key's. */
  async refund(request: RefundRequest): Promise<ProviderRefund> {
    const ok = await repo.addRefund(this.db, request.providerPaymentId, request.amountKopecks);
    if (!ok) throw new PaymentProviderError('sandbox refund refused', 'refused');
    return {
      id: `sbr_${request.idempotenceKey}`,
      paymentId: request.providerPaymentId,
      status: 'succeeded',
      amountKopecks: request.amountKopecks,
      cancellationReason: null,
    };
  }

  /** Never needed: the sandbox answers every refund as succeeded and sends no refund notifications. */
  async getRefund(providerRefundId: string): Promise<ProviderRefund> {
    throw new PaymentProviderError(`sandbox refund ${providerRefundId}: refunds are final at once`, 'not_found');
  }

  /** The customer's choice on the checkout page; undefined when the payment was already decided. */
  async decide(
    id: string,
    choice: { action: 'pay' } | { action: 'decline'; reason: SandboxDeclineReason },
  ): Promise<repo.SandboxPaymentRow | undefined> {
    return repo.decide(
      this.db,
      id,
      choice.action === 'pay'
        ? { status: 'succeeded', paymentMethodId: `sbm_${randomUUID()}` }
        : { status: 'canceled', reason: choice.reason },
    );
  }

  find(id: string): Promise<repo.SandboxPaymentRow | undefined> {
    return repo.findById(this.db, id);
  }

  private toPayment(row: repo.SandboxPaymentRow): ProviderPayment {
    return {
      id: row.id,
      status: row.status,
      amountKopecks: row.amountKopecks,
      confirmationUrl: row.returnUrl === null ? null : this.checkoutUrl(row.id),
      paymentMethod: row.paymentMethodId ? { id: row.paymentMethodId, saved: row.savePaymentMethod } : null,
      cancellationReason: row.cancellationReason,
      metadata: JSON.parse(row.metadata) as Record<string, string>,
    };
  }
}
