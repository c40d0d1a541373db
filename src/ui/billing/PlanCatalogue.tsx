import { Check } from 'lucide-react';
import { isSubscriptionPlanId, type Plan, type SubscriptionPlanId } from '../../domain/billing';
import type { SubscriptionType } from '../../domain/subscription';
import { i18next } from '../../i18n';
import { planFeature, planName, planPrice } from './texts';

const t = i18next.t;

/** SPEC section 9's plans, with Subscribe for pro and premium. */
export function PlanCatalogue({
  plans,
  current,
  busy,
  canSubscribe,
  onSubscribe,
}: {
  plans: Plan[];
  current: SubscriptionType;
  busy: boolean;
  /** False while the user already has a subscription that renews. */
  canSubscribe: boolean;
  onSubscribe: (plan: SubscriptionPlanId) => void;
}) {
  return (
    <section aria-labelledby="plans-heading" data-testid="plan-catalogue">
      <h2 id="plans-heading" className="mb-3 text-lg font-semibold text-slate-900">
        {t('billing:plans.heading')}
      </h2>
      <ul className="grid gap-4 sm:grid-cols-2 xl:grid-cols-4">
        {plans.map((plan) => {
          const isCurrent = plan.id === current;
          return (
            <li
              key={plan.id}
              data-testid={`plan-${plan.id}`}
              className={`flex flex-col rounded-2xl border bg-white p-5 shadow-sm ${
                isCurrent ? 'border-indigo-500 ring-1 ring-indigo-500' : 'border-slate-200'
              }`}
            >
              <div className="flex items-center justify-between gap-2">
                <h3 className="text-base font-semibold text-slate-900">{planName(plan.id)}</h3>
                {isCurrent && (
                  <span className="rounded-full bg-indigo-50 px-2 py-0.5 text-xs font-medium text-indigo-800">
                    {t('billing:plans.current')}
                  </span>
                )}
              </div>
              <p className="mt-2 text-2xl font-bold text-slate-900" data-testid={`plan-${plan.id}-price`}>
                {planPrice(plan)}
              </p>
              <ul className="mt-3 flex-1 space-y-1.5 text-sm text-slate-700">
                {(plan.features ?? []).map((key) => (
                  <li key={key} className="flex items-start gap-2">
                    <Check className="mt-0.5 h-4 w-4 shrink-0 text-emerald-700" aria-hidden />
                    {planFeature(plan, key)}
                  </li>
                ))}
              </ul>
              {isSubscriptionPlanId(plan.id) && (
                <button
                  type="button"
                  disabled={busy || !canSubscribe || isCurrent}
                  onClick={() => isSubscriptionPlanId(plan.id) && onSubscribe(plan.id)}
                  data-testid={`subscribe-${plan.id}`}
                  aria-label={`${t('billing:plans.subscribe')}: ${planName(plan.id)}`}
                  className="mt-4 rounded-lg bg-indigo-600 px-4 py-2 text-sm font-semibold text-white hover:bg-indigo-700 focus-visible:ring-2 focus-visible:ring-indigo-500 focus-visible:ring-offset-2 focus-visible:outline-none disabled:cursor-not-allowed disabled:bg-slate-300 disabled:text-slate-700"
                >
                  {busy ? t('billing:plans.subscribing') : t('billing:plans.subscribe')}
                </button>
              )}
            </li>
          );
        })}
      </ul>
    </section>
  );
}
