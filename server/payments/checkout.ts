import { randomUUID } from 'node:crypto';
import { pathOf } from '../../src/domain/api/contract';
import { paymentReturnEndpoint } from '../../src/domain/api/payments';
import {
  formatRub,
  PLANS,
  priceKopecks,
  SUBSCRIPTION_PERIOD_MONTHS,
  TRIAL_VERIFICATION_KOPECKS,
  type CreatePaymentResponse,
  type CreateSubscriptionPaymentBody,
  type CreateTokenPaymentBody,
} from '../../src/domain/billing';
import { sameOriginUrl } from '../../src/domain/redirect';
import type { Db } from '../db/client';
import { AppError } from '../errors';
import { PaymentProviderError, type PaymentProvider, type ProviderPayment } from '../providers/payments/types';
import * as repo from './repository';
import type { PaymentRow } from './repository';

export interface PayingUser {
  id: number;
  email: string;
}

const RETURN_PATH_DEFAULT = '/payment-status';

/**
 * Opening payments: a token purchase or a subscription's first payment, written as our row
 * first and then created at the provider under our id as its Idempotence-Key, so a repeat
 * gives the same payment. Settling them is PaymentsService's.
 */
export class Checkout {
  constructor(
    private readonly db: Db,
    private readonly provider: PaymentProvider,
    private readonly options: { appUrl: string; recheckAfterMs: number },
    private readonly log: { warn(obj: object, msg: string): void },
    /** Re-reads a payment from the provider and settles it (PaymentsService.refresh). */
    private readonly refresh: (row: PaymentRow) => Promise<PaymentRow | undefined>,
  ) {}

  async createTokenPayment(user: PayingUser, body: CreateTokenPaymentBody): Promise<CreatePaymentResponse> {
    const returnPath = this.returnPathOf(body.returnUrl);
    const tokens = body.tokensAmount;
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
  async createSubscriptionPayment(
    user: PayingUser,
    body: CreateSubscriptionPaymentBody,
  ): Promise<CreatePaymentResponse> {
    const returnPath = this.returnPathOf(body.returnUrl);
    const planId = body.plan;
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
        returnUrl: `${this.options.appUrl}${pathOf(paymentReturnEndpoint, { id })}`,
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
