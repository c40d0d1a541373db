import { z } from 'zod';
import {
  createPaymentResponseSchema,
  ledgerPageSchema,
  paymentHistorySchema,
  paymentSchema,
  plansResponseSchema,
  subscriptionResponseSchema,
  subscriptionSchema,
  type CreatePaymentResponse,
  type LedgerPage,
  type Payment,
  type PaymentHistory,
  type Plan,
  type Subscription,
  type SubscriptionPlanId,
} from '../domain/billing';
import { request, unwrap } from './client';

/** Where the provider sends the browser back to (through the server's return address). */
export function paymentReturnUrl(): string {
  return `${globalThis.location.origin}/payment-status`;
}

/**
 * SPEC section 7: the confirmation address is read from `data` or from the top level of
 * the reply, whichever carries it.
 */
const createdReplySchema = z.unknown().transform((body, ctx) => {
  const data = unwrap(body);
  const top = body !== null && typeof body === 'object' ? (body as Record<string, unknown>) : {};
  const inner = data !== null && typeof data === 'object' ? (data as Record<string, unknown>) : {};
  const parsed = createPaymentResponseSchema.safeParse({
    ...inner,
    confirmationUrl: inner.confirmationUrl ?? top.confirmationUrl,
  });
  if (!parsed.success) {
    ctx.addIssue({ code: 'custom', message: 'malformed payment reply' });
    return z.NEVER;
  }
  return parsed.data;
});

/** request() unwraps `data`; this reply is needed whole, so it is handed over wrapped. */
function createPayment(path: string, body: unknown): Promise<CreatePaymentResponse> {
  return request(async (w) => ({ data: await w.url(path).post(body).json() }), createdReplySchema);
}

export function createTokenPayment(
  tokensAmount: number,
  returnUrl = paymentReturnUrl(),
): Promise<CreatePaymentResponse> {
  return createPayment('/api/payments/create-token-payment', { tokensAmount, returnUrl });
}

export function createSubscriptionPayment(
  plan: SubscriptionPlanId,
  returnUrl = paymentReturnUrl(),
): Promise<CreatePaymentResponse> {
  return createPayment('/api/payments/create-subscription-payment', { plan, returnUrl });
}

export async function fetchPlans(): Promise<Plan[]> {
  const reply = await request((w) => w.get('/api/payments/plans').json(), plansResponseSchema);
  return reply.plans;
}

export function fetchPayment(paymentId: string): Promise<Payment> {
  return request((w) => w.get(`/api/payments/${encodeURIComponent(paymentId)}`).json(), paymentSchema);
}

export function fetchPaymentHistory(page: number, limit: number): Promise<PaymentHistory> {
  return request((w) => w.get(`/api/payments/history?page=${page}&limit=${limit}`).json(), paymentHistorySchema);
}

/** SPEC section 3: `{success: true, data: null}` when the user has no subscription. */
export function fetchSubscription(): Promise<Subscription | null> {
  return request(
    async (w) => ({ data: dataOrNull(await w.get('/api/payments/subscription').json()) }),
    subscriptionResponseSchema,
  );
}

export function cancelSubscription(): Promise<Subscription> {
  return request((w) => w.post({}, '/api/payments/cancel-subscription').json(), subscriptionSchema);
}

export function fetchLedger(page: number, limit: number): Promise<LedgerPage> {
  return request((w) => w.get(`/api/ledger?page=${page}&limit=${limit}`).json(), ledgerPageSchema);
}

/** unwrap() hands back the envelope when `data` is null; here null means "none". */
function dataOrNull(body: unknown): unknown {
  if (body !== null && typeof body === 'object' && 'data' in body) return body.data ?? null;
  return body;
}
