// One file: one chart's walk: its table of what each state shows (SPEC) and the steps that drive it
// read side by side.
import { cleanup, screen, waitFor } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { AnyEventObject, AnyMachineSnapshot } from 'xstate';
import type { Payment } from '../../src/domain/billing';
import type { Language } from '../../src/i18n';
import { paymentStatusMachine, type PaymentStatusContext } from '../../src/machines/payment-status';
import { openApp, signedInUser, type OpenApp } from './support/app';
import { apiError, FakeApi, json, type Reply } from './support/fake-api';
import { errorOfReply, plural } from './support/fixtures';
import {
  answers,
  describeInvariants,
  describeScreenModel,
  replyOf,
  type Reached,
  type ScreenModel,
} from './support/model';

/*
 * The payment status page (SPEC sections 2 "Payment status page", 4 "Payment page", 8) walked
 * along its statechart on the real screen at /payment-status?paymentId=..&status=.. . The
 * query's status is only a hint: the page asks our server (GET /api/payments/{id}) and shows
 * what the server says. What is expected is written here from SPEC, the Russian wording by
 * hand from the product's ru texts.
 */

// The first path opens the app cold (the screen's code is loaded on demand).
vi.setConfig({ testTimeout: 30_000 });

const PAYMENT_ID = '2f9c7a10-5b4e-4d1a-9c3e-000000000042';
const ENDPOINT = `/api/payments/${PAYMENT_ID}`;
/** The balance before, and after the session reads the user again once the payment is paid. */
const BALANCE_BEFORE = 50;
const BALANCE_PAID = 150;
/** The page keeps checking an undecided payment about a minute: 30 checks, 2 s apart. */
const MAX_CHECKS = 30;
const RECHECK_MS = 2000;

const payment = (status: Payment['status']): Payment => ({
  id: PAYMENT_ID,
  status,
  packageType: 'tokens',
  tokensAmount: 100,
  amount: '70.00',
  currency: 'RUB',
  createdAt: '2026-11-23T12:00:00.000Z',
  cancellationReason: status === 'canceled' ? 'insufficient_funds' : null,
  credited: status === 'succeeded',
});
const SUCCEEDED = payment('succeeded');
const CANCELED = payment('canceled');
const PENDING = payment('pending');
const BROKEN = apiError(500, 'INTERNAL', 'Internal server error');

const TEXT = {
  en: {
    loading: 'Checking the payment status…',
    success: 'Payment Successful',
    added: (n: number) => `${n} ${n === 1 ? 'token has' : 'tokens have'} been added to your balance.`,
    amount: '70.00 ₽',
    failed: 'Payment Failed',
    // SPEC section 8, word for word.
    paymentFailed: 'Payment failed. Please try again.',
    unknown: 'Unknown payment status.',
    checkFailed: 'Error checking payment status.',
    reason: 'Reason: insufficient funds',
    toDashboard: 'Go to Dashboard',
    toBilling: 'Go to Billing',
    tryAgain: 'Try Again',
    goDashboard: 'Go to Dashboard',
    pending: 'Payment is being processed',
    pendingText: 'The bank has not confirmed the payment yet. This usually takes up to a minute.',
    checkAgain: 'Check again',
    header: (n: number) => `${n} ${n === 1 ? 'token' : 'tokens'}`,
  },
  ru: {
    loading: 'Проверяем статус платежа…',
    success: 'Платёж прошёл успешно',
    added: (n: number) =>
      `На ваш баланс ${plural('ru', n, { one: 'зачислен', few: 'зачислено', many: 'зачислено', other: 'зачислено' })} ${n} ${plural('ru', n, { one: 'токен', few: 'токена', many: 'токенов', other: 'токена' })}.`,
    amount: '70,00 ₽',
    failed: 'Платёж не прошёл',
    paymentFailed: 'Платёж не прошёл. Попробуйте ещё раз.',
    unknown: 'Неизвестный статус платежа.',
    checkFailed: 'Ошибка при проверке статуса платежа.',
    reason: 'Причина: недостаточно средств',
    toDashboard: 'На главную',
    toBilling: 'К оплате',
    tryAgain: 'Попробовать снова',
    goDashboard: 'Перейти на главную',
    pending: 'Платёж обрабатывается',
    pendingText: 'Банк ещё не подтвердил платёж. Обычно это занимает не больше минуты.',
    checkAgain: 'Проверить ещё раз',
    header: (n: number) => `${n} ${plural('ru', n, { one: 'токен', few: 'токена', many: 'токенов', other: 'токена' })}`,
  },
};

/** What the server has said so far, as SPEC reads it: the oracle the rows read. */
interface Facts {
  outcome: 'checking' | 'success' | 'failed' | 'pending';
  message: 'paymentFailed' | 'unknown' | 'checkFailed' | null;
  reason: boolean;
  /** Checks of the payment since the page opened or the user asked again. */
  checks: number;
  balance: number;
}

function factsOf(events: readonly AnyEventObject[], paymentId: string | null, status: string): Facts {
  // SPEC section 4 without a payment to confirm: success (status=success), failed (status=failed
  // or anything else, "Unknown payment status."); #26: status=failed says "Payment failed.".
  if (paymentId === null) {
    const outcome = status === 'success' ? 'success' : 'failed';
    const message = status === 'success' ? null : status === 'failed' ? 'paymentFailed' : 'unknown';
    return { outcome, message, reason: false, checks: 0, balance: BALANCE_BEFORE };
  }
  const f: Facts = { outcome: 'checking', message: null, reason: false, checks: 1, balance: BALANCE_BEFORE };
  for (const event of events) {
    if (event.type === 'RECHECK') f.checks += 1;
    else if (event.type === 'RETRY') {
      if (f.outcome === 'pending') {
        f.outcome = 'checking';
        f.checks = 1;
      }
    } else if (event.type.startsWith('xstate.error.')) {
      f.outcome = 'failed';
      f.message = 'checkFailed';
    } else if (event.type.startsWith('xstate.done.')) {
      const said = (replyOf<Reply>(event).body as { data: Payment }).data;
      if (said.status === 'succeeded') {
        // Paid: the session reads the user again and the header shows the new balance.
        f.outcome = 'success';
        f.balance = BALANCE_PAID;
      } else if (said.status === 'canceled') {
        f.outcome = 'failed';
        f.message = 'paymentFailed';
        f.reason = said.cancellationReason !== null;
      } else if (f.checks >= MAX_CHECKS) {
        f.outcome = 'pending';
      }
    }
  }
  return f;
}

const titleText = () => screen.getByTestId('payment-status-title').textContent;
const link = (name: string) => screen.getByRole('link', { name });

interface Screen extends OpenApp {
  paymentId: string | null;
  /** The status the return address carries. */
  status: string;
  restore(): void;
}

/** The page in the state the server's answers lead to (SPEC 4), under the header's balance. */
function shows(ui: Screen, reached: Reached, outcome: Facts['outcome']): Facts {
  const f = factsOf(reached.events, ui.paymentId, ui.status);
  const text = TEXT[reached.lang];
  expect(f.outcome, 'where the server’s answers lead (SPEC 4), where the chart went').toBe(outcome);
  expect(screen.getByTestId('token-balance').textContent).toBe(text.header(f.balance));
  expect(ui.api.strays()).toEqual([]);
  return f;
}

function failedShows(ui: Screen, reached: Reached) {
  const f = shows(ui, reached, 'failed');
  const text = TEXT[reached.lang];
  expect(screen.queryByTestId('payment-status-loading')).toBeNull();
  expect(titleText()).toBe(text.failed);
  expect(screen.getByRole('alert').textContent).toBe(text[f.message!]);
  expect(screen.queryByTestId('payment-status-reason')?.textContent ?? null).toBe(f.reason ? text.reason : null);
  // SPEC section 2: Try Again goes to billing, and Go to Dashboard.
  expect(link(text.tryAgain).getAttribute('href')).toBe('/billing');
  expect(link(text.goDashboard).getAttribute('href')).toBe('/dashboard');
  expect(screen.queryByRole('button', { name: text.checkAgain })).toBeNull();
}

const sees: ScreenModel<Screen>['sees'] = [
  [
    'loading',
    {
      says: 'SPEC 2/4: loading while the page confirms the payment with the server',
      check: (ui: Screen, reached: Reached) => {
        shows(ui, reached, 'checking');
        expect(screen.getByTestId('payment-status-loading').textContent).toBe(TEXT[reached.lang].loading);
        expect(screen.getByRole('status')).toBeTruthy();
        expect(screen.queryByTestId('payment-status-title')).toBeNull();
        // The payment named in the address is asked about (SPEC 2: the paymentId parameter);
        // between two checks of an undecided payment nothing is asked.
        expect(ui.api.isHeld('GET', ENDPOINT)).toBe(reached.matches({ loading: 'checking' }));
      },
    },
  ],
  [
    'success',
    {
      says: 'SPEC 2: "Payment Successful" with buttons to the dashboard and to billing; the balance is read again',
      check: (ui: Screen, reached: Reached) => {
        shows(ui, reached, 'success');
        const text = TEXT[reached.lang];
        expect(titleText()).toBe(text.success);
        expect(screen.getByTestId('payment-status-text').textContent).toBe(text.added(100));
        expect(screen.getByText(text.amount)).toBeTruthy();
        expect(link(text.toDashboard).getAttribute('href')).toBe('/dashboard');
        expect(link(text.toBilling).getAttribute('href')).toBe('/billing');
        expect(screen.queryByRole('alert')).toBeNull();
        expect(screen.queryByText(text.tryAgain)).toBeNull();
      },
    },
  ],
  [
    'failed',
    {
      says: 'SPEC 2/4/8: "Payment Failed", its message, Try Again (to billing) and Go to Dashboard',
      check: failedShows,
    },
  ],
  [
    'pending',
    {
      says: 'beyond SPEC (DESIGN): still undecided after every check, the page says so and offers to check again',
      check: (ui: Screen, reached: Reached) => {
        shows(ui, reached, 'pending');
        const text = TEXT[reached.lang];
        expect(titleText()).toBe(text.pending);
        expect(screen.getByText(text.pendingText)).toBeTruthy();
        expect(screen.getByRole('button', { name: text.checkAgain })).toBeTruthy();
        expect(link(text.toBilling).getAttribute('href')).toBe('/billing');
        // Every check was answered; none is waiting.
        expect(ui.api.isHeld('GET', ENDPOINT)).toBe(false);
      },
    },
  ],
];

function pageModel(query: { paymentId?: string; status?: string }): ScreenModel<Screen> {
  return {
    machine: paymentStatusMachine,
    input: query,
    events: (snapshot: AnyMachineSnapshot) => [
      // Only the running pause says it is over; a person can ask again only when offered.
      ...(snapshot.matches({ loading: 'waiting' }) ? [{ type: 'RECHECK' }] : []),
      { type: 'RETRY' },
      ...answers(snapshot, 'fetchPayment', { output: SUCCEEDED }, json({ success: true, data: SUCCEEDED })),
      ...answers(snapshot, 'fetchPayment', { output: CANCELED }, json({ success: true, data: CANCELED })),
      ...answers(snapshot, 'fetchPayment', { output: PENDING }, json({ success: true, data: PENDING })),
      ...answers(snapshot, 'fetchPayment', { error: errorOfReply(BROKEN) }, BROKEN),
    ],
    // The number of checks decides whether the page waits or says it is still pending.
    serializeState: (snapshot: AnyMachineSnapshot) => {
      const c = snapshot.context as PaymentStatusContext;
      return JSON.stringify([snapshot.value, snapshot.matches('loading') ? c.checks : null]);
    },
    // SPEC 8 words each failure: the declined payment and the failed check are distinct.
    edgeKey: (before: AnyMachineSnapshot, event: AnyEventObject, after: AnyMachineSnapshot) =>
      JSON.stringify([
        before.value,
        event.type.replace(/^(xstate\.(done|error)\.actor)\..*$/, '$1'),
        after.value,
        (after.context as PaymentStatusContext).message,
        // The server's answer itself (a chart that misread one would otherwise merge them).
        event.type.startsWith('xstate.done.') ? (replyOf<Reply>(event).body as { data: Payment }).data.status : null,
      ]),
    async open(lang: Language): Promise<Screen> {
      const api = new FakeApi().hold('GET', ENDPOINT);
      let reads = 0;
      // The second read of the user is the one after the payment was credited.
      api.on('GET', '/auth/me', () => {
        reads += 1;
        return json({
          success: true,
          data: signedInUser({ tokensAmount: reads === 1 ? BALANCE_BEFORE : BALANCE_PAID }),
        });
      });
      // The pause between checks runs on a clock the path moves (RECHECK), 2 s at a time.
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'], shouldAdvanceTime: true });
      // A failed check is logged besides being shown.
      const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
      // The provider's return says one thing (ru paths: failed, en paths: success); the
      // server's answer decides (the first ru path is paid, the first en path declined).
      const status = query.status ?? (lang === 'ru' ? 'failed' : 'success');
      const search = new URLSearchParams({ ...query, status });
      const ui = await openApp(`/payment-status?${search.toString()}`, { lang, api });
      await waitFor(() => expect(screen.getByTestId('payment-status')).toBeTruthy(), { timeout: 15_000 });
      return { ...ui, paymentId: query.paymentId ?? null, status, restore: () => warn.mockRestore() };
    },
    close: (ui: Screen) => {
      ui.close();
      ui.restore();
      vi.useRealTimers();
    },
    async perform(ui: Screen, event: AnyEventObject, before: AnyMachineSnapshot) {
      const text = TEXT[ui.lang];
      switch (event.type) {
        case 'RECHECK':
          await vi.advanceTimersByTimeAsync(RECHECK_MS);
          // The next check reaches the server.
          return void (await waitFor(() => expect(ui.api.isHeld('GET', ENDPOINT)).toBe(true)));
        case 'RETRY':
          if (!before.matches('pending')) {
            return expect(screen.queryByRole('button', { name: text.checkAgain })).toBeNull();
          }
          return ui.user.click(screen.getByRole('button', { name: text.checkAgain }));
        default:
          return void (await ui.api.answerAll('GET', ENDPOINT, replyOf<Reply>(event)));
      }
    },
    sees,
    maxSteps: 80,
  };
}

export const model = pageModel({ paymentId: PAYMENT_ID });
/** The same page opened without a payment id (the chart decides at once: no paths). */
const noIdModel = pageModel({});
const noIdUnknownModel = pageModel({ status: 'waiting_for_capture' });

describeScreenModel('payment status', model);

/** The row the model's table has for a state, checked once (paths that need no chart). */
async function seeOnce(ui: Screen, value: 'success' | 'failed', events: AnyEventObject[]) {
  const row = sees.find(([key]) => key === value)![1];
  const reached: Reached = { value, matches: (v) => v === value, events, lang: ui.lang };
  await waitFor(() => row.check(ui, reached), { timeout: 5000 });
}

describe('payment status page: what the chart has no path to', () => {
  afterEach(() => cleanup());

  // The ru page opens with status=failed, the en page with status=success (see pageModel).
  it('[ru] without a payment id, status=failed: Payment Failed, "Payment failed. Please try again.", nothing is asked', async () => {
    const ui = await noIdModel.open('ru');
    try {
      await seeOnce(ui, 'failed', []);
      expect(screen.getByRole('alert').textContent).toBe(TEXT.ru.paymentFailed);
      expect(ui.api.sent('GET', /^\/api\/payments\//)).toEqual([]);
    } finally {
      noIdModel.close!(ui);
    }
  });

  it('[en] without a payment id, status=success: Payment Successful, to the dashboard and to billing, nothing is asked', async () => {
    const ui = await noIdModel.open('en');
    try {
      await waitFor(() => expect(titleText()).toBe(TEXT.en.success));
      expect(link(TEXT.en.toDashboard).getAttribute('href')).toBe('/dashboard');
      expect(link(TEXT.en.toBilling).getAttribute('href')).toBe('/billing');
      // Nothing was confirmed: no amount is claimed, no alert.
      expect(screen.queryByTestId('payment-status-text')).toBeNull();
      expect(screen.queryByRole('alert')).toBeNull();
      expect(ui.api.sent('GET', /^\/api\/payments\//)).toEqual([]);
    } finally {
      noIdModel.close!(ui);
    }
  });

  for (const lang of ['ru', 'en'] as const) {
    it(`[${lang}] without a payment id, any other status: Payment Failed, "Unknown payment status."`, async () => {
      const ui = await noIdUnknownModel.open(lang);
      try {
        await seeOnce(ui, 'failed', []);
        expect(screen.getByRole('alert').textContent).toBe(TEXT[lang].unknown);
        expect(ui.api.sent('GET', /^\/api\/payments\//)).toEqual([]);
      } finally {
        noIdUnknownModel.close!(ui);
      }
    });
  }

  it('[en] Try Again goes to /billing, Go to Dashboard to /dashboard (SPEC 2)', async () => {
    const ui = await noIdUnknownModel.open('en');
    try {
      await ui.user.click(screen.getByRole('link', { name: TEXT.en.tryAgain }));
      await waitFor(() => expect(ui.location()).toBe('/billing'));
      ui.app.router.history.back();
      await waitFor(() => expect(screen.getByRole('link', { name: TEXT.en.goDashboard })).toBeTruthy());
      await ui.user.click(screen.getByRole('link', { name: TEXT.en.goDashboard }));
      await waitFor(() => expect(ui.location()).toBe('/dashboard'));
    } finally {
      noIdUnknownModel.close!(ui);
    }
  });

  // SPEC 4: "failed (status=failed or anything else, message "Unknown payment status.")": a
  // status the page does not know (YooKassa's waiting_for_capture) is not a failed check.
  it('[en] a status the page does not know: "Unknown payment status." (SPEC 4)', async () => {
    const ui = await model.open('en');
    try {
      const odd = json({
        success: true,
        data: { ...CANCELED, status: 'waiting_for_capture', cancellationReason: null },
      });
      await ui.api.answerAll('GET', ENDPOINT, odd);
      await waitFor(() => expect(titleText()).toBe(TEXT.en.failed));
      expect(screen.getByRole('alert').textContent).toBe(TEXT.en.unknown);
    } finally {
      model.close!(ui);
    }
  });

  it('[ru] after a confirmed payment: to the dashboard and to billing (SPEC 2)', async () => {
    const ui = await model.open('ru');
    try {
      const done = { type: 'xstate.done.actor.x', reply: json({ success: true, data: SUCCEEDED }) };
      await ui.api.answerAll('GET', ENDPOINT, replyOf<Reply>(done));
      await seeOnce(ui, 'success', [done]);
      await ui.user.click(screen.getByRole('link', { name: TEXT.ru.toBilling }));
      await waitFor(() => expect(ui.location()).toBe('/billing'));
      // Back on the page, it checks the payment again.
      ui.app.router.history.back();
      await ui.api.answerAll('GET', ENDPOINT, replyOf<Reply>(done));
      await waitFor(() => expect(screen.getByRole('link', { name: TEXT.ru.toDashboard })).toBeTruthy());
      await ui.user.click(screen.getByRole('link', { name: TEXT.ru.toDashboard }));
      await waitFor(() => expect(ui.location()).toBe('/dashboard'));
    } finally {
      model.close!(ui);
    }
  });
});

describeInvariants('payment status', model, [
  {
    name: 'success only when the server confirms the payment as succeeded',
    step: (before, event, after) =>
      !after.matches('success') ||
      before.matches('success') ||
      (event.type.startsWith('xstate.done.actor.') &&
        (event as unknown as { output: Payment }).output.status === 'succeeded'),
  },
  {
    name: 'the page leaves loading only on the server’s answer',
    step: (before, event, after) =>
      !before.matches('loading') || after.matches('loading') || event.type.startsWith('xstate.'),
  },
  {
    name: 'a failed page always says why',
    state: (snapshot) => !snapshot.matches('failed') || (snapshot.context as PaymentStatusContext).message !== null,
  },
  {
    name: 'an undecided payment is checked at most 30 times before the page says so',
    state: (snapshot) => (snapshot.context as PaymentStatusContext).checks <= MAX_CHECKS,
  },
]);
