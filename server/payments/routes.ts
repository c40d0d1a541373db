import { BlockList, isIP } from 'node:net';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import {
  createPaymentReplySchema,
  createSubscriptionPaymentBodySchema,
  createTokenPaymentBodySchema,
  HISTORY_DEFAULT_LIMIT,
  HISTORY_MAX_LIMIT,
  ledgerPageSchema,
  paymentHistorySchema,
  paymentSchema,
  plansResponseSchema,
  subscriptionResponseSchema,
  subscriptionSchema,
} from '../../src/domain/billing';
import { plainDecimalInteger } from '../../src/domain/numbers';
import type { AuthService } from '../auth/service';
import { currentUser, optionalUser, requireUser, signInAndBack } from '../auth/session';
import { AppError } from '../errors';
import { ok, redirect } from '../http/schemas';
import type { PaymentsService } from './service';

const pageMessage = `page must be a whole number from 1; limit from 1 to ${HISTORY_MAX_LIMIT}`;
// Plain digits only, as README says and the gallery does: 0x10, 1e3 and " 2" are refused.
const pageQuerySchema = z.object({
  page: plainDecimalInteger({ message: pageMessage, min: 1 }).default(1),
  limit: plainDecimalInteger({ message: pageMessage, min: 1, max: HISTORY_MAX_LIMIT }).default(HISTORY_DEFAULT_LIMIT),
});

const notificationSchema = z.object({
  type: z.literal('notification'),
  event: z.string(),
  object: z.object({ id: z.string().min(1).max(100) }),
});

const notificationExample = { type: 'notification', event: 'payment.succeeded', object: { id: '…' } };

const PAYMENT_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Not a payment id answers like an unknown one: 404, never a 400 that tells ids apart. */
const paymentIdParams = z.object({ id: z.string().describe('The payment id (a UUID)') });

function paymentIdOf(params: { id: string }): string {
  if (!PAYMENT_ID.test(params.id)) throw new AppError('NOT_FOUND');
  return params.id;
}

/** No body reads as an empty one: its missing fields are refused with their own messages. */
function orEmpty<T extends z.ZodType>(schema: T) {
  return z.preprocess((body) => body ?? {}, schema);
}

/** YOOKASSA_WEBHOOK_IPS as a matcher: addresses and CIDR ranges, IPv4 and IPv6. */
export function senderAllowList(spec: string): (address: string) => boolean {
  const list = new BlockList();
  for (const raw of spec.split(',')) {
    const item = raw.trim();
    if (!item) continue;
    const [address = '', prefix] = item.split('/');
    const family = isIP(address) === 6 ? 'ipv6' : 'ipv4';
    if (isIP(address) === 0) throw new Error(`YOOKASSA_WEBHOOK_IPS: not an address: ${item}`);
    if (prefix === undefined) list.addAddress(address, family);
    else list.addSubnet(address, Number(prefix), family);
  }
  return (address: string) => {
    const plain = address.startsWith('::ffff:') && isIP(address.slice(7)) === 4 ? address.slice(7) : address;
    const family = isIP(plain);
    if (family === 0) return false;
    return list.check(plain, family === 6 ? 'ipv6' : 'ipv4');
  };
}

export function paymentRoutes(
  app: FastifyInstance,
  deps: { auth: AuthService; payments: PaymentsService; webhookSenders: string },
): void {
  const { auth, payments } = deps;
  const server = app.withTypeProvider<ZodTypeProvider>();
  // Before validation: an anonymous request is refused as such, whatever its body says.
  const guard = { preValidation: requireUser(auth) };
  const allowed = senderAllowList(deps.webhookSenders);
  const tags = ['Payments'];

  server.get(
    '/api/payments/plans',
    {
      schema: {
        tags,
        summary: 'The token price and the subscription plans',
        response: { 200: ok(plansResponseSchema) },
      },
    },
    async () => ({ success: true as const, data: payments.plans() }),
  );

  server.post(
    '/api/payments/create-token-payment',
    {
      ...guard,
      schema: {
        tags,
        summary: 'Buy tokens: opens a payment and answers the address to confirm it at',
        body: orEmpty(createTokenPaymentBodySchema),
        response: { 200: createPaymentReplySchema.loose() },
      },
    },
    async (request) => {
      const data = await payments.createTokenPayment(currentUser(request), request.body);
      return { success: true as const, data, confirmationUrl: data.confirmationUrl };
    },
  );

  server.post(
    '/api/payments/create-subscription-payment',
    {
      ...guard,
      schema: {
        tags,
        summary: "Subscribe: the plan's first payment (pro's first: a 1 RUB card check, refunded)",
        body: orEmpty(createSubscriptionPaymentBodySchema),
        response: { 200: createPaymentReplySchema.loose() },
      },
    },
    async (request) => {
      const data = await payments.createSubscriptionPayment(currentUser(request), request.body);
      return { success: true as const, data, confirmationUrl: data.confirmationUrl };
    },
  );

  server.get(
    '/api/payments/history',
    {
      ...guard,
      schema: {
        tags,
        summary: "The user's payments, newest first",
        querystring: pageQuerySchema,
        response: { 200: ok(paymentHistorySchema) },
      },
    },
    async (request) => {
      const { page, limit } = request.query;
      return { success: true as const, data: await payments.history(currentUser(request).id, page, limit) };
    },
  );

  server.get(
    '/api/payments/subscription',
    {
      ...guard,
      schema: { tags, summary: "The user's subscription, or null", response: { 200: ok(subscriptionResponseSchema) } },
    },
    async (request) => ({
      success: true as const,
      data: await payments.subscriptions.subscription(currentUser(request).id),
    }),
  );

  server.post(
    '/api/payments/cancel-subscription',
    {
      ...guard,
      schema: {
        tags,
        summary: 'Stop renewal: the subscription stays until its period ends',
        response: { 200: ok(subscriptionSchema) },
      },
    },
    async (request) => ({ success: true as const, data: await payments.subscriptions.cancel(currentUser(request).id) }),
  );

  server.get(
    '/api/ledger',
    {
      ...guard,
      schema: {
        tags,
        summary: "The user's token ledger, newest first: each row's reason as a code and values",
        querystring: pageQuerySchema,
        response: { 200: ok(ledgerPageSchema) },
      },
    },
    async (request) => {
      const { page, limit } = request.query;
      return { success: true as const, data: await payments.ledgerPage(currentUser(request).id, page, limit) };
    },
  );

  server.get(
    '/api/payments/:id',
    {
      ...guard,
      schema: {
        tags,
        summary: "One of the user's payments",
        params: paymentIdParams,
        response: { 200: ok(paymentSchema) },
      },
    },
    async (request) => ({
      success: true as const,
      data: await payments.getPayment(currentUser(request).id, paymentIdOf(request.params)),
    }),
  );

  // The provider sends the browser here, and it may not be the browser that paid (a
  // bank's app opening another one): without a session it signs in and comes back.
  server.get(
    '/api/payments/:id/return',
    {
      schema: {
        tags,
        summary: "The browser back from the provider: settles the payment, then goes to the app's status page",
        params: paymentIdParams,
        response: { 302: redirect },
      },
    },
    async (request, reply) => {
      const id = paymentIdOf(request.params);
      const user = await optionalUser(auth, request);
      if (!user) return reply.redirect(signInAndBack(`/api/payments/${id}/return`), 302);
      const { location } = await payments.returnFromProvider(user.id, id);
      return reply.redirect(location, 302);
    },
  );

  // YooKassa notifications: no signature exists, so the sender's address is checked
  // before the body is even read, and the payment is always re-read from YooKassa. Junk
  // from an allowed sender gets a quiet 200 so it is not redelivered for a day.
  void app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'string', bodyLimit: 64 * 1024 }, (_request, body, done) => {
      done(null, body);
    });
    scope.addHook('onRequest', async (request) => {
      if (!allowed(request.ip)) {
        request.log.warn({ ip: request.ip }, 'payment notification from an address outside the list');
        throw new AppError('FORBIDDEN');
      }
    });
    const webhookAnswer = z.looseObject({
      success: z.boolean(),
      code: z.string().optional(),
      message: z.string().optional(),
    });
    scope.withTypeProvider<ZodTypeProvider>().post(
      '/api/payments/webhook',
      {
        schema: {
          tags,
          summary: "YooKassa's notifications, from YOOKASSA_WEBHOOK_IPS only; the payment is re-read from YooKassa",
          // Read as text whatever its type: junk is answered 200 and ignored, never refused.
          body: z
            .string()
            .optional()
            .describe(`A YooKassa notification: ${JSON.stringify(notificationExample)}`),
          response: { 200: webhookAnswer, 503: webhookAnswer },
        },
      },
      async (request, reply) => {
        let json: unknown;
        try {
          json = JSON.parse(request.body ?? '');
        } catch {
          request.log.warn('payment notification: not JSON, ignored');
          return reply.status(200).send({ success: true });
        }
        const parsed = notificationSchema.safeParse(json);
        if (!parsed.success) {
          request.log.warn('payment notification: unexpected shape, ignored');
          return reply.status(200).send({ success: true });
        }
        try {
          // payment.* carries a payment, refund.succeeded a refund: the service re-reads either.
          await payments.notified(parsed.data.object.id, parsed.data.event);
        } catch (error) {
          // Not settled (the provider could not be asked): a non-200 makes YooKassa deliver again.
          request.log.error({ err: error }, 'payment notification could not be settled');
          return reply.status(503).send({ success: false, code: 'SERVICE_UNAVAILABLE', message: 'retry' });
        }
        return reply.status(200).send({ success: true });
      },
    );
  });
}
