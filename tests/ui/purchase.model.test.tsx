// One file: one chart's walk: its table of what each state shows (SPEC) and the steps that drive it
// read side by side.
import { cleanup, screen, waitFor } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { AnyEventObject, AnyMachineSnapshot } from 'xstate';
import type { CreatePaymentResponse } from '../../src/domain/billing';
import type { Language } from '../../src/i18n';
import { purchaseMachine, type PurchaseContext } from '../../src/machines/purchase';
import { errorOfReply, NO_PAGES, plural, PLANS } from './support/fixtures';
import { openApp, type OpenApp } from './support/app';
import { apiError, FakeApi, json, type Reply } from './support/fake-api';
import {
  answers,
  describeInvariants,
  describeScreenModel,
  replyOf,
  type Reached,
  type ScreenModel,
} from './support/model';

/*
 * The token purchase (SPEC sections 2 "Token purchase modal", 4 "Purchase", 5, 8, 9) walked
 * along its statechart on the real /billing screen: the modal opened from Add Tokens, the
 * presets and the typed amount, the total, the validation message, creating the payment
 * with the buttons disabled, the alert on failure, and the browser sent to the provider's
 * confirmation page. Subscribing to a plan from the catalogue runs the same chart without
 * the modal. What is expected is written here from SPEC; the Russian wording by hand.
 */

// The first path opens the app cold (the screen's code is loaded on demand).
vi.setConfig({ testTimeout: 30_000 });

const TOKEN_ENDPOINT = '/api/payments/create-token-payment';
const PLAN_ENDPOINT = '/api/payments/create-subscription-payment';
const BALANCE = 50;
/** SPEC 7: returnUrl; the provider sends the user back to this site's /payment-status. */
const returnUrl = () => `${globalThis.location.origin}/payment-status`;

/** SPEC section 7: the confirmation address, in data and at the top level. */
function created(confirmationUrl: string, amount: string): Reply {
  const data: CreatePaymentResponse = {
    paymentId: '2f9c7a10-5b4e-4d1a-9c3e-000000000042',
    confirmationUrl,
    amount,
    currency: 'RUB',
  };
  return json({ success: true, data, confirmationUrl });
}
const TOKENS_CHECKOUT = 'https://yoomoney.ru/checkout/payments/v2/contract?orderId=tokens-42';
const PLAN_CHECKOUT = 'https://yoomoney.ru/checkout/payments/v2/contract?orderId=pro-42';
const TOKENS_CREATED = created(TOKENS_CHECKOUT, '70.00');
const PLAN_CREATED = created(PLAN_CHECKOUT, '1.00');
const REFUSED = apiError(502, 'PROVIDER_ERROR', 'The payment provider is unavailable');

const outputOf = (reply: Reply) => (reply.body as { data: CreatePaymentResponse }).data;

/** SPEC 9: 0.7 RUB per token, two decimals; the language's decimal mark and thousands separator (issue #26 item 8). */
function rub(tokens: number, lang: Language): string {
  const kopecks = tokens * 70;
  return new Intl.NumberFormat(lang, { minimumFractionDigits: 2, maximumFractionDigits: 2 }).format(kopecks / 100);
}

const TEXT = {
  en: {
    addTokens: 'Add Tokens',
    title: 'Buy tokens',
    description: 'Card payment through the payment provider. Price: 0.7 ₽ per token.',
    presets: ['50', '100', '500', '1,000', '2,500', '5,000', '10,000'],
    total: (n: number) => `${rub(n, 'en')} ₽`,
    pay: (n: number) => `Pay ${rub(n, 'en')} ₽`,
    payPlain: 'Pay',
    estimate: (n: number) => `≈ ${new Intl.NumberFormat('en').format(n)} ${n === 1 ? 'generation' : 'generations'}`,
    hint: 'About one generation per 5 tokens',
    cancel: 'Cancel',
    close: 'Close',
    dismiss: 'Dismiss',
    tryAgain: 'Try again',
    creating: 'Creating payment…',
    redirecting: 'Taking you to the payment page…',
    // SPEC sections 5 and 8, word for word.
    problem: 'Please check your input: 50 - 10,000 tokens',
    failure: 'Error creating payment. Please try again.',
    subscribe: 'Subscribe',
    subscribing: 'Creating payment…',
    header: (n: number) => `${n} ${n === 1 ? 'token' : 'tokens'}`,
  },
  ru: {
    addTokens: 'Купить токены',
    title: 'Купить токены',
    description: 'Оплата картой через платёжный сервис. Цена — 0,7 ₽ за токен.',
    presets: ['50', '100', '500', '1\u00a0000', '2\u00a0500', '5\u00a0000', '10\u00a0000'],
    total: (n: number) => `${rub(n, 'ru')} ₽`,
    pay: (n: number) => `Оплатить ${rub(n, 'ru')} ₽`,
    payPlain: 'Оплатить',
    estimate: (n: number) =>
      `≈ ${new Intl.NumberFormat('ru').format(n)} ${plural('ru', n, { one: 'генерация', few: 'генерации', many: 'генераций', other: 'генерации' })}`,
    hint: 'Примерно одна генерация на каждые 5 токенов',
    cancel: 'Отмена',
    close: 'Закрыть',
    dismiss: 'Закрыть',
    tryAgain: 'Повторить',
    creating: 'Создаём платёж…',
    redirecting: 'Переходим на страницу оплаты…',
    problem: 'Проверьте введённые данные: от 50 до 10 000 токенов',
    failure: 'Ошибка при создании платежа. Попробуйте ещё раз.',
    subscribe: 'Оформить',
    subscribing: 'Создаём платёж…',
    header: (n: number) => `${n} ${plural('ru', n, { one: 'токен', few: 'токена', many: 'токенов', other: 'токена' })}`,
  },
};

/** The amounts a person picks: SPEC 9's presets at both ends, and typed ones around them. */
const AMOUNTS = [
  { value: '49', how: 'type' },
  { value: '10001', how: 'type' },
  { value: '100.5', how: 'type' },
  { value: '1001', how: 'type' },
  { value: '50', how: 'preset' },
  { value: '10000', how: 'preset' },
] as const;
type AmountSample = (typeof AMOUNTS)[number];

/** SPEC section 5: a whole number of tokens from 50 to 10000. */
const wholeNumber = (text: string) => (/^\d+$/.test(text.trim()) ? Number(text.trim()) : null);
const acceptable = (text: string) => {
  const n = wholeNumber(text);
  return n !== null && n >= 50 && n <= 10000;
};

type Phase = 'closed' | 'editing' | 'creating' | 'redirecting' | 'failed';
/** What SPEC 4 says has happened so far: the oracle the rows read. */
interface Facts {
  phase: Phase;
  amount: string;
  problem: boolean;
  order: { kind: 'tokens'; tokens: number } | { kind: 'subscription'; plan: string } | null;
  failure: boolean;
  /** Times the browser was sent to a confirmation page, and where last. */
  redirects: string[];
}

function factsOf(events: readonly AnyEventObject[]): Facts {
  const f: Facts = { phase: 'closed', amount: '100', problem: false, order: null, failure: false, redirects: [] };
  const reset = () => Object.assign(f, { amount: '100', problem: false, order: null, failure: false });
  const subscribe = (plan: string) => {
    reset();
    f.order = { kind: 'subscription', plan };
    f.phase = 'creating';
  };
  for (const event of events) {
    const phase = f.phase;
    const sub = f.order?.kind === 'subscription';
    switch (event.type) {
      case 'OPEN':
        if (phase === 'closed') {
          reset();
          f.phase = 'editing';
        }
        break;
      case 'CLOSE':
        if (phase === 'editing' || phase === 'failed') {
          reset();
          f.phase = 'closed';
        }
        break;
      case 'AMOUNT.CHANGE':
        if (phase === 'editing' || (phase === 'failed' && !sub)) {
          f.amount = (event as unknown as AmountSample).value;
          // #26: an amount that cannot be bought shows SPEC 5's message at once.
          f.problem = !acceptable(f.amount);
          f.failure = false;
          f.phase = 'editing';
        }
        break;
      case 'SUBMIT':
        if (phase === 'editing') {
          if (acceptable(f.amount)) {
            f.order = { kind: 'tokens', tokens: wholeNumber(f.amount)! };
            f.phase = 'creating';
          } else f.problem = true;
        } else if (phase === 'failed') {
          // Try again: the same order.
          f.failure = false;
          f.phase = 'creating';
        }
        break;
      case 'SUBSCRIBE':
        if (phase === 'closed' || (phase === 'failed' && sub)) subscribe((event as unknown as { plan: string }).plan);
        break;
      default:
        if (event.type.startsWith('xstate.done.')) {
          f.phase = 'redirecting';
          f.redirects.push((replyOf<Reply>(event).body as { confirmationUrl: string }).confirmationUrl);
        } else if (event.type.startsWith('xstate.error.')) {
          f.phase = 'failed';
          f.failure = true;
        }
    }
  }
  return f;
}

interface Screen extends OpenApp {
  restore(): void;
}

// Plain DOM look-ups: role queries over the whole screen are slow enough, retried after every
// change, to hold back the very rendering a step waits for.
const dialog = () => document.querySelector<HTMLElement>('[role="dialog"]');
const buttonIn = (container: Element, name: string) =>
  [...container.querySelectorAll<HTMLButtonElement>('button')].find(
    (button) => button.textContent === name || button.getAttribute('aria-label') === name,
  ) ?? null;
const addTokens = () => screen.getByTestId<HTMLButtonElement>('add-tokens');
/** Behind an open modal the page is hidden from the user (and cannot be pointed at). */
const hidden = (element: Element) => element.closest('[aria-hidden="true"]') !== null;
const amountField = () => screen.getByTestId<HTMLInputElement>('tokens-amount');
const pay = () => screen.getByTestId<HTMLButtonElement>('purchase-pay');
const subscribeButton = (plan: string) => screen.getByTestId<HTMLButtonElement>(`subscribe-${plan}`);

/** Whatever the state: the address, the header balance, the redirects so far, nothing unasked. */
function always(ui: Screen, reached: Reached) {
  const f = factsOf(reached.events);
  expect(ui.location()).toBe('/billing');
  expect(screen.getByTestId('token-balance').textContent).toBe(TEXT[reached.lang].header(BALANCE));
  // SPEC 4: the browser is sent to the provider's page once per created payment, nowhere else.
  expect(ui.assigned.mock.calls.map(([url]) => url)).toEqual(f.redirects);
  expect(ui.api.strays()).toEqual([]);
}

/** The modal of SPEC 2 with what the user chose (SPEC 5 and 9). */
function modalShows(reached: Reached, busy: boolean) {
  const f = factsOf(reached.events);
  const text = TEXT[reached.lang];
  const modal = dialog()!;
  expect(modal).toBeTruthy();
  expect(modal.querySelector('h2')?.textContent).toBe(text.title);
  // SPEC 9: 0.7 RUB per token, paid by card through the provider.
  expect(modal.textContent).toContain(text.description);
  expect(amountField().value).toBe(f.amount);
  // SPEC 9: presets 50 .. 10000; the chosen one is pressed.
  const presets = [...modal.querySelectorAll<HTMLButtonElement>('[data-testid^="preset-"]')];
  expect(presets.map((b) => b.textContent)).toEqual(text.presets);
  const n = wholeNumber(f.amount);
  expect(presets.filter((b) => b.getAttribute('aria-pressed') === 'true').map((b) => b.dataset.testid)).toEqual(
    n !== null && [50, 100, 500, 1000, 2500, 5000, 10000].includes(n) ? [`preset-${n}`] : [],
  );
  // SPEC 9: total = tokens × 0.7 RUB; no price for an amount that cannot be bought (#26).
  expect(screen.getByTestId('purchase-total').textContent).toBe(acceptable(f.amount) ? text.total(n!) : '—');
  // SPEC 9: about one generation per 5 tokens, for an amount that can be bought.
  expect(screen.queryByTestId('purchase-estimate')?.textContent ?? null).toBe(
    acceptable(f.amount) ? text.estimate(Math.floor(n! / 5)) : null,
  );
  expect(modal.textContent).toContain(text.hint);
  // SPEC 5's message as soon as the amount cannot be bought, and only then.
  expect(screen.getByTestId('purchase-problem').textContent).toBe(f.problem ? text.problem : '');
  // SPEC 8's alert after a failed creation.
  expect(screen.queryByTestId('purchase-failure')?.textContent ?? null).toBe(f.failure ? text.failure : null);
  // SPEC 4: creating the payment disables the buttons.
  expect(amountField().matches(':disabled')).toBe(busy);
  expect(pay().disabled).toBe(busy || !acceptable(f.amount));
  expect(buttonIn(modal, text.cancel)?.disabled).toBe(busy);
  expect(buttonIn(modal, text.close)?.disabled).toBe(busy);
  presets.forEach((b) => expect(b.matches(':disabled')).toBe(busy));
  if (!busy) expect(pay().textContent).toBe(acceptable(f.amount) ? text.pay(n!) : text.payPlain);
  return f;
}

/** The catalogue's Subscribe buttons (no subscription: pro and premium can be chosen). */
function subscribeShows(reached: Reached, busy: boolean) {
  const text = TEXT[reached.lang];
  for (const plan of ['pro', 'premium']) {
    expect(subscribeButton(plan).disabled).toBe(busy);
    expect(subscribeButton(plan).textContent).toBe(busy ? text.subscribing : text.subscribe);
  }
}

/** The last create call carried the order on screen (SPEC 7: tokensAmount, returnUrl). */
function orderSent(ui: Screen, f: Facts) {
  if (f.order?.kind === 'tokens') {
    expect(ui.api.sent('POST', TOKEN_ENDPOINT).at(-1)?.body).toEqual({
      tokensAmount: f.order.tokens,
      returnUrl: returnUrl(),
    });
  } else {
    expect(ui.api.sent('POST', PLAN_ENDPOINT).at(-1)?.body).toEqual({ plan: f.order?.plan, returnUrl: returnUrl() });
  }
}

export const model: ScreenModel<Screen> = {
  machine: purchaseMachine,
  events: (snapshot: AnyMachineSnapshot) => {
    const c = snapshot.context as PurchaseContext;
    const tokensModal = snapshot.matches('editing') || (c.order?.kind === 'tokens' && !snapshot.matches('closed'));
    const editable = snapshot.matches('editing') || (snapshot.matches('failed') && c.order?.kind === 'tokens');
    // The browser is leaving for the checkout page: nothing more is done here.
    if (snapshot.matches('redirecting')) return [];
    return [
      { type: 'OPEN' },
      { type: 'CLOSE' },
      { type: 'SUBMIT' },
      // The amount is typed or picked while the modal is open (disabled while creating).
      ...(snapshot.matches('editing') ? AMOUNTS : editable || tokensModal ? [AMOUNTS[4]] : []).map((a) => ({
        type: 'AMOUNT.CHANGE' as const,
        ...a,
      })),
      // The catalogue is behind the modal while it is open.
      ...(tokensModal ? [] : [{ type: 'SUBSCRIBE' as const, plan: 'pro' as const }]),
      ...(c.order?.kind === 'subscription'
        ? answers(snapshot, 'createPayment', { output: outputOf(PLAN_CREATED) }, PLAN_CREATED)
        : answers(snapshot, 'createPayment', { output: outputOf(TOKENS_CREATED) }, TOKENS_CREATED)),
      ...answers(snapshot, 'createPayment', { error: errorOfReply(REFUSED) }, REFUSED),
    ];
  },
  serializeState: (snapshot: AnyMachineSnapshot) => {
    const c = snapshot.context as PurchaseContext;
    return JSON.stringify([snapshot.value, c.amount, c.problem !== null, c.failure !== null, c.order?.kind ?? null]);
  },
  // Each amount typed, and each submit of it, is its own transition (SPEC 5's bounds).
  edgeKey: (before: AnyMachineSnapshot, event: AnyEventObject, after: AnyMachineSnapshot) => {
    const b = before.context as PurchaseContext;
    const a = after.context as PurchaseContext;
    const editing = before.matches('editing');
    return JSON.stringify([
      before.value,
      event.type.replace(/^(xstate\.(done|error)\.actor)\..*$/, '$1'),
      after.value,
      b.order?.kind ?? null,
      a.problem !== null,
      editing && event.type === 'AMOUNT.CHANGE' ? (event as unknown as AmountSample).value : null,
      editing && event.type === 'SUBMIT' ? b.amount : null,
    ]);
  },
  async open(lang: Language): Promise<Screen> {
    const api = new FakeApi()
      .on('GET', '/api/payments/plans', json({ success: true, data: { plans: PLANS } }))
      .on('GET', '/api/payments/history', json({ success: true, data: { payments: [], pagination: NO_PAGES } }))
      .on('GET', '/api/payments/subscription', json({ success: true, data: null }))
      .on('GET', '/api/ledger', json({ success: true, data: { entries: [], pagination: NO_PAGES } }))
      .hold('POST', TOKEN_ENDPOINT)
      .hold('POST', PLAN_ENDPOINT);
    // A failed creation is logged (the alert is what the user sees).
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    const ui = await openApp('/billing', { lang, api });
    await waitFor(() => expect(screen.getByTestId('subscribe-pro')).toBeTruthy(), { timeout: 15_000 });
    return {
      ...ui,
      restore: () => {
        warn.mockRestore();
      },
    };
  },
  close: (ui: Screen) => {
    ui.close();
    ui.restore();
  },
  async perform(ui: Screen, event: AnyEventObject, before: AnyMachineSnapshot) {
    const { user, api } = ui;
    const text = TEXT[ui.lang];
    const c = before.context as PurchaseContext;
    const open = dialog() !== null;
    const busy = before.matches('creating') || before.matches('redirecting');
    const failure = () => screen.queryByTestId('subscribe-failure');
    switch (event.type) {
      case 'OPEN':
        // Behind the open modal the page cannot be reached.
        if (open) return expect(hidden(addTokens())).toBe(true);
        return user.click(addTokens());
      case 'CLOSE':
        if (open && busy) {
          expect(buttonIn(dialog()!, text.cancel)?.disabled).toBe(true);
          return user.keyboard('{Escape}');
        }
        if (open && before.matches('failed')) return user.click(buttonIn(dialog()!, text.close)!);
        if (open) return user.click(buttonIn(dialog()!, text.cancel)!);
        if (failure()) return user.click(buttonIn(failure()!, text.dismiss)!);
        return expect(dialog()).toBeNull();
      case 'AMOUNT.CHANGE': {
        const { value, how } = event as unknown as AmountSample;
        if (busy) return expect(amountField().matches(':disabled')).toBe(true);
        if (how === 'preset') return user.click(screen.getByTestId(`preset-${value}`));
        await user.clear(amountField());
        return user.type(amountField(), value);
      }
      case 'SUBMIT':
        if (open && busy) return expect(pay().disabled).toBe(true);
        if (open) return user.click(pay());
        if (failure()) return user.click(buttonIn(failure()!, text.tryAgain)!);
        return expect(screen.queryByTestId('purchase-pay')).toBeNull();
      case 'SUBSCRIBE': {
        const button = subscribeButton((event as unknown as { plan: string }).plan);
        if (busy) return expect(button.disabled).toBe(true);
        return user.click(button);
      }
      default:
        await api.answer(
          'POST',
          c.order?.kind === 'subscription' ? PLAN_ENDPOINT : TOKEN_ENDPOINT,
          replyOf<Reply>(event),
        );
    }
  },
  sees: [
    [
      'closed',
      {
        says: 'SPEC 2: the billing screen with Add Tokens; no modal; the plans can be subscribed to',
        check: (ui: Screen, reached: Reached) => {
          expect(factsOf(reached.events).phase).toBe('closed');
          expect(dialog()).toBeNull();
          expect(addTokens().textContent).toBe(TEXT[reached.lang].addTokens);
          expect(hidden(addTokens())).toBe(false);
          expect(screen.queryByTestId('subscribe-failure')).toBeNull();
          subscribeShows(reached, false);
        },
      },
    ],
    [
      'editing',
      {
        says: 'SPEC 2/5/9: presets 50..10000 (default 100), total = tokens × 0.7, SPEC 5’s message after a bad submit',
        check: (_ui: Screen, reached: Reached) => {
          const f = modalShows(reached, false);
          expect(f.phase).toBe('editing');
        },
      },
    ],
    [
      'creating',
      {
        says: 'SPEC 4: creating the payment disables the buttons; the order on screen is sent',
        check: (ui: Screen, reached: Reached) => {
          const f = factsOf(reached.events);
          expect(f.phase).toBe('creating');
          orderSent(ui, f);
          if (f.order?.kind === 'tokens') {
            modalShows(reached, true);
            expect(pay().textContent).toBe(TEXT[reached.lang].creating);
          } else {
            expect(dialog()).toBeNull();
            subscribeShows(reached, true);
          }
        },
      },
    ],
    [
      'redirecting',
      {
        says: 'SPEC 4/7: the browser is sent to the confirmationUrl of the reply; nothing can be pressed meanwhile',
        check: (ui: Screen, reached: Reached) => {
          const f = factsOf(reached.events);
          expect(f.phase).toBe('redirecting');
          expect(ui.assigned).toHaveBeenLastCalledWith(f.order?.kind === 'tokens' ? TOKENS_CHECKOUT : PLAN_CHECKOUT);
          if (f.order?.kind === 'tokens') {
            modalShows(reached, true);
            expect(pay().textContent).toBe(TEXT[reached.lang].redirecting);
          } else {
            expect(dialog()).toBeNull();
            subscribeShows(reached, true);
          }
        },
      },
    ],
    [
      'failed',
      {
        says: 'SPEC 4/8: loading stops and the alert "Error creating payment. Please try again." appears',
        check: (_ui: Screen, reached: Reached) => {
          const f = factsOf(reached.events);
          const text = TEXT[reached.lang];
          expect(f.phase).toBe('failed');
          if (f.order?.kind === 'tokens') {
            modalShows(reached, false);
            expect(screen.getByTestId('purchase-failure').getAttribute('role')).toBe('alert');
          } else {
            expect(dialog()).toBeNull();
            const alert = screen.getByTestId('subscribe-failure');
            expect(alert.getAttribute('role')).toBe('alert');
            expect(alert.querySelector('span')?.textContent).toBe(text.failure);
            expect(buttonIn(alert, text.tryAgain)).not.toBeNull();
            expect(buttonIn(alert, text.dismiss)).not.toBeNull();
            subscribeShows(reached, false);
          }
        },
      },
    ],
  ],
  always: { says: 'SPEC 2/4: /billing, the header balance, redirects only to a created payment', check: always },
};

describeScreenModel('token purchase', model);

describeInvariants('token purchase', model, [
  {
    name: 'a refused purchase never leaves the modal in creating: loading stops and the alert is set',
    step: (_before, event, after) =>
      !event.type.startsWith('xstate.error.') ||
      (after.matches('failed') && (after.context as PurchaseContext).failure !== null),
  },
  {
    name: 'the browser is sent to the provider only for 50..10000 whole tokens (or a plan)',
    step: (before, _event, after) => {
      if (before.matches('creating') || !after.matches('creating')) return true;
      const order = (after.context as PurchaseContext).order;
      if (order?.kind !== 'tokens') return order?.kind === 'subscription';
      return Number.isInteger(order.tokensAmount) && order.tokensAmount >= 50 && order.tokensAmount <= 10000;
    },
  },
  {
    name: 'a submit with a bad amount shows SPEC 5’s message and creates nothing',
    step: (before, event, after) =>
      !(
        before.matches('editing') &&
        event.type === 'SUBMIT' &&
        !acceptable((before.context as PurchaseContext).amount)
      ) ||
      (after.matches('editing') &&
        (after.context as PurchaseContext).problem === 'Please check your input: 50 - 10,000 tokens'),
  },
  {
    name: 'while the amount is edited, SPEC 5’s message shows exactly when the amount cannot be bought (#26)',
    state: (snapshot) => {
      if (!snapshot.matches('editing')) return true;
      const c = snapshot.context as PurchaseContext;
      return (c.problem !== null) === !acceptable(c.amount);
    },
  },
  {
    name: 'the redirect follows only the server’s answer',
    step: (before, event, after) =>
      !after.matches('redirecting') || before.matches('redirecting') || event.type.startsWith('xstate.done.actor.'),
  },
  {
    name: 'nothing the user does while the payment is created changes the order',
    step: (before, event, after) =>
      !before.matches('creating') ||
      event.type.startsWith('xstate.') ||
      JSON.stringify(before.context) === JSON.stringify(after.context),
  },
]);

describe('token purchase: SPEC 5 on what else a person may type', () => {
  afterEach(() => cleanup());

  for (const lang of ['en', 'ru'] as const) {
    it(`[${lang}] nothing, blanks, words, signs and exponents are refused; a padded whole number is bought`, async () => {
      const ui = await model.open(lang);
      const text = TEXT[lang];
      try {
        await ui.user.click(addTokens());
        await waitFor(() => expect(dialog()).not.toBeNull());
        for (const typed of ['', ' ', 'abc', '-100', '1e3', '99.9']) {
          await ui.user.clear(amountField());
          if (typed) await ui.user.type(amountField(), typed);
          await ui.user.click(pay());
          await waitFor(() => expect(screen.getByTestId('purchase-problem').textContent).toBe(text.problem));
          expect(amountField().value).toBe(typed);
        }
        expect(ui.api.sent('POST', TOKEN_ENDPOINT)).toEqual([]);
        await ui.user.clear(amountField());
        await ui.user.type(amountField(), ' 2500 ');
        expect(screen.getByTestId('purchase-problem').textContent).toBe('');
        await ui.user.click(pay());
        await waitFor(() =>
          expect(ui.api.sent('POST', TOKEN_ENDPOINT).at(-1)?.body).toEqual({
            tokensAmount: 2500,
            returnUrl: returnUrl(),
          }),
        );
        expect(pay().textContent).toBe(text.creating);
      } finally {
        model.close!(ui);
      }
    });
  }
});

describe('token purchase: after a failed payment (SPEC 4, 8)', () => {
  afterEach(() => cleanup());

  it('[en] a new amount typed over the alert is the one paid for, and the alert goes', async () => {
    const ui = await model.open('en');
    const text = TEXT.en;
    try {
      await ui.user.click(addTokens());
      await waitFor(() => expect(dialog()).not.toBeNull());
      await ui.user.click(pay());
      await ui.api.answer('POST', TOKEN_ENDPOINT, REFUSED);
      await waitFor(() => expect(screen.getByTestId('purchase-failure').textContent).toBe(text.failure));
      await ui.user.clear(amountField());
      await ui.user.type(amountField(), '700');
      expect(amountField().value).toBe('700');
      expect(screen.queryByTestId('purchase-failure')).toBeNull();
      expect(pay().textContent).toBe(text.pay(700));
      await ui.user.click(pay());
      await waitFor(() =>
        expect(ui.api.sent('POST', TOKEN_ENDPOINT).at(-1)?.body).toEqual({ tokensAmount: 700, returnUrl: returnUrl() }),
      );
    } finally {
      model.close!(ui);
    }
  });

  it('[ru] choosing the other plan after a failed subscription orders that plan', async () => {
    const ui = await model.open('ru');
    try {
      await ui.user.click(subscribeButton('pro'));
      await waitFor(() =>
        expect(ui.api.sent('POST', PLAN_ENDPOINT).at(-1)?.body).toEqual({ plan: 'pro', returnUrl: returnUrl() }),
      );
      await ui.api.answer('POST', PLAN_ENDPOINT, REFUSED);
      await waitFor(() => expect(screen.getByTestId('subscribe-failure')).toBeTruthy());
      await ui.user.click(subscribeButton('premium'));
      await waitFor(() =>
        expect(ui.api.sent('POST', PLAN_ENDPOINT).at(-1)?.body).toEqual({ plan: 'premium', returnUrl: returnUrl() }),
      );
      await ui.api.answer('POST', PLAN_ENDPOINT, PLAN_CREATED);
      await waitFor(() => expect(ui.assigned).toHaveBeenLastCalledWith(PLAN_CHECKOUT));
    } finally {
      model.close!(ui);
    }
  });

  it('[en] the failure is logged for the operator with the error the API gave', async () => {
    const ui = await model.open('en');
    try {
      await ui.user.click(subscribeButton('premium'));
      await ui.api.answer('POST', PLAN_ENDPOINT, REFUSED);
      await waitFor(() => expect(screen.getByTestId('subscribe-failure')).toBeTruthy());
      expect(console.warn).toHaveBeenCalledWith(
        '[purchase] creating the payment failed',
        expect.objectContaining({ status: 502, code: 'PROVIDER_ERROR' }),
      );
    } finally {
      model.close!(ui);
    }
  });
});
