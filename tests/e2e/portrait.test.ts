import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { describe, expect, inject, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { facePhoto } from '../server/portraits/support';
import { gate, screenshot, signIn, useBrowser } from './browser';

async function openPortraits(
  browser: Browser,
  baseUrl: string,
  language: 'en' | 'ru',
  login: string,
  viewport: { width: number; height: number },
): Promise<Page> {
  const context = await browser.newContext({ viewport });
  await context.addInitScript((lang) => localStorage.setItem('language', lang), language);
  const page = await context.newPage();
  await page.goto(`${baseUrl}/portrait-creator`);
  await page.waitForURL(/\/login/);
  await signIn(page, login);
  await page.waitForURL(/\/portrait-creator|\/dashboard/);
  if (!page.url().includes('/portrait-creator')) await page.goto(`${baseUrl}/portrait-creator`);
  await page.getByTestId('portrait-form').waitFor();
  return page;
}

async function allImagesLoaded(page: Page) {
  await page.waitForFunction(() =>
    [...document.querySelectorAll('img')].every((img) => img.complete && img.naturalWidth > 0),
  );
}

describe('the portrait creator in Chromium', () => {
  const baseUrl = inject('baseUrl');
  const browser = useBrowser();

  it('checks in SPEC order, uploads a photo, applies a template, generates, charges the header and lists it in my-images', async () => {
    const page = await openPortraits(browser(), baseUrl, 'en', 'e2e-portrait@example.com', {
      width: 1280,
      height: 900,
    });
    const balance = page.getByTestId('token-balance');
    await balance.filter({ hasText: '50 tokens' }).waitFor();
    expect(await page.getByTestId('portrait-cost').textContent()).toBe('Cost: 12 tokens');
    expect(await page.getByTestId('portrait-balance').textContent()).toBe('Your balance: 50 tokens');
    expect(await page.getByTestId('privacy-note').textContent()).toContain('not kept');
    // Before any result: the two before/after pairs.
    const showcase = page.getByTestId('portrait-showcase');
    await showcase.waitFor();
    expect(await showcase.getByRole('img').count()).toBe(4);
    await allImagesLoaded(page);
    await screenshot(page, 'portrait');

    // SPEC's order: the photo first, then the prompt.
    const generate = page.getByRole('button', { name: 'Generate Portrait' });
    const error = page.getByTestId('portrait-error');
    await generate.click();
    expect(await error.textContent()).toBe('Please upload a photo first');

    // The browser checks a chosen file before any upload: type, then size.
    const input = page.getByTestId('photo-input');
    await input.setInputFiles({ name: 'notes.gif', mimeType: 'image/gif', buffer: Buffer.from('GIF89a') });
    expect(await error.textContent()).toBe('Only JPG, PNG, and WebP formats are supported');
    // From a file on disk: an 11 MB buffer is slow to hand over to the browser.
    const huge = path.join(await fs.mkdtemp(path.join(os.tmpdir(), 'portrait-e2e-')), 'huge.jpg');
    await fs.writeFile(huge, Buffer.alloc(11 * 1024 * 1024, 1));
    await input.setInputFiles(huge);
    expect(await error.textContent()).toBe('File size must be less than 10MB. Current size: 11.00 MB');

    const photo = await facePhoto();
    await input.setInputFiles({ name: 'me.jpg', mimeType: 'image/jpeg', buffer: photo });
    await page.getByTestId('photo-preview').waitFor();
    expect(await page.getByTestId('photo-name').textContent()).toBe('me.jpg');
    expect(await page.getByTestId('photo-size').textContent()).toMatch(/^Size: \d+\.\d\d KB$/);
    await generate.click();
    expect(await error.textContent()).toBe('Please enter a prompt');

    // Male and female tabs, six templates each; a template fills the description.
    await page.getByRole('tab', { name: 'Male', exact: true }).click();
    expect(await page.locator('[data-testid^="template-male-"]').count()).toBe(6);
    await page.getByRole('tab', { name: 'Female', exact: true }).click();
    expect(await page.locator('[data-testid^="template-female-"]').count()).toBe(6);
    await page.getByTestId('template-female-golden').click();
    const prompt = page.getByLabel('Portrait description');
    expect(await prompt.inputValue()).toContain('golden hour');
    await page.getByTestId('aspect-4:5').check({ force: true });

    // The request is held while the test looks: the form is disabled while generating.
    const held = gate();
    await page.route('**/api/face-swap/generate', async (route) => {
      await held.wait;
      await route.continue();
    });
    await generate.click();
    await page.getByTestId('portrait-generating').waitFor();
    expect(await prompt.isDisabled()).toBe(true);
    expect(await page.getByTestId('generate-portrait').isDisabled()).toBe(true);
    held.open();
    await page.getByTestId('portrait-result').waitFor({ timeout: 30_000 });
    await balance.filter({ hasText: '38 tokens' }).waitFor();
    expect(await page.getByTestId('portrait-balance').textContent()).toBe('Your balance: 38 tokens');
    const image = page.getByRole('img', { name: /^Portrait: A woman in a field at golden hour/ });
    await image.waitFor();
    await allImagesLoaded(page);
    const size = await image.evaluate((img: HTMLImageElement) => [img.naturalWidth, img.naturalHeight]);
    expect(size).toEqual([896, 1088]);
    expect(await page.getByRole('button', { name: 'Download' }).isVisible()).toBe(true);
    await screenshot(page, 'portrait-result');

    // It is the user's image now: my-images lists it first.
    const listed = await page.evaluate(async () => {
      const response = await fetch('/api/images/my-images?limit=1', { credentials: 'include' });
      return ((await response.json()) as { data: { images: Array<{ prompt: string; model: string }> } }).data.images[0];
    });
    expect(listed?.prompt).toContain('golden hour');
    expect(listed?.model).toBe('Portrait generation');

    await page.setViewportSize({ width: 390, height: 844 });
    await page.getByTestId('portrait-result').scrollIntoViewIfNeeded();
    await screenshot(page, 'portrait-result-phone-en');

    // The gallery link leads to /gallery.
    await page.getByTestId('portrait-gallery-link').click();
    await page.waitForURL(`${baseUrl}/gallery`);
    await page.context().close();
  });

  it('speaks Russian and lays out on a phone', async () => {
    const page = await openPortraits(browser(), baseUrl, 'ru', 'e2e-portrait-ru@example.com', {
      width: 1280,
      height: 900,
    });
    await allImagesLoaded(page);
    await screenshot(page, 'portrait-ru');
    await page.setViewportSize({ width: 390, height: 844 });
    expect(await page.getByRole('button', { name: 'Создать портрет' }).isVisible()).toBe(true);
    expect(await page.getByTestId('portrait-cost').textContent()).toBe('Стоимость: 12 токенов');
    await page.getByRole('button', { name: 'Создать портрет' }).click();
    expect(await page.getByTestId('portrait-error').textContent()).toBe('Сначала загрузите фото');
    await page
      .getByTestId('photo-input')
      .setInputFiles({ name: 'лицо.png', mimeType: 'image/png', buffer: await facePhoto({ format: 'png' }) });
    await page.getByTestId('photo-preview').waitFor();
    await page.getByRole('tab', { name: 'Мужчина' }).click();
    await page.getByTestId('template-male-vintage').click();
    await allImagesLoaded(page);
    // Nothing sticks out sideways on a phone.
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(overflow).toBeLessThanOrEqual(0);
    await screenshot(page, 'portrait-phone-ru');
    await page.getByRole('button', { name: 'Создать портрет' }).click();
    await page.getByTestId('portrait-result').waitFor({ timeout: 30_000 });
    await page.getByTestId('token-balance').filter({ hasText: '38' }).waitFor();
    await allImagesLoaded(page);
    await page.getByTestId('portrait-result').scrollIntoViewIfNeeded();
    await screenshot(page, 'portrait-result-phone-ru');
    const png = await page.screenshot();
    expect((await sharp(png).metadata()).width).toBe(390);
    await page.context().close();
  });
});
