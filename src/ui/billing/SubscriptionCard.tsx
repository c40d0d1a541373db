import { AlertDialog } from 'radix-ui';
import type { Subscription } from '../../domain/billing';
import type { SubscriptionSummary } from '../../domain/subscription';
import { canCancelSubscription } from '../../domain/subscription';
import { i18next } from '../../i18n';
import { formatNumber } from '../../i18n/format';
import { formatDate, planName, statusName } from './texts';

const t = i18next.t;

export type CancelStep = 'idle' | 'confirming' | 'cancelling' | 'failed';

/** The plan the user pays for, its trial end and next billing date, and Cancel with a confirmation. */
export function SubscriptionCard({
  subscription,
  summary,
  step,
  onRequestCancel,
  onConfirm,
  onDismiss,
}: {
  subscription: Subscription | null;
  summary: SubscriptionSummary;
  step: CancelStep;
  onRequestCancel: () => void;
  onConfirm: () => void;
  onDismiss: () => void;
}) {
  return (
    <section
      aria-labelledby="subscription-heading"
      data-testid="subscription-card"
      className="rounded-2xl border border-slate-200 bg-white p-5 shadow-sm"
    >
      <h2 id="subscription-heading" className="text-lg font-semibold text-slate-900">
        {t('billing:subscription.heading')}
      </h2>
      {!subscription ? (
        <p className="mt-3 text-sm text-slate-600" data-testid="no-subscription">
          {t('billing:subscription.none')}
        </p>
      ) : (
        <>
          <dl className="mt-3 grid grid-cols-[auto_1fr] gap-x-4 gap-y-2 text-sm">
            <dt className="text-slate-600">{t('billing:subscription.plan')}</dt>
            <dd className="font-semibold text-slate-900" data-testid="subscription-plan">
              {planName(summary.type)}
            </dd>
            <dt className="text-slate-600">{t('billing:subscription.status')}</dt>
            <dd className="text-slate-900" data-testid="subscription-status">
              {statusName(summary.status)}
            </dd>
            {summary.trialEndsAt && (
              <>
                <dt className="text-slate-600">{t('billing:subscription.trialEnds')}</dt>
                <dd className="text-slate-900" data-testid="trial-ends">
                  {formatDate(summary.trialEndsAt)}
                </dd>
              </>
            )}
            <dt className="text-slate-600">
              {subscription.cancelAtPeriodEnd
                ? t('billing:subscription.endsOn')
                : t('billing:subscription.nextBilling')}
            </dt>
            <dd className="text-slate-900" data-testid="next-billing">
              {formatDate(subscription.nextBillingDate)}
            </dd>
            <dt className="text-slate-600">{t('billing:subscription.used')}</dt>
            <dd className="text-slate-900">
              {formatNumber(summary.tokensUsed)} / {formatNumber(summary.tokensTotal)}
            </dd>
          </dl>
          {subscription.cancelAtPeriodEnd || subscription.canceledAt ? (
            <p className="mt-4 text-sm text-slate-700" data-testid="subscription-ends">
              {t('billing:subscription.willEnd')}
            </p>
          ) : null}
          {canCancelSubscription(subscription) && (
            <CancelControl step={step} onRequest={onRequestCancel} onConfirm={onConfirm} onDismiss={onDismiss} />
          )}
        </>
      )}
    </section>
  );
}

function CancelControl({
  step,
  onRequest,
  onConfirm,
  onDismiss,
}: {
  step: CancelStep;
  onRequest: () => void;
  onConfirm: () => void;
  onDismiss: () => void;
}) {
  const busy = step === 'cancelling';
  return (
    <AlertDialog.Root open={step !== 'idle'} onOpenChange={(open) => (open ? onRequest() : !busy && onDismiss())}>
      <AlertDialog.Trigger
        data-testid="cancel-subscription"
        className="mt-4 rounded-lg border border-red-300 px-4 py-2 text-sm font-semibold text-red-700 hover:bg-red-50 focus-visible:ring-2 focus-visible:ring-red-500 focus-visible:outline-none"
      >
        {t('billing:subscription.cancel')}
      </AlertDialog.Trigger>
      <AlertDialog.Portal>
        <AlertDialog.Overlay className="fixed inset-0 z-50 bg-slate-900/50" />
        <AlertDialog.Content
          data-testid="cancel-dialog"
          className="fixed top-1/2 left-1/2 z-50 w-[92vw] max-w-md -translate-x-1/2 -translate-y-1/2 rounded-xl bg-white p-6 shadow-xl"
        >
          <AlertDialog.Title className="text-lg font-semibold text-slate-900">
            {t('billing:subscription.confirmTitle')}
          </AlertDialog.Title>
          <AlertDialog.Description className="mt-2 text-sm text-slate-700">
            {t('billing:subscription.confirmText')}
          </AlertDialog.Description>
          {step === 'failed' && (
            <p role="alert" className="mt-3 rounded-lg bg-red-50 p-3 text-sm text-red-800">
              {t('billing:subscription.cancelFailed')}
            </p>
          )}
          <div className="mt-5 flex flex-col-reverse gap-2 sm:flex-row sm:justify-end">
            <AlertDialog.Cancel
              disabled={busy}
              className="rounded-lg border border-slate-300 px-4 py-2 text-sm font-medium text-slate-800 hover:bg-slate-50 disabled:opacity-60"
            >
              {t('billing:subscription.keep')}
            </AlertDialog.Cancel>
            <button
              type="button"
              disabled={busy}
              onClick={onConfirm}
              data-testid="confirm-cancel"
              className="rounded-lg bg-red-700 px-4 py-2 text-sm font-semibold text-white hover:bg-red-800 disabled:opacity-60"
            >
              {busy ? t('billing:subscription.cancelling') : t('billing:subscription.confirm')}
            </button>
          </div>
        </AlertDialog.Content>
      </AlertDialog.Portal>
    </AlertDialog.Root>
  );
}
