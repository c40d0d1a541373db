import { describe, expect, inject, it } from 'vitest';
import { screenshot, signIn, useBrowser } from './browser';

describe('sign-in, language and logout in Chromium', () => {
  const baseUrl = inject('baseUrl');
  const browser = useBrowser();

  it('sends a signed-out visitor to /login, signs in and comes back with 50 tokens; English survives a reload; logout ends it', async () => {
    const context = await browser().newContext({ viewport: { width: 1280, height: 800 }, locale: 'ru-RU' });
    const page = await context.newPage();

    await page.goto(`${baseUrl}/dashboard`);
    await page.waitForURL(/\/login\?redirect=%2Fdashboard/);
    await expect(page.getByRole('heading', { name: 'Создавайте изображения с помощью ИИ' }).isVisible()).resolves.toBe(
      true,
    );
    // The guard replaced the history entry: going back does not return to /dashboard.
    await page.goBack();
    expect(page.url()).not.toContain('/dashboard');
    await page.goto(`${baseUrl}/dashboard`);
    await page.waitForURL(/\/login/);
    await screenshot(page, 'login');

    await signIn(page, 'e2e-person@example.com');
    await page.waitForURL(`${baseUrl}/dashboard`);
    const balance = page.getByTestId('token-balance');
    await balance.waitFor();
    expect(await balance.textContent()).toBe('50 токенов');
    expect(await page.getByTestId('avatar-letter').textContent()).toBe('E');
    for (const tab of ['AI-генератор', 'Портреты', 'Ваша галерея', 'AI-чат', 'Оплата']) {
      expect(await page.getByRole('link', { name: tab }).first().isVisible()).toBe(true);
    }
    await screenshot(page, 'shell');

    // A signed-in user on /login goes to the dashboard.
    await page.goto(`${baseUrl}/login`);
    await page.waitForURL(`${baseUrl}/dashboard`);

    await page.getByTestId('language-switcher').click();
    await Promise.all([page.waitForEvent('load'), page.getByTestId('language-en').click()]);
    await balance.waitFor();
    expect(await balance.textContent()).toBe('50 tokens');
    await page.reload();
    await balance.waitFor();
    expect(await balance.textContent()).toBe('50 tokens');
    expect(await page.getByRole('link', { name: 'AI Generator' }).isVisible()).toBe(true);

    await page.getByTestId('logout').click();
    await page.waitForURL(/\/login$/);
    await page.goto(`${baseUrl}/dashboard`);
    await page.waitForURL(/\/login\?redirect=/);
    expect(await page.getByRole('heading', { name: 'Create images with AI' }).isVisible()).toBe(true);
    await context.close();
  });

  it('remembers a deep page through sign-in and shows the mobile menu on a phone', async () => {
    const context = await browser().newContext({ viewport: { width: 390, height: 844 }, isMobile: true });
    const page = await context.newPage();
    await page.goto(`${baseUrl}/billing`);
    await page.waitForURL(/\/login\?redirect=%2Fbilling/);
    await signIn(page, 'mobile-person');
    await page.waitForURL(`${baseUrl}/billing`);
    await page.getByTestId('mobile-menu').click();
    const dialog = page.getByRole('dialog');
    await dialog.waitFor();
    await dialog.getByRole('link', { name: 'AI-чат' }).click();
    await page.waitForURL(`${baseUrl}/chat`);
    await context.close();
  });

  it('shows the error fallback texts on an unknown page', async () => {
    const page = await browser().newPage();
    const response = await page.goto(`${baseUrl}/no-such-page`);
    expect(response?.status()).toBe(404);
    await page.getByText('Страница не найдена').waitFor();
    await page.close();
  });
});
