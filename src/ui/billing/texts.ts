import {
  formatRub,
  TOKEN_PRICE_KOPECKS,
  type LedgerEntry,
  type PaymentHistoryItem,
  type Plan,
} from '../../domain/billing';
import { messageText } from '../../api/error-text';
import { isImageModelId } from '../../domain/image-catalogue';
import { PORTRAIT_MODEL } from '../../domain/portraits';
import { currentTexts, i18next } from '../../i18n';
import { formatDateAs, formatDecimalText } from '../../i18n/format';

const t = i18next.t;

/** SPEC's English messages in the chosen language; an unknown text is shown as it came. */
export function translateBillingError(message: string): string {
  const own: Record<string, string> = currentTexts().billing.errors;
  return own[message] ?? messageText(message, 'billing');
}

/** "1750.00" as the language writes it: 1,750.00 in English, 1 750,00 in Russian. */
export function localAmount(amount: string): string {
  return formatDecimalText(amount);
}

/** An amount with its currency: RUB is shown as the rouble sign (SPEC section 3). */
export function money(amount: string, currency: string): string {
  return currency === 'RUB' ? t('billing:rub', { amount: localAmount(amount) }) : `${localAmount(amount)} ${currency}`;
}

/** The price of `tokens` tokens for the screen, e.g. "70.00" (or "70,00"). */
export function tokensPrice(tokens: number): string {
  return localAmount(formatRub(tokens * TOKEN_PRICE_KOPECKS));
}

/** 0.7 RUB per token, as the language writes it. */
export function tokenRate(): string {
  return localAmount((TOKEN_PRICE_KOPECKS / 100).toString());
}

export function formatDate(iso: string | null | undefined): string {
  if (!iso) return '—';
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return '—';
  return formatDateAs(date, 'longDate');
}

export function formatDateTime(iso: string): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  return formatDateAs(date, 'dateTime');
}

export function planName(id: string): string {
  const names: Record<string, string> = currentTexts().billing.planNames;
  return names[id] ?? id;
}

export function statusName(status: string): string {
  const names: Record<string, string> = currentTexts().billing.statuses;
  return names[status] ?? status;
}

export function paymentStatusName(status: string): string {
  const names: Record<string, string> = currentTexts().billing.history.statuses;
  return names[status] ?? status;
}

/** A payment's refund in words (pro's card check, or a refund by the shop); empty without one. */
export function refundText(item: PaymentHistoryItem): string {
  if (!item.refund) return '';
  return t(`billing:history.refundStatuses.${item.refund.status}`, {
    amount: money(item.refund.amount, item.currency),
  });
}

/** A history row in words: the package and its tokens; the server's English as the fallback. */
export function historyDescription(item: PaymentHistoryItem): string {
  if (item.packageType === 'tokens') {
    return item.tokensAmount > 0
      ? t('billing:history.packages.tokens', { count: item.tokensAmount })
      : t('billing:history.packages.tokensPlain');
  }
  if (item.packageType === 'pro') return t('billing:history.packages.pro');
  if (item.packageType === 'premium') return t('billing:history.packages.premium');
  return item.description;
}

/** A model's display name in the page's language: an image model's from the catalogue, else the id as sent. */
function modelName(id: string): string {
  return isImageModelId(id) ? t(`generation:models.${id}.name`) : id;
}

/** A ledger row in words, from its reason code and values (Russian plurals). */
export function ledgerDescription(entry: LedgerEntry): string {
  const { model, tokens, plan } = entry.params;
  switch (entry.kind) {
    case 'signup':
      return t('billing:ledger.kinds.signup');
    case 'image':
      return model
        ? t('billing:ledger.kinds.image', { model: modelName(model) })
        : t('billing:ledger.kinds.imagePlain');
    case 'portrait':
      return t('billing:ledger.kinds.portrait');
    case 'chat':
      return model && tokens !== undefined
        ? t('billing:ledger.kinds.chat', { model: modelName(model), count: tokens })
        : t('billing:ledger.kinds.chatPlain');
    case 'chat_release':
      return model
        ? t('billing:ledger.kinds.chat_release', { model: modelName(model) })
        : t('billing:ledger.kinds.chat_releasePlain');
    case 'refund':
      if (model === PORTRAIT_MODEL) return t('billing:ledger.kinds.refundPortrait');
      return model
        ? t('billing:ledger.kinds.refund', { model: modelName(model) })
        : t('billing:ledger.kinds.refundPlain');
    case 'purchase':
      return t('billing:ledger.kinds.purchase', { count: Math.abs(entry.delta) });
    case 'subscription_grant':
      return plan
        ? t('billing:ledger.kinds.subscription_grant', { plan: planName(plan) })
        : t('billing:ledger.kinds.subscription_grantPlain');
    case 'subscription_expiry':
      return t('billing:ledger.kinds.subscription_expiry');
    case 'admin':
      return t('billing:ledger.kinds.admin');
    case 'payment_refund':
      return t('billing:ledger.kinds.payment_refund');
    case 'other':
      return t('billing:ledger.kinds.other');
  }
}

/** The plan's price line: free, per month, or per token. */
export function planPrice(plan: Plan): string {
  if (plan.priceRub !== null) return t('billing:plans.perMonth', { price: plan.priceRub });
  if (plan.pricePerTokenRub !== null) return t('billing:plans.perToken', { price: tokenRate() });
  return t('billing:plans.free');
}

/** One feature line of a plan, from the keys the plan lists. */
export function planFeature(plan: Plan, key: string): string {
  switch (key) {
    case 'signupTokens':
      return t('billing:plans.features.signupTokens', { count: plan.signupTokens });
    case 'monthlyTokens':
      return t('billing:plans.features.monthlyTokens', { count: plan.tokensPerMonth });
    case 'trial':
      return t('billing:plans.features.trial', { count: plan.trialDays });
    case 'perToken':
      return t('billing:plans.features.perToken', { price: tokenRate() });
    default: {
      const features: Record<string, string> = currentTexts().billing.plans.features;
      return features[key] ?? key;
    }
  }
}
