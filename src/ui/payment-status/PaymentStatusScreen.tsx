import { Link } from '@tanstack/react-router';
import { useActorRef, useSelector } from '@xstate/react';
import { CheckCircle2, Clock, XCircle } from 'lucide-react';
import { useMemo } from 'react';
import { livePaymentStatusMachine } from '../../api/billing';
import { currentTexts, i18next } from '../../i18n';
import { useAppActors, useLiveActor } from '../app-context';
import { Spinner } from '../common/Spinner';
import { money, planName, translateBillingError } from '../billing/texts';

const t = i18next.t;

const primary =
  'rounded-lg bg-indigo-600 px-4 py-2 text-center text-sm font-semibold text-white hover:bg-indigo-700 focus-visible:ring-2 focus-visible:ring-indigo-500 focus-visible:ring-offset-2 focus-visible:outline-none';
const secondary =
  'rounded-lg border border-slate-300 px-4 py-2 text-center text-sm font-medium text-slate-800 hover:bg-slate-50 focus-visible:ring-2 focus-visible:ring-indigo-500 focus-visible:outline-none';

function reasonText(reason: string | null | undefined): string | null {
  if (!reason) return null;
  const reasons: Record<string, string> = currentTexts().billing.status.reasons;
  return reasons[reason] ?? reason.replaceAll('_', ' ');
}

/** /payment-status: SPEC's loading, success and failed, confirmed with the server. */
export function PaymentStatusScreen({ paymentId, status }: { paymentId?: string; status?: string }) {
  const { session } = useAppActors();
  const logic = useMemo(
    () =>
      livePaymentStatusMachine.provide({
        actions: { refreshBalance: () => session.send({ type: 'USER.REFRESH' }) },
      }),
    [session],
  );
  const actor = useActorRef(logic, { input: { paymentId, status } });
  useLiveActor('payment-status', actor);
  const state = useSelector(actor, (s) => s);
  const { payment, message } = state.context;

  return (
    <div className="mx-auto flex max-w-lg flex-col items-center px-4 py-12 text-center sm:py-20">
      <div className="w-full rounded-2xl border border-slate-200 bg-white p-8 shadow-sm" data-testid="payment-status">
        {state.matches('loading') ? (
          <div className="flex flex-col items-center gap-4 text-slate-700" data-testid="payment-status-loading">
            <Spinner className="h-12 w-12" />
            <p>{t('billing:status.loading')}</p>
          </div>
        ) : state.matches('success') ? (
          <div className="flex flex-col items-center gap-3">
            <CheckCircle2 className="h-14 w-14 text-emerald-600" aria-hidden />
            <h1 className="text-2xl font-bold text-slate-900" data-testid="payment-status-title">
              {t('billing:status.successTitle')}
            </h1>
            {payment && (
              <p className="text-slate-700" data-testid="payment-status-text">
                {payment.packageType === 'tokens'
                  ? t('billing:status.successTokens', { count: payment.tokensAmount })
                  : t('billing:status.successPlan', { plan: planName(payment.packageType) })}
              </p>
            )}
            {payment && <p className="text-sm text-slate-600">{money(payment.amount, payment.currency)}</p>}
            <div className="mt-4 flex w-full flex-col gap-2 sm:flex-row sm:justify-center">
              <Link to="/dashboard" className={primary} data-testid="to-dashboard">
                {t('billing:status.toDashboard')}
              </Link>
              <Link to="/billing" className={secondary} data-testid="to-billing">
                {t('billing:status.toBilling')}
              </Link>
            </div>
          </div>
        ) : state.matches('pending') ? (
          <div className="flex flex-col items-center gap-3">
            <Clock className="h-14 w-14 text-amber-600" aria-hidden />
            <h1 className="text-2xl font-bold text-slate-900" data-testid="payment-status-title">
              {t('billing:status.pendingTitle')}
            </h1>
            <p className="text-slate-700">{t('billing:status.pendingText')}</p>
            <div className="mt-4 flex w-full flex-col gap-2 sm:flex-row sm:justify-center">
              <button type="button" onClick={() => actor.send({ type: 'RETRY' })} className={primary}>
                {t('billing:status.checkAgain')}
              </button>
              <Link to="/billing" className={secondary}>
                {t('billing:status.toBilling')}
              </Link>
            </div>
          </div>
        ) : (
          <div className="flex flex-col items-center gap-3">
            <XCircle className="h-14 w-14 text-red-600" aria-hidden />
            <h1 className="text-2xl font-bold text-slate-900" data-testid="payment-status-title">
              {t('billing:status.failedTitle')}
            </h1>
            {message && (
              <p role="alert" className="text-slate-700" data-testid="payment-status-message">
                {translateBillingError(message)}
              </p>
            )}
            {reasonText(payment?.cancellationReason) && (
              <p className="text-sm text-slate-600" data-testid="payment-status-reason">
                {t('billing:status.reason', { reason: reasonText(payment?.cancellationReason) })}
              </p>
            )}
            <div className="mt-4 flex w-full flex-col gap-2 sm:flex-row sm:justify-center">
              <Link to="/billing" className={primary} data-testid="try-again">
                {t('billing:status.tryAgain')}
              </Link>
              <Link to="/dashboard" className={secondary} data-testid="go-dashboard">
                {t('billing:status.goDashboard')}
              </Link>
            </div>
          </div>
        )}
      </div>
    </div>
  );
}
