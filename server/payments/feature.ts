import type { FastifyInstance } from 'fastify';
import type { AuthService } from '../auth/service';
import type { Config } from '../config';
import type { Db } from '../db/client';
import type { LedgerService } from '../ledger/service';
import { SandboxProvider } from '../providers/payments/sandbox';
import type { PaymentProvider } from '../providers/payments/types';
import { startPaymentJobs } from './jobs';
import { paymentRoutes } from './routes';
import { sandboxRoutes } from './sandbox-routes';
import { PaymentsService } from './service';

/**
 * Payments and subscriptions (SPEC section 7's /api/payments routes and /api/ledger), the
 * sandbox's checkout page when the sandbox stands in for YooKassa, and the reconciler and
 * renewal jobs.
 */
export function registerPayments(
  server: FastifyInstance,
  deps: { config: Config; db: Db; ledger: LedgerService; auth: AuthService; provider: PaymentProvider },
): PaymentsService {
  const { config, auth, provider } = deps;
  const payments = new PaymentsService(
    deps.db,
    deps.ledger,
    provider,
    {
      appUrl: config.appUrl,
      recheckAfterMs: config.PAYMENTS_RECHECK_AFTER_MS,
      expireAfterMs: config.PAYMENTS_EXPIRE_AFTER_MS,
      leaseMs: 5 * 60_000,
      retryIntervalMs: config.SUBSCRIPTION_RETRY_INTERVAL_MS,
      maxRetries: config.SUBSCRIPTION_MAX_RETRIES,
    },
    server.log,
  );
  paymentRoutes(server, { auth, payments, webhookSenders: config.YOOKASSA_WEBHOOK_IPS });
  if (provider instanceof SandboxProvider) sandboxRoutes(server, { sandbox: provider, payments, auth });
  startPaymentJobs(server, payments, {
    reconcileMs: config.PAYMENTS_RECONCILE_INTERVAL_MS,
    renewalMs: config.SUBSCRIPTION_RENEWAL_INTERVAL_MS,
  });
  return payments;
}
