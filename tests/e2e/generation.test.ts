import { describe, expect, inject, it } from 'vitest';
import type { Locator, Page } from 'playwright-core';
import { gate, screenshot, signIn, useBrowser } from './browser';

const models = [
  { id: 'original', name: 'Original SD XL', cost: 2, prompt: 'A lighthouse on a cliff at dusk' },
  { id: 'core', name: 'FLUX.1', cost: 6, prompt: 'A fox in a snowy forest' },
  { id: 'sd3', name: 'Stable Diffusion 3.5', cost: 12, prompt: 'A city of glass towers' },
  { id: 'ultra', name: 'Premium model', cost: 16, prompt: 'A dragon made of clouds' },
] as const;

async function chooseModel(page: Page, id: string) {
  await page.locator('label', { has: page.getByTestId(`model-${id}`) }).click();
}

/** WCAG's contrast ratio of an element's text against its background, as Chromium paints them. */
function contrastOf(element: Locator): Promise<number> {
  return element.evaluate((el) => {
    const context = document.createElement('canvas').getContext('2d')!;
    const luminance = (css: string) => {
      context.clearRect(0, 0, 1, 1);
      context.fillStyle = css;
      context.fillRect(0, 0, 1, 1);
      const [r, g, b] = [...context.getImageData(0, 0, 1, 1).data].map((v) => {
        const c = v / 255;
        return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
      });
      return 0.2126 * r! + 0.7152 * g! + 0.0722 * b!;
    };
    const style = getComputedStyle(el);
    const [a, b] = [luminance(style.color), luminance(style.backgroundColor)];
    return (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
  });
}

describe('image generation on the dashboard in Chromium', () => {
  const baseUrl = inject('baseUrl');
  const browser = useBrowser();

  it('validates in SPEC order, generates with all four models offline, charges the header balance and regenerates from the modal', async () => {
    const context = await browser().newContext({ viewport: { width: 1280, height: 900 } });
    await context.addInitScript(() => localStorage.setItem('language', 'en'));
    const page = await context.newPage();
    await page.goto(`${baseUrl}/dashboard`);
    await page.waitForURL(/\/login/);
    await signIn(page, 'e2e-generator@example.com');
    await page.waitForURL(`${baseUrl}/dashboard`);
    const balance = page.getByTestId('token-balance');
    await balance.waitFor();
    expect(await balance.textContent()).toBe('50 tokens');

    // Before any result: the four models with their costs.
    const empty = page.getByTestId('result-empty');
    await empty.waitFor();
    for (const model of models) expect(await empty.textContent()).toContain(model.name);
    expect(await empty.textContent()).toContain('16 tokens');
    const generate = page.getByTestId('generate');
    expect(await generate.isDisabled()).toBe(true);
    expect(await generate.textContent()).toContain('Generate · 2 tokens');
    // #26: the disabled button is still readable (WCAG's 4.5:1 for its text).
    expect(await contrastOf(generate)).toBeGreaterThanOrEqual(4.5);

    // SPEC section 5's order: the first failing rule is the one shown.
    const prompt = page.getByLabel('Prompt', { exact: true });
    const negative = page.getByLabel('Negative prompt');
    const seed = page.getByLabel('Seed', { exact: true });
    await prompt.fill('p'.repeat(2001));
    await negative.fill('n'.repeat(2001));
    await seed.fill('abc');
    expect(await page.getByTestId('prompt-counter').textContent()).toBe('2,001/2,000');
    const error = page.getByTestId('generation-error');
    await generate.click();
    expect(await error.textContent()).toBe('Prompt must be less than 2000 characters');
    await prompt.fill('A lighthouse');
    await generate.click();
    expect(await error.textContent()).toBe('Negative prompt must be less than 2000 characters');
    await negative.fill('');
    await generate.click();
    expect(await error.textContent()).toBe('Seed must be a number between 0 and 4294967295');
    await seed.fill('');
    await prompt.fill('   ');
    expect(await generate.isDisabled()).toBe(true);

    // Every model, offline; the header balance drops by tokens.charged each time.
    let expected = 50;
    for (const model of models) {
      await chooseModel(page, model.id);
      await prompt.fill(model.prompt);
      // The ultra request is held until the loader has been seen (and photographed).
      const held = gate();
      if (model.id === 'ultra') {
        await page.route('**/api/stability-ultra/generate', async (route) => {
          await held.wait;
          await route.continue();
        });
      }
      await generate.click();
      if (model.id === 'ultra') {
        const overlay = page.getByTestId('generating-overlay');
        await overlay.waitFor();
        expect(await page.getByTestId('motivational-phrase').textContent()).not.toBe('');
        const now = Number(await page.getByRole('progressbar').getAttribute('aria-valuenow'));
        expect(now).toBeLessThan(100);
        // The bar creeps on while the work goes on, and never reaches 100 before it is done.
        await page.waitForFunction(
          (start) => Number(document.querySelector('[role="progressbar"]')?.getAttribute('aria-valuenow')) > start,
          now,
        );
        expect(Number(await page.getByRole('progressbar').getAttribute('aria-valuenow'))).toBeLessThan(100);
        await screenshot(page, 'generating');
        held.open();
      }
      await page.getByTestId('result-prompt').filter({ hasText: model.prompt }).waitFor();
      expected -= model.cost;
      await page
        .getByTestId('token-balance')
        .filter({ hasText: `${expected} tokens` })
        .waitFor();
      expect(await page.getByTestId('result-finish-reason').textContent()).toBe('Success');
      expect(await page.getByTestId('generating-overlay').count()).toBe(0);
    }
    expect(expected).toBe(14);
    // 14 tokens cannot pay for ultra (16): the button is disabled and says why, next to it.
    expect(await generate.isDisabled()).toBe(true);
    const lowBalance = page.getByTestId('low-balance');
    expect(await lowBalance.textContent()).toBe(
      'Not enough tokens: this model costs 16 tokens and your balance is 14. Add tokens',
    );
    expect(await lowBalance.getByRole('link', { name: 'Add tokens' }).getAttribute('href')).toBe('/billing');
    expect(await generate.getAttribute('aria-describedby')).toBe('low-balance');
    await page.getByRole('img', { name: /Generated image: A dragon made of clouds/ }).waitFor();
    await page.waitForFunction(() =>
      [...document.querySelectorAll('img')].every((img) => img.complete && img.naturalWidth > 0),
    );
    await page.evaluate(() => window.scrollTo(0, 0));
    await screenshot(page, 'dashboard');

    // The latest images, newest first; the modal's Regenerate carries the prompt into the form.
    const recent = page.getByTestId('recent-images').getByRole('button');
    expect(await recent.count()).toBe(4);
    await page.getByRole('button', { name: 'Open image: A fox in a snowy forest' }).click();
    const modal = page.getByTestId('image-modal');
    await modal.waitFor();
    expect(await page.getByTestId('modal-prompt').textContent()).toBe('A fox in a snowy forest');
    expect(await modal.textContent()).toContain('image/png');
    await screenshot(page, 'image-modal');
    await page.getByTestId('modal-regenerate').click();
    await page.waitForURL(/\/dashboard\?prompt=A(\+|%20)fox/);
    await modal.waitFor({ state: 'detached' });
    expect(await prompt.inputValue()).toBe('A fox in a snowy forest');

    // Mobile: the form and the result stack.
    await page.setViewportSize({ width: 390, height: 844 });
    const formBox = await page.getByTestId('generation-form').boundingBox();
    const resultBox = await page.getByTestId('result-panel').boundingBox();
    expect(resultBox?.y ?? 0).toBeGreaterThan((formBox?.y ?? 0) + (formBox?.height ?? 0) - 1);
    await context.close();
  });

  it('on a Russian phone: the page scrolls to the result, the finish reason is in Russian, and toasts leave the header free', async () => {
    const context = await browser().newContext({ viewport: { width: 390, height: 844 }, isMobile: true });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: baseUrl });
    const page = await context.newPage();
    await page.goto(`${baseUrl}/dashboard`);
    await page.waitForURL(/\/login/);
    await signIn(page, 'e2e-generator-phone');
    await page.waitForURL(`${baseUrl}/dashboard`);
    await page.getByLabel('Промпт', { exact: true }).fill('Маяк на скале');
    await page.getByTestId('generate').click();
    await page.getByTestId('generation-result').waitFor();
    // The result is below the form on a phone: it comes into view by itself.
    await expect
      .poll(async () => {
        const box = await page.getByTestId('result-panel').boundingBox();
        return box !== null && box.y >= 0 && box.y < 844 / 2;
      })
      .toBe(true);
    expect(await page.getByTestId('result-finish-reason').textContent()).toBe('Успешно');
    await page.getByRole('button', { name: 'Копировать промпт' }).click();
    const toast = page.getByText('Промпт скопирован', { exact: true });
    await toast.waitFor();
    const header = await page.locator('header').first().boundingBox();
    const toastBox = await toast.boundingBox();
    expect(toastBox?.y ?? 0).toBeGreaterThanOrEqual((header?.y ?? 0) + (header?.height ?? 0));
    // The balance and the menu stay visible and usable while the toast is up.
    await page.getByTestId('mobile-menu').click();
    await page.getByRole('dialog').waitFor();
    await context.close();
  });
});
