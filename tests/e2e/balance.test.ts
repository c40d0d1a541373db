import type { Page } from 'playwright-core';
import { describe, expect, inject, it } from 'vitest';
import { signIn, useBrowser } from './browser';

/** Spends the whole balance of 50 through the API, from another tab: this one still shows 50. */
async function spendEverythingElsewhere(page: Page): Promise<void> {
  const other = await page.context().newPage();
  await other.goto(page.url());
  const statuses = await other.evaluate(async () => {
    const out: number[] = [];
    for (const [path, body] of [
      ['/api/stability-ultra/generate', { prompt: 'a', aspect_ratio: '1:1' }],
      ['/api/stability-ultra/generate', { prompt: 'b', aspect_ratio: '1:1' }],
      ['/api/stability-ultra/generate', { prompt: 'c', aspect_ratio: '1:1' }],
      ['/api/stability/text-to-image', { prompt: 'd', width: 1024, height: 1024 }],
    ] as const) {
      const response = await fetch(path, {
        method: 'POST',
        credentials: 'include',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      out.push(response.status);
    }
    return out;
  });
  expect(statuses).toEqual([200, 200, 200, 200]);
  await other.close();
}

describe('one balance, refusals and errors in the user language, in Chromium', () => {
  const baseUrl = inject('baseUrl');
  const browser = useBrowser();

  it('in Russian: a refused generation and a refused first chat message bring the header to the server balance, say why and point to /billing', async () => {
    const context = await browser().newContext({ viewport: { width: 1280, height: 800 } });
    // These tabs have no live event stream (a proxy that cuts it, say), so they keep the balance
    // they last heard until a refusal states the server's; with the stream every tab follows
    // the balance at once (issue #28; tests/e2e/jobs.test.ts).
    await context.route('**/api/events', (route) => route.abort());
    const page = await context.newPage();
    await page.goto(`${baseUrl}/dashboard`);
    await page.waitForURL(/\/login/);
    await signIn(page, 'e2e-balance-ru@example.com');
    await page.waitForURL(`${baseUrl}/dashboard`);
    const balance = page.getByTestId('token-balance');
    await balance.filter({ hasText: '50 токенов' }).waitFor();
    // The chat, open in another tab since before the spending: it still shows 50.
    const stale = await context.newPage();
    await stale.goto(`${baseUrl}/chat`);
    await stale.getByTestId('chat-empty').waitFor();
    const staleBalance = stale.getByTestId('token-balance');
    expect(await staleBalance.textContent()).toBe('50 токенов');

    await spendEverythingElsewhere(page);
    expect(await balance.textContent()).toBe('50 токенов');
    await page.getByLabel('Промпт', { exact: true }).fill('Маяк на скале');
    const generate = page.getByTestId('generate');
    expect(await generate.isDisabled()).toBe(false);
    await generate.click();
    const error = page.getByTestId('generation-error');
    await error.waitFor();
    expect(await error.textContent()).toBe('Недостаточно токенов: нужно 2 токена, а у вас только 0');
    await balance.filter({ hasText: '0 токенов' }).waitFor();
    expect(await generate.isDisabled()).toBe(true);
    const lowBalance = page.getByTestId('low-balance');
    expect(await lowBalance.textContent()).toBe(
      'Недостаточно токенов: эта модель стоит 2 токена, а на балансе 0. Пополнить токены',
    );
    expect(await lowBalance.getByRole('link').getAttribute('href')).toBe('/billing');

    // The stale chat tab: its first message is refused before anything is created.
    await stale.bringToFront();
    expect(await staleBalance.textContent()).toBe('50 токенов');
    const input = stale.getByTestId('chat-input');
    await input.fill('Расскажи про монады');
    await stale.getByTestId('chat-send').click();
    const failed = stale.getByTestId('failed-message');
    await failed.waitFor();
    expect(await stale.getByTestId('failed-reason').textContent()).toBe(
      'Недостаточно токенов: нужен 1 токен, а у вас только 0',
    );
    expect(await failed.getByRole('link', { name: 'Пополнить токены' }).getAttribute('href')).toBe('/billing');
    expect(await failed.getByRole('button', { name: 'Повторить' }).isVisible()).toBe(true);
    // Nothing typed is lost, nothing was created, and the header has the server's figure.
    expect(await input.inputValue()).toBe('Расскажи про монады');
    expect(stale.url()).toBe(`${baseUrl}/chat`);
    await staleBalance.filter({ hasText: '0 токенов' }).waitFor();
    expect(await stale.getByTestId('conversation-link').count()).toBe(0);
    const conversations = await stale.evaluate(async () => {
      const response = await fetch('/llm/conversations', { credentials: 'include' });
      return ((await response.json()) as { data: unknown[] }).data.length;
    });
    expect(conversations).toBe(0);
    // Send is disabled now, and says why next to it.
    expect(await stale.getByTestId('chat-send').isDisabled()).toBe(true);
    expect(await stale.getByTestId('low-balance').textContent()).toBe(
      'Недостаточно токенов, чтобы оплатить ответ. Пополнить токены',
    );
    await context.close();
  });

  it("on an English phone: a generation that fails without a message reads as the model's SPEC text", async () => {
    const context = await browser().newContext({ viewport: { width: 390, height: 844 }, isMobile: true });
    await context.addInitScript(() => localStorage.setItem('language', 'en'));
    const page = await context.newPage();
    await page.goto(`${baseUrl}/dashboard`);
    await page.waitForURL(/\/login/);
    await signIn(page, 'e2e-balance-en@example.com');
    await page.waitForURL(`${baseUrl}/dashboard`);
    await page.route('**/api/stability-ultra/generate', (route) => route.fulfill({ status: 500, body: '' }));
    await page.locator('label', { has: page.getByTestId('model-ultra') }).click();
    await page.getByLabel('Prompt', { exact: true }).fill('A dragon made of clouds');
    await page.getByTestId('generate').click();
    const error = page.getByTestId('generation-error');
    await error.waitFor();
    expect(await error.textContent()).toBe('Ultra generation failed');
    expect(await page.getByTestId('token-balance').textContent()).toBe('50 tokens');
    await context.close();
  });
});
