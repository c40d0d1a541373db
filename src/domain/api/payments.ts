import { z } from 'zod';
import {
  billingPageQuerySchema,
  createPaymentReplySchema,
  createSubscriptionPaymentBodySchema,
  createTokenPaymentBodySchema,
  ledgerPageSchema,
  paymentHistorySchema,
  paymentIdParamsSchema,
  paymentSchema,
  plansResponseSchema,
  SANDBOX_DECLINE_REASONS,
  subscriptionResponseSchema,
  subscriptionSchema,
} from '../billing';
import {
  CROSS_SITE,
  endpoint,
  JSON_BODY_REFUSALS,
  ok,
  rawReply,
  redirectReply,
  refusals,
  SIGNED_IN_REFUSALS,
} from './contract';

/**
 * Token purchases, subscriptions and the ledger (SPEC section 7's /api/payments calls), the
 * provider's way back and its notifications, and the sandbox's checkout page that stands in
 * for YooKassa's without credentials.
 */

const tags = ['Payments'];

/** No body reads as an empty one: its missing fields are refused with their own messages. */
function orEmpty<T extends z.ZodType>(schema: T) {
  return z.preprocess((body) => body ?? {}, schema);
}

export const plansEndpoint = endpoint({
  method: 'GET',
  path: '/api/payments/plans',
  tags,
  summary: 'The token price and the subscription plans',
  replies: { 200: ok(plansResponseSchema), ...refusals(429, 500) },
});

export const createTokenPaymentEndpoint = endpoint({
  method: 'POST',
  path: '/api/payments/create-token-payment',
  tags,
  summary: 'Buy tokens: opens a payment and answers the address to confirm it at',
  body: orEmpty(createTokenPaymentBodySchema),
  replies: {
    200: createPaymentReplySchema.loose(),
    // 502: the provider refused or could not be reached; nothing was charged.
    ...refusals(...JSON_BODY_REFUSALS, CROSS_SITE, ...SIGNED_IN_REFUSALS, 502),
  },
});

export const createSubscriptionPaymentEndpoint = endpoint({
  method: 'POST',
  path: '/api/payments/create-subscription-payment',
  tags,
  summary: "Subscribe: the plan's first payment (pro's first: a 1 RUB card check, refunded)",
  body: orEmpty(createSubscriptionPaymentBodySchema),
  replies: {
    200: createPaymentReplySchema.loose(),
    // 409: a subscription is already running (SUBSCRIPTION_EXISTS).
    ...refusals(...JSON_BODY_REFUSALS, CROSS_SITE, 409, ...SIGNED_IN_REFUSALS, 502),
  },
});

export const paymentHistoryEndpoint = endpoint({
  method: 'GET',
  path: '/api/payments/history',
  tags,
  summary: "The user's payments, newest first",
  query: billingPageQuerySchema,
  replies: { 200: ok(paymentHistorySchema), ...refusals(400, ...SIGNED_IN_REFUSALS) },
});

export const subscriptionEndpoint = endpoint({
  method: 'GET',
  path: '/api/payments/subscription',
  tags,
  summary: "The user's subscription, or null",
  replies: { 200: ok(subscriptionResponseSchema), ...refusals(...SIGNED_IN_REFUSALS) },
});

export const cancelSubscriptionEndpoint = endpoint({
  method: 'POST',
  path: '/api/payments/cancel-subscription',
  tags,
  summary: 'Stop renewal: the subscription stays until its period ends',
  // 404: no active subscription.
  replies: { 200: ok(subscriptionSchema), ...refusals(CROSS_SITE, 404, ...SIGNED_IN_REFUSALS) },
});

export const ledgerEndpoint = endpoint({
  method: 'GET',
  path: '/api/ledger',
  tags,
  summary: "The user's token ledger, newest first: each row's reason as a code and values",
  query: billingPageQuerySchema,
  replies: { 200: ok(ledgerPageSchema), ...refusals(400, ...SIGNED_IN_REFUSALS) },
});

export const paymentEndpoint = endpoint({
  method: 'GET',
  path: '/api/payments/:id',
  tags,
  summary: "One of the user's payments",
  description: 'Another user’s payment, and anything that is not a payment id, answers 404.',
  params: paymentIdParamsSchema,
  replies: { 200: ok(paymentSchema), ...refusals(404, ...SIGNED_IN_REFUSALS) },
});

export const paymentReturnEndpoint = endpoint({
  method: 'GET',
  path: '/api/payments/:id/return',
  tags,
  summary: "The browser back from the provider: settles the payment, then goes to the app's status page",
  description: 'Without a session it goes to sign in first and comes back here.',
  params: paymentIdParamsSchema,
  replies: { 302: redirectReply, ...refusals(404, 429, 500) },
});

const notificationExample = { type: 'notification', event: 'payment.succeeded', object: { id: '…' } };

export const paymentWebhookEndpoint = endpoint({
  method: 'POST',
  path: '/api/payments/webhook',
  tags,
  summary: "YooKassa's notifications, from YOOKASSA_WEBHOOK_IPS only; the payment is re-read from YooKassa",
  description:
    'Any other sender answers 403. Junk from an allowed sender answers 200 and is ignored; 503 when the ' +
    'payment could not be re-read, so that YooKassa delivers it again.',
  // Read as text whatever its type: junk is answered 200 and ignored, never refused.
  body: z
    .string()
    .optional()
    .describe(`A YooKassa notification: ${JSON.stringify(notificationExample)}`),
  replies: { 200: z.looseObject({ success: z.literal(true) }), ...refusals(403, 413, 429, 503) },
});

// --- The sandbox's checkout page (YooKassa's stand-in without credentials) ---------------

const sandboxTags = ['Sandbox'];

/** Any id: one that is not a sandbox payment's answers 404 like an unknown one. */
const checkoutParams = z.object({ id: z.string().describe('The sandbox payment id (sb_…)') });

export const sandboxCheckoutPageEndpoint = endpoint({
  method: 'GET',
  path: '/sandbox/checkout/:id',
  tags: sandboxTags,
  summary: "The sandbox's checkout page (YooKassa's stand-in), for the payer's session only",
  description: 'Without a session it goes to sign in first and comes back; anyone else’s session gets 404.',
  params: checkoutParams,
  replies: { 200: rawReply('text/html', 'The checkout page'), 302: redirectReply, ...refusals(404, 429, 500) },
});

export const sandboxDecisionEndpoint = endpoint({
  method: 'POST',
  path: '/sandbox/checkout/:id',
  tags: sandboxTags,
  summary: 'Pay or decline a sandbox payment, then back to the app',
  params: checkoutParams,
  consumes: ['application/x-www-form-urlencoded'],
  /**
   * The checkout form's fields. Described, not enforced: anything else is refused by the
   * route (VALIDATION_ERROR), as it always was.
   */
  body: z
    .unknown()
    .describe(`Form fields: action (pay or decline); with decline, reason (${SANDBOX_DECLINE_REASONS.join(', ')})`),
  replies: { 303: redirectReply, ...refusals(400, 401, CROSS_SITE, 404, 413, 429, 500) },
});
