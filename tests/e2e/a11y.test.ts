import AxeBuilder from '@axe-core/playwright';
import type { Browser, Page } from 'playwright-core';
import { describe, expect, inject, it } from 'vitest';
import { facePhoto } from '../server/portraits/support';
import { screenshot, settled, signIn, useBrowser } from './browser';

// Issue #26 item 11: axe-core reports nothing, of any impact, on every screen and open dialog,
// in both languages, on a desktop (1366x900) and a phone (390x844).

type Found = { screen: string; rule: string; impact: string; help: string; nodes: string[] };

/** Runs axe on what the page shows now and keeps every violation under the screen's name. */
async function check(page: Page, screen: string, found: Found[]): Promise<void> {
  await settled(page);
  const { violations } = await new AxeBuilder({ page }).analyze();
  for (const v of violations) {
    found.push({
      screen,
      rule: v.id,
      impact: v.impact ?? 'none',
      help: v.help,
      nodes: v.nodes.map((node) => `${node.target.join(' ')}: ${node.failureSummary?.replace(/\s+/g, ' ') ?? ''}`),
    });
  }
}

/** One line per violation, its nodes below: what a developer needs to find and fix each one. */
function report(found: Found[]): string {
  return found
    .map((f) =>
      [`[${f.screen}] ${f.rule} (${f.impact}, ${f.nodes.length}): ${f.help}`, ...f.nodes.map((n) => `    ${n}`)].join(
        '\n',
      ),
    )
    .join('\n');
}

async function openContext(browser: Browser, language: 'ru' | 'en', phone: boolean) {
  const context = await browser.newContext({
    viewport: phone ? { width: 390, height: 844 } : { width: 1366, height: 900 },
    locale: language === 'ru' ? 'ru-RU' : 'en-US',
    ...(phone ? { isMobile: true, hasTouch: true } : {}),
  });
  await context.addInitScript((lang) => localStorage.setItem('language', lang), language);
  return context;
}

describe('accessibility (axe-core) in Chromium', () => {
  const baseUrl = inject('baseUrl');
  const browser = useBrowser();

  for (const language of ['ru', 'en'] as const) {
    for (const device of ['desktop', 'phone'] as const) {
      it.concurrent(
        `every screen and dialog has no violations in ${language} on a ${device}`,
        async () => {
          const phone = device === 'phone';
          const context = await openContext(browser(), language, phone);
          const page = await context.newPage();
          const found: Found[] = [];

          // Signed out: the login screen and the 404 page.
          await page.goto(`${baseUrl}/login`);
          await page.getByTestId('google-sign-in').waitFor();
          await check(page, 'login', found);
          await page.goto(`${baseUrl}/no-such-page`);
          await page.getByRole('heading', { level: 1 }).waitFor();
          await check(page, '404', found);

          // The dashboard: empty, with a result, and the image dialog.
          await page.goto(`${baseUrl}/login`);
          await signIn(page, `e2e-a11y-${language}-${device}@example.com`);
          await page.waitForURL(`${baseUrl}/dashboard`);
          await page.getByTestId('result-empty').waitFor();
          await check(page, 'dashboard', found);
          if (phone) {
            await page.getByTestId('mobile-menu').click();
            await page.getByRole('dialog').waitFor();
            await check(page, 'mobile menu', found);
            await page.keyboard.press('Escape');
            await page.getByRole('dialog').waitFor({ state: 'detached' });
          }
          await page.locator('#prompt').fill('A lighthouse on a cliff at dusk');
          await page.getByTestId('generate').click();
          await page.getByTestId('generation-result').waitFor({ timeout: 30_000 });
          await page.getByTestId('recent-images').getByRole('button').first().waitFor();
          await check(page, 'dashboard result', found);
          await page.getByTestId('recent-images').getByRole('button').first().click();
          await page.getByTestId('image-modal').waitFor();
          await check(page, 'dashboard image dialog', found);
          await page.keyboard.press('Escape');
          await page.getByTestId('image-modal').waitFor({ state: 'detached' });
          // The queue (issue #28): the dashboard's panel holds the finished job; the header's sheet.
          await page.getByTestId('queue-panel').locator('li[data-state="completed"]').first().waitFor();
          await page.getByTestId('queue-button').click();
          await page.getByTestId('queue-dialog').waitFor();
          await check(page, 'queue dialog', found);
          await page.keyboard.press('Escape');
          await page.getByTestId('queue-dialog').waitFor({ state: 'detached' });

          // The portrait creator, before and after a portrait.
          await page.goto(`${baseUrl}/portrait-creator`);
          await page.getByTestId('portrait-form').waitFor();
          await page.getByTestId('portrait-showcase').waitFor();
          await check(page, 'portrait creator', found);
          await page
            .getByTestId('photo-input')
            .setInputFiles({ name: 'me.jpg', mimeType: 'image/jpeg', buffer: await facePhoto() });
          await page.getByTestId('photo-preview').waitFor();
          await page.getByTestId('template-female-golden').click();
          await page.getByTestId('generate-portrait').click();
          await page.getByTestId('portrait-result').waitFor({ timeout: 30_000 });
          await check(page, 'portrait result', found);

          // The gallery and its image dialog.
          await page.goto(`${baseUrl}/gallery`);
          await page.getByTestId('gallery-card').first().waitFor();
          await check(page, 'gallery', found);
          await page.getByTestId('gallery-card').first().getByRole('button').first().click();
          await page.getByTestId('image-modal').waitFor();
          await check(page, 'gallery image dialog', found);
          await page.keyboard.press('Escape');
          await page.getByTestId('image-modal').waitFor({ state: 'detached' });

          // Chat: no conversation, then one with a highlighted code block, and its settings.
          await page.goto(`${baseUrl}/chat`);
          await page.getByTestId('chat-empty').waitFor();
          await check(page, 'chat', found);
          await page.getByTestId('chat-input').fill('Show me a TypeScript code example');
          await page.getByTestId('chat-input').press('Enter');
          await page.getByTestId('message-meta').waitFor({ timeout: 45_000 });
          await page.locator('[data-testid="code-block"] code span[style*="color"]').first().waitFor();
          await check(page, 'chat conversation', found);
          await page.getByTestId('chat-settings').click();
          await page.getByRole('dialog').waitFor();
          await check(page, 'chat settings dialog', found);
          if (phone && language === 'ru') await screenshot(page, 'chat-settings-phone-ru');
          await page.keyboard.press('Escape');
          await page.getByRole('dialog').waitFor({ state: 'detached' });

          // Billing, its purchase dialog, and the payment status the checkout returns to.
          await page.goto(`${baseUrl}/billing`);
          await page.getByTestId('usage-card').waitFor();
          // Both histories loaded (or failed): no spinner left on the page.
          await page.getByTestId('spend-history').waitFor();
          await page.waitForFunction(() => !document.querySelector('main .animate-spin'));
          await check(page, 'billing', found);
          await page.getByTestId('add-tokens').click();
          await page.getByTestId('purchase-modal').waitFor();
          await check(page, 'purchase dialog', found);
          await page.getByTestId('purchase-pay').click();
          await page.waitForURL(/\/sandbox\/checkout\//);
          await page.locator('button.pay').click();
          await page.waitForURL(/\/payment-status\?/);
          await page.getByTestId('payment-status-title').waitFor();
          await check(page, 'payment status', found);

          await context.close();
          expect(found.length, `axe violations:\n${report(found)}`).toBe(0);
        },
        // Four runs side by side on two cores, each a whole walk of the app: minutes, not seconds.
        240_000,
      );
    }
  }
});
