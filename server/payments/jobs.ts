import type { FastifyInstance } from 'fastify';
import { runEvery } from '../background/periodic';
import type { PaymentsService } from './service';

/**
 * The payment reconciler and the renewal job, on every instance: both claim rows in the
 * database, so instances share the work and no piece of it runs twice. 0 turns one off
 * (tests call `reconcile` and `renew` themselves with their own clock).
 */
export function startPaymentJobs(
  server: FastifyInstance,
  payments: PaymentsService,
  intervals: { reconcileMs: number; renewalMs: number },
): void {
  runEvery(server, 'payment reconciler', intervals.reconcileMs, async () => {
    const { checked, expired } = await payments.reconcile();
    if (checked > 0) server.log.info({ checked, expired }, 'pending payments re-read');
  });
  runEvery(server, 'subscription renewal', intervals.renewalMs, async () => {
    const counts = await payments.renew();
    if (counts.renewed + counts.failed + counts.ended > 0) server.log.info(counts, 'subscriptions renewed');
  });
}
