import { AlertTriangle, Coins, Plus } from 'lucide-react';
import { LOW_BALANCE } from '../../domain/billing';
import type { SubscriptionSummary } from '../../domain/subscription';
import { i18next } from '../../i18n';
import { planName, statusName, tokenRate } from './texts';

const t = i18next.t;

/** SPEC 2 "Current usage card": balance, rate, Add Tokens, active-source badge, low-balance warning. */
export function UsageCard({
  balance,
  summary,
  onAddTokens,
}: {
  balance: number;
  summary: SubscriptionSummary;
  onAddTokens: () => void;
}) {
  const subscribed = summary.type === 'pro' || summary.type === 'premium';
  return (
    <section
      aria-labelledby="usage-heading"
      data-testid="usage-card"
      className="rounded-2xl border border-slate-200 bg-white p-5 shadow-sm"
    >
      <div className="flex flex-wrap items-start justify-between gap-3">
        <h2 id="usage-heading" className="text-lg font-semibold text-slate-900">
          {t('billing:usage.heading')}
        </h2>
        <span
          data-testid="active-source"
          className="rounded-full bg-indigo-50 px-3 py-1 text-sm font-medium text-indigo-800 ring-1 ring-indigo-200"
        >
          {t('billing:usage.source', { plan: planName(summary.type) })}
          {summary.status !== 'active' && ` · ${statusName(summary.status)}`}
        </span>
      </div>
      <p className="mt-4 text-sm text-slate-600">{t('billing:usage.balance')}</p>
      <p className="mt-1 flex items-center gap-2 text-3xl font-bold text-slate-900" data-testid="usage-balance">
        <Coins className="h-7 w-7 text-amber-600" aria-hidden />
        {t('billing:tokens', { count: balance })}
      </p>
      <p className="mt-1 text-sm text-slate-600" data-testid="usage-rate">
        {t('billing:usage.rate', { price: tokenRate() })}
      </p>
      {subscribed && (
        <p className="mt-2 text-sm text-slate-700" data-testid="subscription-tokens">
          {t('billing:usage.subscriptionTokens', { used: summary.tokensUsed, total: summary.tokensTotal })}
        </p>
      )}
      {balance < LOW_BALANCE && (
        <p
          role="status"
          data-testid="low-balance"
          className="mt-4 flex items-start gap-2 rounded-lg bg-amber-50 p-3 text-sm text-amber-900 ring-1 ring-amber-200"
        >
          <AlertTriangle className="mt-0.5 h-4 w-4 shrink-0" aria-hidden />
          {t('billing:usage.lowBalance', { threshold: LOW_BALANCE })}
        </p>
      )}
      <button
        type="button"
        onClick={onAddTokens}
        data-testid="add-tokens"
        className="mt-4 inline-flex items-center gap-2 rounded-lg bg-indigo-600 px-4 py-2 text-sm font-semibold text-white hover:bg-indigo-700 focus-visible:ring-2 focus-visible:ring-indigo-500 focus-visible:ring-offset-2 focus-visible:outline-none"
      >
        <Plus className="h-4 w-4" aria-hidden />
        {t('billing:usage.addTokens')}
      </button>
    </section>
  );
}
