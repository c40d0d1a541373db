import type { FastifyInstance } from 'fastify';
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
  every(server, intervals.reconcileMs, 'payment reconciler', async () => {
    const { checked, expired } = await payments.reconcile();
    if (checked > 0) server.log.info({ checked, expired }, 'pending payments re-read');
  });
  every(server, intervals.renewalMs, 'subscription renewal', async () => {
    const counts = await payments.renew();
    if (counts.renewed + counts.failed + counts.ended > 0) server.log.info(counts, 'subscriptions renewed');
  });
}

function every(server: FastifyInstance, intervalMs: number, name: string, work: () => Promise<void>): void {
  if (intervalMs <= 0) return;
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    work()
      .catch((error: unknown) => server.log.error({ err: error }, `${name} failed`))
      .finally(() => {
        running = false;
      });
  }, intervalMs);
  timer.unref();
  server.addHook('onClose', async () => clearInterval(timer));
}
