import { BlockList, isIP } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { pathOf } from '../../src/domain/api/contract';
import {
  cancelSubscriptionEndpoint,
  createSubscriptionPaymentEndpoint,
  createTokenPaymentEndpoint,
  ledgerEndpoint,
  paymentEndpoint,
  paymentHistoryEndpoint,
  paymentReturnEndpoint,
  paymentWebhookEndpoint,
  plansEndpoint,
  subscriptionEndpoint,
} from '../../src/domain/api/payments';
import type { AuthService } from '../auth/service';
import { currentUser, optionalUser, requireUser, signInAndBack } from '../auth/session';
import { AppError } from '../errors';
import { route } from '../http/contract-route';
import type { PaymentsService } from './service';

/** What is read of a YooKassa notification: the rest is re-read from YooKassa itself. */
const notificationSchema = z.object({
  type: z.literal('notification'),
  event: z.string(),
  object: z.object({ id: z.string().min(1).max(100) }),
});

const PAYMENT_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Not a payment id answers like an unknown one: 404, never a 400 that tells ids apart. */
function paymentIdOf(params: { id: string }): string {
  if (!PAYMENT_ID.test(params.id)) throw new AppError('NOT_FOUND');
  return params.id;
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
  server: FastifyInstance,
  deps: { auth: AuthService; payments: PaymentsService; webhookSenders: string },
): void {
  const { auth, payments } = deps;
  // Before validation: an anonymous request is refused as such, whatever its body says.
  const guard = { preValidation: requireUser(auth) };
  const allowed = senderAllowList(deps.webhookSenders);

  route(server, plansEndpoint, {}, async () => ({ success: true as const, data: payments.plans() }));

  route(server, createTokenPaymentEndpoint, guard, async (request) => {
    const data = await payments.createTokenPayment(currentUser(request), request.body);
    return { success: true as const, data, confirmationUrl: data.confirmationUrl };
  });

  route(server, createSubscriptionPaymentEndpoint, guard, async (request) => {
    const data = await payments.createSubscriptionPayment(currentUser(request), request.body);
    return { success: true as const, data, confirmationUrl: data.confirmationUrl };
  });

  route(server, paymentHistoryEndpoint, guard, async (request) => {
    const { page, limit } = request.query;
    return { success: true as const, data: await payments.history(currentUser(request).id, page, limit) };
  });

  route(server, subscriptionEndpoint, guard, async (request) => ({
    success: true as const,
    data: await payments.subscriptions.subscription(currentUser(request).id),
  }));

  route(server, cancelSubscriptionEndpoint, guard, async (request) => ({
    success: true as const,
    data: await payments.subscriptions.cancel(currentUser(request).id),
  }));

  route(server, ledgerEndpoint, guard, async (request) => {
    const { page, limit } = request.query;
    return { success: true as const, data: await payments.ledgerPage(currentUser(request).id, page, limit) };
  });

  route(server, paymentEndpoint, guard, async (request) => ({
    success: true as const,
    data: await payments.getPayment(currentUser(request).id, paymentIdOf(request.params)),
  }));

  // The provider sends the browser here, and it may not be the browser that paid (a
  // bank's app opening another one): without a session it signs in and comes back.
  route(server, paymentReturnEndpoint, {}, async (request, reply) => {
    const id = paymentIdOf(request.params);
    const user = await optionalUser(auth, request);
    if (!user) return reply.redirect(signInAndBack(pathOf(paymentReturnEndpoint, { id })), 302);
    const { location } = await payments.returnFromProvider(user.id, id);
    return reply.redirect(location, 302);
  });

  // YooKassa notifications: no signature exists, so the sender's address is checked
  // before the body is even read, and the payment is always re-read from YooKassa. Junk
  // from an allowed sender gets a quiet 200 so it is not redelivered for a day.
  void server.register(async (scope) => {
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
    route(scope, paymentWebhookEndpoint, {}, async (request, reply) => {
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
    });
  });
}
