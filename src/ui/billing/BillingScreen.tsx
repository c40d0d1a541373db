import { useActorRef, useSelector } from '@xstate/react';
import { useMemo } from 'react';
import { liveBillingMachine, livePurchaseMachine } from '../../api/billing';
import { summarizeSubscription, withTokenAmount, FALLBACK_SUBSCRIPTION } from '../../domain/subscription';
import { i18next } from '../../i18n';
import { useAppActors, useLiveActor, useSessionUser } from '../app-context';
import { Deferred } from '../common/Deferred';
import { Spinner } from '../common/Spinner';
import { HistoryTable } from './HistoryTable';
import { LedgerTable } from './LedgerTable';
import { PlanCatalogue } from './PlanCatalogue';
import { PurchaseModal } from './PurchaseModal';
import { SubscriptionCard, type CancelStep } from './SubscriptionCard';
import { translateBillingError } from './texts';
import { UsageCard } from './UsageCard';

const t = i18next.t;

/** /billing: usage, subscription, plans, payment history and spend history. */
export function BillingScreen() {
  const { session, toasts } = useAppActors();
  const user = useSessionUser();
  const billingLogic = useMemo(
    () =>
      liveBillingMachine.provide({
        actions: {
          refreshUser: () => session.send({ type: 'USER.REFRESH' }),
          notifyCancelled: () =>
            toasts.send({ type: 'TOAST.SHOW', kind: 'success', message: t('billing:subscription.cancelled') }),
        },
      }),
    [session, toasts],
  );
  const billing = useActorRef(billingLogic);
  const purchase = useActorRef(livePurchaseMachine);
  useLiveActor('billing', billing);
  useLiveActor('purchase', purchase);
  const state = useSelector(billing, (s) => s);
  const purchaseState = useSelector(purchase, (s) => s);
  const balance = user?.tokensAmount ?? 0;
  const { context } = state;

  const summary = context.subscriptionFailed
    ? FALLBACK_SUBSCRIPTION
    : withTokenAmount(summarizeSubscription(context.subscription, balance), balance);
  const subscriptionOrder = purchaseState.context.order?.kind === 'subscription' ? purchaseState.context.order : null;
  const subscribing =
    subscriptionOrder !== null && (purchaseState.matches('creating') || purchaseState.matches('redirecting'));
  const subscribeFailed = subscriptionOrder !== null && purchaseState.matches('failed');
  const cancelStep: CancelStep = state.matches({ ready: { subscription: 'confirming' } })
    ? 'confirming'
    : state.matches({ ready: { subscription: 'cancelling' } })
      ? 'cancelling'
      : state.matches({ ready: { subscription: 'failed' } })
        ? 'failed'
        : 'idle';
  const ledgerState = state.matches({ ready: { ledger: 'error' } })
    ? 'error'
    : state.matches({ ready: { ledger: 'loading' } })
      ? 'loading'
      : 'ready';
  const renewing =
    context.subscription !== null &&
    !context.subscription.cancelAtPeriodEnd &&
    context.subscription.status !== 'cancelled';

  return (
    <div className="mx-auto max-w-7xl px-4 py-6 sm:px-6">
      <header className="mb-6">
        <h1 className="text-2xl font-bold text-slate-900">{t('billing:title')}</h1>
        <p className="mt-1 text-slate-600">{t('billing:subtitle')}</p>
      </header>
      {state.matches('loading') ? (
        <div className="flex flex-col items-center gap-3 py-16 text-slate-700" data-testid="billing-loading">
          <Spinner />
          {t('billing:loading')}
        </div>
      ) : state.matches('error') ? (
        <div
          role="alert"
          className="rounded-2xl border border-red-200 bg-red-50 p-6 text-red-900"
          data-testid="billing-error"
        >
          <p className="font-semibold">{t('billing:loadFailed')}</p>
          {context.error && <p className="mt-1 text-sm">{translateBillingError(context.error)}</p>}
          <button
            type="button"
            onClick={() => billing.send({ type: 'RETRY' })}
            data-testid="billing-retry"
            className="mt-4 rounded-lg bg-red-700 px-4 py-2 text-sm font-semibold text-white hover:bg-red-800"
          >
            {t('billing:retry')}
          </button>
        </div>
      ) : (
        <div className="space-y-6">
          <div className="grid gap-6 lg:grid-cols-2">
            <UsageCard balance={balance} summary={summary} onAddTokens={() => purchase.send({ type: 'OPEN' })} />
            <SubscriptionCard
              subscription={context.subscription}
              summary={summary}
              step={cancelStep}
              onRequestCancel={() => billing.send({ type: 'CANCEL.REQUEST' })}
              onConfirm={() => billing.send({ type: 'CANCEL.CONFIRM' })}
              onDismiss={() => billing.send({ type: 'CANCEL.DISMISS' })}
            />
          </div>
          {subscribeFailed && purchaseState.context.failure && (
            <div
              role="alert"
              data-testid="subscribe-failure"
              className="flex flex-wrap items-center gap-3 rounded-xl bg-red-50 p-4 text-sm text-red-800 ring-1 ring-red-200"
            >
              <span className="flex-1">{translateBillingError(purchaseState.context.failure)}</span>
              <button
                type="button"
                onClick={() => purchase.send({ type: 'SUBMIT' })}
                className="rounded-lg bg-red-700 px-3 py-1.5 font-semibold text-white hover:bg-red-800"
              >
                {t('billing:purchase.tryAgain')}
              </button>
              <button
                type="button"
                onClick={() => purchase.send({ type: 'CLOSE' })}
                className="rounded-lg border border-red-300 px-3 py-1.5 font-medium text-red-800 hover:bg-red-100"
              >
                {t('billing:purchase.dismiss')}
              </button>
            </div>
          )}
          {/* The plans and both tables (most of the screen's elements) render a step after the
              cards, in slices, rather than in the same task as the whole screen. */}
          <Deferred>
            <PlanCatalogue
              plans={context.plans}
              current={summary.type}
              busy={subscribing}
              canSubscribe={!renewing}
              onSubscribe={(plan) => purchase.send({ type: 'SUBSCRIBE', plan })}
            />
            <HistoryTable payments={context.history} />
            <LedgerTable
              state={ledgerState}
              ledger={context.ledger}
              page={context.ledgerPage}
              onPage={(page) => billing.send({ type: 'LEDGER.PAGE', page })}
              onRetry={() => billing.send({ type: 'LEDGER.RETRY' })}
            />
          </Deferred>
        </div>
      )}
      <PurchaseModal actor={purchase} />
    </div>
  );
}
