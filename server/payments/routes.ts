import { BlockList, isIP } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { HISTORY_DEFAULT_LIMIT, HISTORY_MAX_LIMIT } from '../../src/domain/billing';
import { plainDecimalInteger } from '../../src/domain/numbers';
import type { AuthService } from '../auth/service';
import { currentUser, optionalUser, requireUser, signInAndBack } from '../auth/session';
import { AppError } from '../errors';
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

const PAYMENT_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

function pageOf(query: unknown): { page: number; limit: number } {
  const parsed = pageQuerySchema.safeParse(query);
  if (!parsed.success) throw new AppError('VALIDATION_ERROR', parsed.error.issues[0]?.message);
  return parsed.data;
}

function paymentIdOf(params: unknown): string {
  const id = (params as { id?: string }).id ?? '';
  if (!PAYMENT_ID.test(id)) throw new AppError('NOT_FOUND');
  return id;
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
  const guard = requireUser(auth);
  const allowed = senderAllowList(deps.webhookSenders);

  app.get('/api/payments/plans', async () => ({ success: true, data: payments.plans() }));

  app.post('/api/payments/create-token-payment', { preHandler: guard }, async (request) => {
    const user = currentUser(request);
    const data = await payments.createTokenPayment(user, request.body);
    return { success: true, data, confirmationUrl: data.confirmationUrl };
  });

  app.post('/api/payments/create-subscription-payment', { preHandler: guard }, async (request) => {
    const user = currentUser(request);
    const data = await payments.createSubscriptionPayment(user, request.body);
    return { success: true, data, confirmationUrl: data.confirmationUrl };
  });

  app.get('/api/payments/history', { preHandler: guard }, async (request) => {
    const user = currentUser(request);
    const { page, limit } = pageOf(request.query);
    return { success: true, data: await payments.history(user.id, page, limit) };
  });

  app.get('/api/payments/subscription', { preHandler: guard }, async (request) => {
    const user = currentUser(request);
    return { success: true, data: await payments.subscription(user.id) };
  });

  app.post('/api/payments/cancel-subscription', { preHandler: guard }, async (request) => {
    const user = currentUser(request);
    return { success: true, data: await payments.cancel(user.id) };
  });

  app.get('/api/ledger', { preHandler: guard }, async (request) => {
    const user = currentUser(request);
    const { page, limit } = pageOf(request.query);
    return { success: true, data: await payments.ledgerPage(user.id, page, limit) };
  });

  app.get('/api/payments/:id', { preHandler: guard }, async (request) => {
    const user = currentUser(request);
    return { success: true, data: await payments.getPayment(user.id, paymentIdOf(request.params)) };
  });

  // The provider sends the browser here, and it may not be the browser that paid (a
  // bank's app opening another one): without a session it signs in and comes back.
  app.get('/api/payments/:id/return', async (request, reply) => {
    const id = paymentIdOf(request.params);
    const user = await optionalUser(auth, request);
    if (!user) return reply.redirect(signInAndBack(`/api/payments/${id}/return`), 302);
    const { location } = await payments.returnFromProvider(user.id, id);
    return reply.redirect(location, 302);
  });

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
    scope.post('/api/payments/webhook', async (request, reply) => {
      let json: unknown;
      try {
        json = JSON.parse(typeof request.body === 'string' ? request.body : '');
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
    });
  });
}
