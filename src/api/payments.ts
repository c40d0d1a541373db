import {
  cancelSubscriptionEndpoint,
  createSubscriptionPaymentEndpoint,
  createTokenPaymentEndpoint,
  ledgerEndpoint,
  paymentEndpoint,
  paymentHistoryEndpoint,
  plansEndpoint,
  subscriptionEndpoint,
} from '../domain/api/payments';
import type {
  CreatePaymentResponse,
  LedgerPage,
  Payment,
  PaymentHistory,
  Plan,
  Subscription,
  SubscriptionPlanId,
} from '../domain/billing';
import { call } from './client';

/** Where the provider sends the browser back to (through the server's return address). */
export function paymentReturnUrl(): string {
  return `${globalThis.location.origin}/payment-status`;
}

/** SPEC section 7: the reply's confirmationUrl is where the browser goes next. */
export function createTokenPayment(
  tokensAmount: number,
  returnUrl = paymentReturnUrl(),
): Promise<CreatePaymentResponse> {
  return call(createTokenPaymentEndpoint, { body: { tokensAmount, returnUrl } });
}

export function createSubscriptionPayment(
  plan: SubscriptionPlanId,
  returnUrl = paymentReturnUrl(),
): Promise<CreatePaymentResponse> {
  return call(createSubscriptionPaymentEndpoint, { body: { plan, returnUrl } });
}

export async function fetchPlans(): Promise<Plan[]> {
  const reply = await call(plansEndpoint, {});
  return reply.plans;
}

export function fetchPayment(paymentId: string): Promise<Payment> {
  return call(paymentEndpoint, { params: { id: paymentId } });
}

export function fetchPaymentHistory(page: number, limit: number): Promise<PaymentHistory> {
  return call(paymentHistoryEndpoint, { query: { page, limit } });
}

/** SPEC section 3: `{success: true, data: null}` when the user has no subscription. */
export function fetchSubscription(): Promise<Subscription | null> {
  return call(subscriptionEndpoint, {});
}

export function cancelSubscription(): Promise<Subscription> {
  return call(cancelSubscriptionEndpoint, {});
}

export function fetchLedger(page: number, limit: number): Promise<LedgerPage> {
  return call(ledgerEndpoint, { query: { page, limit } });
}
