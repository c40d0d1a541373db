import { render, screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeAll, describe, expect, it } from 'vitest';
import { createActor, fromPromise } from 'xstate';
import { PLAN_LIST } from '../../src/domain/billing';
import { summarizeSubscription } from '../../src/domain/subscription';
import { initI18n } from '../../src/i18n';
import { purchaseMachine, type Order } from '../../src/machines/purchase';
import { HistoryTable } from '../../src/ui/billing/HistoryTable';
import { PlanCatalogue } from '../../src/ui/billing/PlanCatalogue';
import { PurchaseModal } from '../../src/ui/billing/PurchaseModal';
import { UsageCard } from '../../src/ui/billing/UsageCard';

beforeAll(async () => {
  await initI18n('ru');
});

describe('billing views (Russian)', () => {
  it('the usage card warns under 50 tokens and opens the purchase', async () => {
    let opened = 0;
    const { rerender } = render(
      <UsageCard balance={49} summary={summarizeSubscription(null, 49)} onAddTokens={() => (opened += 1)} />,
    );
    expect(screen.getByTestId('usage-balance').textContent).toBe('49 токенов');
    expect(screen.getByTestId('low-balance').textContent).toContain('меньше 50 токенов');
    expect(screen.getByTestId('usage-rate').textContent).toBe('Тариф: 0,7 ₽ за токен');
    expect(screen.getByTestId('active-source').textContent).toBe('Активный источник: Оплата по мере использования');
    await userEvent.click(screen.getByRole('button', { name: 'Купить токены' }));
    expect(opened).toBe(1);
    rerender(<UsageCard balance={51} summary={summarizeSubscription(null, 51)} onAddTokens={() => {}} />);
    expect(screen.queryByTestId('low-balance')).toBeNull();
    expect(screen.getByTestId('usage-balance').textContent).toBe('51 токен');
  });

  it('the history shows the amount with the rouble sign, in words and Russian plurals', () => {
    render(
      <HistoryTable
        payments={[
          {
            id: 'a',
            createdAt: '2026-11-23T10:00:00.000Z',
            packageType: 'tokens',
            description: 'Purchase of 100 tokens',
            tokensAmount: 100,
            amount: '70.00',
            currency: 'RUB',
            status: 'succeeded',
          },
          {
            id: 'b',
            createdAt: '2026-11-22T10:00:00.000Z',
            packageType: 'pro',
            description: 'Pro subscription',
            tokensAmount: 0,
            amount: '1.00',
            currency: 'RUB',
            status: 'canceled',
          },
        ]}
      />,
    );
    const rows = screen.getAllByTestId('history-row');
    expect(rows[0]?.textContent).toContain('Покупка 100 токенов');
    expect(rows[0]?.textContent).toContain('70,00 ₽');
    expect(rows[0]?.textContent).toContain('Оплачен');
    expect(rows[1]?.textContent).toContain('Подписка Pro');
    expect(rows[1]?.textContent).toContain('Отменён');
  });

  // Issue #25 item 2: the card check's refund state is shown in the payment history.
  it("the history shows a payment's refund: in progress, done, or declined and asked again", () => {
    const base = { createdAt: '2026-11-23T10:00:00.000Z', currency: 'RUB' as const, status: 'succeeded' as const };
    const view = render(
      <HistoryTable
        payments={[
          {
            ...base,
            id: 'c',
            packageType: 'pro',
            description: 'Pro',
            tokensAmount: 1000,
            amount: '1.00',
            refund: { status: 'pending', amount: '1.00' },
          },
          {
            ...base,
            id: 'd',
            packageType: 'pro',
            description: 'Pro',
            tokensAmount: 1000,
            amount: '1.00',
            refund: { status: 'canceled', amount: '1.00' },
          },
          {
            ...base,
            id: 'e',
            packageType: 'tokens',
            description: 'Tokens',
            tokensAmount: 1000,
            amount: '700.00',
            refund: { status: 'succeeded', amount: '350.00' },
          },
          {
            ...base,
            id: 'f',
            packageType: 'tokens',
            description: 'Tokens',
            tokensAmount: 100,
            amount: '70.00',
            refund: null,
          },
        ]}
      />,
    );
    const rows = within(view.container).getAllByTestId('history-row');
    expect(rows[0]?.textContent).toContain('Возврат 1,00 ₽ в обработке');
    expect(rows[1]?.textContent).toContain('Банк отклонил возврат 1,00 ₽; пробуем ещё раз');
    expect(rows[2]?.textContent).toContain('Возвращено 350,00 ₽');
    expect(rows[3]?.textContent).not.toContain('озврат');
  });

  it('the plan catalogue says SPEC section 9 and subscribes to pro and premium only', async () => {
    const chosen: string[] = [];
    render(
      <PlanCatalogue
        plans={[...PLAN_LIST]}
        current="starter"
        busy={false}
        canSubscribe
        onSubscribe={(p) => chosen.push(p)}
      />,
    );
    expect(screen.getByTestId('plan-starter-price').textContent).toBe('Бесплатно');
    expect(screen.getByTestId('plan-starter').textContent).toContain('50 токенов при регистрации');
    expect(screen.getByTestId('plan-starter').textContent).toContain('История за 7 дней');
    expect(screen.getByTestId('plan-pro-price').textContent).toBe('700 ₽/месяц');
    expect(screen.getByTestId('plan-pro').textContent).toContain('1\u00a0000 токенов ежемесячно');
    expect(screen.getByTestId('plan-pro').textContent).toContain('Пробный период 7 дней');
    expect(screen.getByTestId('plan-premium-price').textContent).toBe('1\u00a0400 ₽/месяц');
    expect(screen.getByTestId('plan-premium').textContent).toContain('Неиспользованные токены переносятся');
    expect(screen.getByTestId('plan-payg-price').textContent).toBe('0,7 ₽ за токен');
    expect(screen.queryByTestId('subscribe-starter')).toBeNull();
    expect(screen.queryByTestId('subscribe-payg')).toBeNull();
    await userEvent.click(screen.getByRole('button', { name: 'Оформить: Premium' }));
    expect(chosen).toEqual(['premium']);
  });

  it('the purchase modal: default 100, the price as the user types, SPEC message, buttons disabled while creating, the alert', async () => {
    const inputs: unknown[] = [];
    let fail: (error: Error) => void = () => undefined;
    const createPayment = fromPromise<never, unknown>(({ input }) => {
      inputs.push(input);
      return new Promise<never>((_, reject) => {
        fail = reject;
      });
    });
    const actor = createActor(purchaseMachine.provide({ actors: { createPayment } as never })).start();
    render(<PurchaseModal actor={actor} />);
    actor.send({ type: 'OPEN' });
    const input = await screen.findByLabelText('Количество токенов');
    expect((input as HTMLInputElement).value).toBe('100');
    expect(screen.getByTestId('purchase-total').textContent).toBe('70,00 ₽');
    expect(screen.getByTestId('purchase-estimate').textContent).toBe('≈ 20 генераций');
    expect(screen.getByText(/Примерно одна генерация на каждые 5 токенов/)).toBeTruthy();
    await userEvent.clear(input);
    await userEvent.type(input, '1001');
    expect(screen.getByTestId('purchase-total').textContent).toBe('700,70 ₽');
    await userEvent.clear(input);
    await userEvent.type(input, '10001');
    await userEvent.click(screen.getByTestId('purchase-pay'));
    expect(screen.getByTestId('purchase-problem').textContent).toBe(
      'Проверьте введённые данные: от 50 до 10 000 токенов',
    );
    await userEvent.click(screen.getByTestId('preset-500'));
    expect(screen.getByTestId('preset-500').getAttribute('aria-pressed')).toBe('true');
    await userEvent.click(screen.getByTestId('purchase-pay'));
    expect(inputs.at(-1)).toEqual({ order: { kind: 'tokens', tokensAmount: 500 } satisfies Order });
    expect(screen.getByTestId<HTMLButtonElement>('purchase-pay').disabled).toBe(true);
    expect(screen.getByTestId('purchase-pay').textContent).toBe('Создаём платёж…');
    fail(new Error('Internal server error'));
    expect(await screen.findByRole('alert')).toBeTruthy();
    expect(screen.getByRole('alert').textContent).toBe('Ошибка при создании платежа. Попробуйте ещё раз.');
    expect(screen.getByTestId<HTMLButtonElement>('purchase-pay').disabled).toBe(false);
  });
});
