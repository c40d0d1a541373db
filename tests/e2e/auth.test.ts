import type { Page } from 'playwright-core';
import { describe, expect, inject, it } from 'vitest';
import { screenshot, signIn, useBrowser } from './browser';

/**
 * Back, and the page it shows once loaded. Two answers of Chromium's are not failures of
 * ours: "net::ERR_ABORTED" when the entry went back to redirects at once (the server's
 * sign-in and callback addresses do), superseding the load Back waited for, and "Not attached
 * to an active page" when Chromium moves the page between renderer processes on the way
 * between our origin and the sign-in provider's (another port). Then the page that shows is
 * waited for and checked as any other; a Back that was never performed only means the next
 * step goes back from the same entry.
 */
async function goBack(page: Page): Promise<void> {
  try {
    await page.goBack({ waitUntil: 'load' });
  } catch (error) {
    if (!/net::ERR_ABORTED|Not attached to an active page|frame was detached/.test(String(error))) throw error;
    await page.waitForLoadState('load');
  }
}

describe('sign-in, language and logout in Chromium', () => {
  const baseUrl = inject('baseUrl');
  const browser = useBrowser();

  it('sends a signed-out visitor to /login, signs in and comes back with 50 tokens; English survives a reload; logout ends it', async () => {
    const context = await browser().newContext({ viewport: { width: 1280, height: 800 }, locale: 'ru-RU' });
    const page = await context.newPage();

    await page.goto(`${baseUrl}/dashboard`);
    await page.waitForURL(/\/login\?redirect=%2Fdashboard/);
    // The screen renders a moment after the address changes (its first render is deferred).
    await page.getByRole('heading', { name: 'Создавайте изображения с помощью ИИ' }).waitFor();
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
    await page.getByRole('heading', { name: 'Create images with AI' }).waitFor();
    await context.close();
  });

  // Issue #26 item 5: a shared computer. Logout, then Sign in, must let the next person in
  // with their own account, and Back must never show the identity provider's error page.
  it('after logout, Sign in shows the form again and another account signs in; Back never shows a provider error', async () => {
    const context = await browser().newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    await page.goto(`${baseUrl}/login`);
    await signIn(page, 'first-at-desk@example.com');
    await page.waitForURL(`${baseUrl}/dashboard`);
    await page.getByTestId('avatar-letter').filter({ hasText: 'F' }).waitFor();

    await page.getByTestId('logout').click();
    await page.waitForURL(/\/login$/);
    // signIn waits for the provider's form: it is shown although its session is still open.
    await signIn(page, 'second-at-desk@example.com');
    await page.waitForURL(`${baseUrl}/dashboard`);
    await page.getByTestId('avatar-letter').filter({ hasText: 'S' }).waitFor();

    // Back through everything the browser kept, the used-up sign-in forms included.
    const steps = await page.evaluate(() => history.length);
    for (let i = 0; i < steps; i += 1) {
      // Each step is checked once its page has loaded (server redirects followed). Not "network
      // idle": a signed-in page keeps its event stream open (issue #28).
      await goBack(page);
      expect(page.url(), `after ${i + 1} steps back`).not.toContain('/dev-idp/');
      expect(await page.locator('body').innerText()).not.toMatch(
        /interaction session|invalid_request|error_description/,
      );
    }
    await context.close();
  });

  // Issue #26 item 4: a session that ends mid-work (401 from any call) says so, keeps the page
  // and what was typed; a logout keeps nothing for the next person.
  it('keeps the page and the drafts (prompt, chat input) through a sign-in after the session ended', async () => {
    const context = await browser().newContext({ viewport: { width: 1280, height: 800 }, locale: 'ru-RU' });
    const page = await context.newPage();
    const endSession = () => context.clearCookies({ name: 'session' });
    const signInAgain = async (to: string) => {
      await page.getByTestId('session-ended').waitFor();
      expect(await page.getByTestId('session-ended').textContent()).toBe(
        'Сеанс завершён. Войдите снова, чтобы продолжить с того же места.',
      );
      // The provider still knows this browser: no form this time.
      await page.getByTestId('google-sign-in').click();
      await page.waitForURL(`${baseUrl}${to}`);
    };
    await page.goto(`${baseUrl}/login`);
    await signIn(page, 'drafter@example.com');
    await page.waitForURL(`${baseUrl}/dashboard`);

    const prompt = page.locator('#prompt');
    await prompt.fill('A lighthouse that survives a sign-in');
    await endSession();
    await page.getByTestId('generate').click();
    await page.waitForURL(/\/login\?redirect=%2Fdashboard/);
    await signInAgain('/dashboard');
    await page.getByTestId('token-balance').waitFor();
    expect(await prompt.inputValue()).toBe('A lighthouse that survives a sign-in');
    expect(await page.getByTestId('token-balance').textContent()).toBe('50 токенов');

    await page.goto(`${baseUrl}/chat`);
    const input = page.getByTestId('chat-input');
    await input.fill('A question typed before the session ended');
    await endSession();
    await input.press('Enter');
    await page.waitForURL(/\/login\?redirect=%2Fchat/);
    await signInAgain('/chat');
    await page.getByTestId('chat-input').waitFor();
    expect(await page.getByTestId('chat-input').inputValue()).toBe('A question typed before the session ended');

    // Logout forgets: the next person at this computer finds nothing typed.
    await page.getByTestId('logout').click();
    await page.waitForURL(/\/login$/);
    expect(await page.evaluate(() => sessionStorage.getItem('drafts'))).toBeNull();
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

  it('keeps query values as text through sign-in, and a cancelled sign-in keeps the remembered page', async () => {
    const context = await browser().newContext({ viewport: { width: 1280, height: 800 } });
    await context.addInitScript(() => localStorage.setItem('language', 'en'));
    const page = await context.newPage();
    await page.goto(`${baseUrl}/payment-status?paymentId=123&status=success`);
    await page.waitForURL(/\/login\?/);
    expect(new URL(page.url()).searchParams.get('redirect')).toBe('/payment-status?paymentId=123&status=success');

    // Cancel at the identity provider: back on /login, the page still remembered.
    await page.getByTestId('google-sign-in').click();
    await page.waitForURL(/\/dev-idp\/interaction\//);
    await page.getByRole('link', { name: '[ Cancel ]' }).click();
    await page.waitForURL(/\/login\?/);
    expect(new URL(page.url()).searchParams.get('redirect')).toBe('/payment-status?paymentId=123&status=success');
    expect(await page.getByRole('alert').textContent()).toBe('Sign-in failed. Please try again.');

    // The next try lands there, the number intact.
    await signIn(page, 'e2e-query@example.com');
    await page.waitForURL(/\/payment-status\?/);
    const url = new URL(page.url());
    expect(url.searchParams.get('paymentId')).toBe('123');
    expect(url.searchParams.get('status')).toBe('success');

    // A prompt that looks like a number stays the prompt.
    await page.goto(`${baseUrl}/dashboard?prompt=12345`);
    await page.getByTestId('generation-form').waitFor();
    expect(await page.getByLabel('Prompt', { exact: true }).inputValue()).toBe('12345');
    expect(page.url()).toBe(`${baseUrl}/dashboard?prompt=12345`);
    await context.close();
  });

  it('on a phone: the sign-in button is on the first screen, and the language can be switched before signing in', async () => {
    const context = await browser().newContext({ viewport: { width: 390, height: 844 }, isMobile: true });
    const page = await context.newPage();
    await page.goto(`${baseUrl}/login`);
    const button = page.getByTestId('google-sign-in');
    await button.waitFor();
    const box = await button.boundingBox();
    expect((box?.y ?? 1000) + (box?.height ?? 0)).toBeLessThanOrEqual(844);
    await page.getByTestId('language-switcher').click();
    // The menu says which language is the current one.
    expect(await page.getByRole('menuitemradio', { name: 'Русский' }).getAttribute('aria-checked')).toBe('true');
    expect(await page.getByRole('menuitemradio', { name: 'English' }).getAttribute('aria-checked')).toBe('false');
    await Promise.all([page.waitForEvent('load'), page.getByRole('menuitemradio', { name: 'English' }).click()]);
    await page.getByRole('heading', { name: 'Create images with AI' }).waitFor();
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
