/**
 * A card payment provider as the billing service sees it: YooKassa's model (PROVIDERS.md),
 * which the sandbox imitates. Amounts are kopecks here and two-decimal strings on the wire.
 */

export type ProviderPaymentStatus = 'pending' | 'waiting_for_capture' | 'succeeded' | 'canceled';

export interface ProviderPayment {
  id: string;
  status: ProviderPaymentStatus;
  amountKopecks: number;
  /** Where the browser confirms the payment; null for a charge of a saved method. */
  confirmationUrl: string | null;
  /** The method, and whether the provider saved it for later charges. */
  paymentMethod: { id: string; saved: boolean } | null;
  cancellationReason: string | null;
  metadata: Record<string, string>;
}

export interface CreatePaymentRequest {
  /** The same key for every retry of one intended payment. */
  idempotenceKey: string;
  amountKopecks: number;
  description: string;
  /** Where the provider sends the browser back (absent for a charge of a saved method). */
  returnUrl?: string;
  metadata: Record<string, string>;
  savePaymentMethod?: boolean;
  /** Charge a saved method without the customer (a renewal). */
  paymentMethodId?: string;
  /** The customer's e-mail for a 54-FZ receipt (used only when receipts are on). */
  customerEmail?: string;
}

export interface RefundRequest {
  idempotenceKey: string;
  providerPaymentId: string;
  amountKopecks: number;
  description: string;
}

export type ProviderRefundStatus = 'pending' | 'succeeded' | 'canceled';

/** A refund as the provider reports it (YooKassa's refund object). */
export interface ProviderRefund {
  id: string;
  /** The provider's id of the refunded payment. */
  paymentId: string;
  status: ProviderRefundStatus;
  amountKopecks: number;
  cancellationReason: string | null;
}

export interface PaymentProvider {
  readonly kind: 'yookassa' | 'sandbox';
  createPayment(request: CreatePaymentRequest): Promise<ProviderPayment>;
  getPayment(providerPaymentId: string): Promise<ProviderPayment>;
  /** Asks for a refund; the answer may still be pending (follow it with getRefund). */
  refund(request: RefundRequest): Promise<ProviderRefund>;
  getRefund(providerRefundId: string): Promise<ProviderRefund>;
}

/** The provider could not be reached or did not decide: the result is unknown, retry later. */
export class PaymentProviderError extends Error {
  constructor(
    message: string,
    readonly kind: 'unavailable' | 'refused' | 'not_found',
    options?: { cause?: unknown; status?: number; code?: string; description?: string; parameter?: string },
  ) {
    super(message, { cause: options?.cause });
    this.name = 'PaymentProviderError';
    this.status = options?.status;
    this.code = options?.code;
    this.description = options?.description;
    this.parameter = options?.parameter;
  }

  readonly status: number | undefined;
  /** The provider's own words for a refusal (YooKassa's error body: code, description, parameter). */
  readonly code: string | undefined;
  readonly description: string | undefined;
  readonly parameter: string | undefined;
}
