import { useSelector } from '@xstate/react';
import { Dialog } from 'radix-ui';
import { X } from 'lucide-react';
import type { ActorRefFrom } from 'xstate';
import {
  MAX_TOKENS,
  MIN_TOKENS,
  parseTokensInput,
  TOKEN_PRESETS,
  TOKENS_PER_GENERATION_HINT,
} from '../../domain/billing';
import { i18next } from '../../i18n';
import { formatNumber } from '../../i18n/format';
import type { purchaseMachine } from '../../machines/purchase';
import { tokenRate, tokensPrice, translateBillingError } from './texts';

const t = i18next.t;

export type PurchaseRef = ActorRefFrom<typeof purchaseMachine>;

/**
 * SPEC 2 "Token purchase modal": presets, the price as the user types, and Pay. An amount
 * that cannot be bought (SPEC 5) shows its message at once, no price, and Pay disabled.
 */
export function PurchaseModal({ actor }: { actor: PurchaseRef }) {
  const state = useSelector(actor, (s) => s);
  const { amount, problem, failure, order } = state.context;
  const tokensOrder = order === null || order.kind === 'tokens';
  const open =
    state.matches('editing') ||
    (tokensOrder && (state.matches('creating') || state.matches('failed') || state.matches('redirecting')));
  const busy = state.matches('creating') || state.matches('redirecting');
  const tokens = parseTokensInput(amount);
  const close = () => actor.send({ type: 'CLOSE' });
  return (
    <Dialog.Root open={open} onOpenChange={(next) => !next && !busy && close()}>
      <Dialog.Portal>
        <Dialog.Overlay className="fixed inset-0 z-50 bg-slate-900/50" />
        <Dialog.Content
          data-testid="purchase-modal"
          aria-busy={busy}
          className="fixed top-1/2 left-1/2 z-50 max-h-[92vh] w-[94vw] max-w-lg -translate-x-1/2 -translate-y-1/2 overflow-y-auto rounded-2xl bg-white p-6 shadow-xl"
        >
          <div className="flex items-start justify-between gap-3">
            <Dialog.Title className="text-xl font-semibold text-slate-900">{t('billing:purchase.title')}</Dialog.Title>
            <Dialog.Close
              disabled={busy}
              aria-label={t('billing:purchase.close')}
              className="rounded p-1 text-slate-700 hover:bg-slate-100 disabled:opacity-50"
            >
              <X className="h-5 w-5" />
            </Dialog.Close>
          </div>
          <Dialog.Description className="mt-1 text-sm text-slate-600">
            {t('billing:purchase.description', { price: tokenRate() })}
          </Dialog.Description>
          <form
            className="mt-5"
            noValidate
            onSubmit={(event) => {
              event.preventDefault();
              actor.send({ type: 'SUBMIT' });
            }}
          >
            <fieldset disabled={busy}>
              <legend className="text-sm font-medium text-slate-800">{t('billing:purchase.presets')}</legend>
              <div className="mt-2 grid grid-cols-4 gap-2 sm:grid-cols-7">
                {TOKEN_PRESETS.map((preset) => (
                  <button
                    key={preset}
                    type="button"
                    aria-pressed={tokens === preset}
                    data-testid={`preset-${preset}`}
                    onClick={() => actor.send({ type: 'AMOUNT.CHANGE', value: String(preset) })}
                    className="rounded-lg border border-slate-300 px-2 py-2 text-sm font-medium text-slate-800 hover:bg-slate-50 aria-pressed:border-indigo-600 aria-pressed:bg-indigo-50 aria-pressed:text-indigo-800"
                  >
                    {formatNumber(preset)}
                  </button>
                ))}
              </div>
              <label htmlFor="tokens-amount" className="mt-4 block text-sm font-medium text-slate-800">
                {t('billing:purchase.amount')}
              </label>
              <input
                id="tokens-amount"
                data-testid="tokens-amount"
                inputMode="numeric"
                autoComplete="off"
                value={amount}
                aria-invalid={problem !== null}
                aria-describedby="tokens-hint tokens-problem"
                onChange={(event) => actor.send({ type: 'AMOUNT.CHANGE', value: event.target.value })}
                className="mt-1 w-full rounded-lg border border-slate-300 px-3 py-2 text-lg aria-invalid:border-red-600"
              />
              <p id="tokens-hint" className="mt-1 text-sm text-slate-600">
                {t('billing:purchase.range', { min: MIN_TOKENS, max: formatNumber(MAX_TOKENS) })} ·{' '}
                {t('billing:purchase.hint')}
              </p>
              <p id="tokens-problem" className="mt-1 text-sm text-red-700" data-testid="purchase-problem">
                {problem ? translateBillingError(problem) : ''}
              </p>
            </fieldset>
            <div className="mt-4 flex items-end justify-between gap-3 rounded-xl bg-slate-50 p-4">
              <div>
                <p className="text-sm text-slate-600">{t('billing:purchase.total')}</p>
                <p className="text-2xl font-bold text-slate-900" data-testid="purchase-total" aria-live="polite">
                  {tokens !== null ? t('billing:rub', { amount: tokensPrice(tokens) }) : '—'}
                </p>
              </div>
              {tokens !== null && (
                <p className="text-sm text-slate-700" data-testid="purchase-estimate">
                  {t('billing:purchase.estimate', { count: Math.floor(tokens / TOKENS_PER_GENERATION_HINT) })}
                </p>
              )}
            </div>
            {failure && (
              <p
                role="alert"
                data-testid="purchase-failure"
                className="mt-4 rounded-lg bg-red-50 p-3 text-sm text-red-800"
              >
                {translateBillingError(failure)}
              </p>
            )}
            <div className="mt-5 flex flex-col-reverse gap-2 sm:flex-row sm:justify-end">
              <button
                type="button"
                disabled={busy}
                onClick={close}
                className="rounded-lg border border-slate-300 px-4 py-2 text-sm font-medium text-slate-800 hover:bg-slate-50 disabled:opacity-50"
              >
                {t('billing:purchase.cancel')}
              </button>
              <button
                type="submit"
                disabled={busy || problem !== null}
                data-testid="purchase-pay"
                className="rounded-lg bg-indigo-600 px-4 py-2 text-sm font-semibold text-white hover:bg-indigo-700 focus-visible:ring-2 focus-visible:ring-indigo-500 focus-visible:ring-offset-2 focus-visible:outline-none disabled:opacity-60"
              >
                {state.matches('creating')
                  ? t('billing:purchase.creating')
                  : state.matches('redirecting')
                    ? t('billing:purchase.redirecting')
                    : tokens !== null
                      ? t('billing:purchase.pay', { price: tokensPrice(tokens) })
                      : t('billing:purchase.payPlain')}
              </button>
            </div>
          </form>
        </Dialog.Content>
      </Dialog.Portal>
    </Dialog.Root>
  );
}
