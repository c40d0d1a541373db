import { describe, expect, inject, it } from 'vitest';
import type { Page } from 'playwright-core';
import { screenshot, signIn, useBrowser } from './browser';

/** Generations through the real API from the signed-in page (the form itself is tested elsewhere). */
async function generate(page: Page, endpoint: string, body: Record<string, unknown>): Promise<void> {
  const status = await page.evaluate(
    async ({ endpoint, body }) => {
      const response = await fetch(endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        credentials: 'include',
        body: JSON.stringify(body),
      });
      return response.status;
    },
    { endpoint, body },
  );
  expect(status).toBe(200);
}

/** Thumbnails are made just after each answer: waits until every image of the user has one. */
async function thumbnailsMade(page: Page): Promise<void> {
  await page.waitForFunction(
    async () => {
      const response = await fetch('/api/images/my-images?page=1&limit=48', { credentials: 'include' });
      const body = (await response.json()) as { data: { images: Array<{ thumbnailUrl: string }> } };
      return body.data.images.every((image) => image.thumbnailUrl.endsWith('.webp'));
    },
    undefined,
    { polling: 100 },
  );
}

const cards = (page: Page) => page.getByTestId('gallery-card');

/** Waits until the grid shows exactly `count` cards: a new page's cards come after its summary. */
async function showsCards(page: Page, count: number): Promise<void> {
  await page.waitForFunction(
    (count) => document.querySelectorAll('[data-testid="gallery-card"]').length === count,
    count,
    { polling: 50 },
  );
}

describe('the gallery in Chromium', () => {
  const baseUrl = inject('baseUrl');
  const browser = useBrowser();

  it('pages, sizes, searches, opens, regenerates with every parameter and deletes', async () => {
    const context = await browser().newContext({ viewport: { width: 1280, height: 900 } });
    await context.addInitScript(() => localStorage.setItem('language', 'en'));
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: baseUrl });
    const page = await context.newPage();
    await page.goto(`${baseUrl}/gallery`);
    await page.waitForURL(/\/login/);
    await signIn(page, 'e2e-gallery@example.com');
    await page.waitForURL(/\/gallery/);
    expect(await page.getByTestId('gallery-empty').textContent()).toBe("You haven't generated any images yet");

    for (let i = 1; i <= 7; i += 1) {
      await generate(page, '/api/stability/text-to-image', { prompt: `Picture ${i}`, width: 1152, height: 896 });
    }
    await generate(page, '/api/stability-sd3/generate', {
      prompt: 'A city of glass towers',
      aspect_ratio: '2:3',
      model: 'sd3.5-medium',
      negative_prompt: 'fog',
      seed: 4242,
    });
    await thumbnailsMade(page);

    await page.getByRole('button', { name: 'Refresh' }).click();
    await cards(page).first().waitFor();
    expect(await cards(page).count()).toBe(8);
    expect(await page.getByTestId('gallery-total').textContent()).toBe('8 images in total');
    expect(await page.getByTestId('gallery-page-of').textContent()).toBe('Page 1 of 1');
    expect(await page.getByTestId('gallery-pagination').count()).toBe(0);
    // Thumbnails, sized and lazy beyond the first row.
    const thumb = cards(page).first().locator('img');
    expect(await thumb.getAttribute('src')).toMatch(/\/images\/[0-9a-f]{32}\.webp$/);
    // The sd3 2:3 picture: a portrait thumbnail whose long edge is 384 px.
    expect(await thumb.getAttribute('height')).toBe('384');
    expect(Number(await thumb.getAttribute('width'))).toBeLessThan(384);
    expect(await cards(page).nth(5).locator('img').getAttribute('loading')).toBe('lazy');
    await page.evaluate(() => window.scrollTo(0, 0));
    await screenshot(page, 'gallery');

    // Page size 6: two pages, in the URL; reload and Back keep them.
    await page.getByLabel('Per page').selectOption('6');
    await page.waitForURL(/limit=6/);
    await page.getByTestId('gallery-pagination').waitFor();
    await showsCards(page, 6);
    // Two full rows of three on a wide screen, not four and two (#26).
    const rows = await cards(page).evaluateAll((all) =>
      all.map((card) => Math.round(card.getBoundingClientRect().top)),
    );
    expect(new Set(rows).size).toBe(2);
    expect(rows.filter((top) => top === rows[0])).toHaveLength(3);
    expect(await page.getByTestId('gallery-page-of').textContent()).toBe('Page 1 of 2');
    await page.getByRole('button', { name: 'Page 2', exact: true }).click();
    await page.waitForURL(/page=2/);
    await page.getByTestId('gallery-page-of').filter({ hasText: 'Page 2 of 2' }).waitFor();
    await showsCards(page, 2);
    await page.reload();
    await page.getByTestId('gallery-page-of').filter({ hasText: 'Page 2 of 2' }).waitFor();
    await showsCards(page, 2);
    await page.goBack();
    await page.getByTestId('gallery-page-of').filter({ hasText: 'Page 1 of 2' }).waitFor();
    // The summary follows the URL at once; the cards come with the page.
    await showsCards(page, 6);

    // The search box filters the loaded page; "Search all images" asks the server.
    const search = page.getByLabel('Search by prompt');
    await search.fill('PICTURE 7');
    expect(await cards(page).count()).toBe(1);
    await search.fill('picture 1');
    expect(await page.getByTestId('gallery-empty').textContent()).toBe('No images found');
    await page.getByRole('button', { name: 'Search all images' }).click();
    await page.getByTestId('gallery-search').waitFor();
    await cards(page).first().waitFor();
    expect(await cards(page).count()).toBe(1);
    expect(await cards(page).first().textContent()).toContain('Picture 1');
    await page.getByRole('button', { name: 'Clear search' }).click();
    await page.getByTestId('gallery-page-of').filter({ hasText: 'Page 1 of 2' }).waitFor();
    await showsCards(page, 6);

    // The modal: the full image, arrow keys, Copy Prompt.
    await page.getByRole('button', { name: 'View image: A city of glass towers' }).first().click();
    const modal = page.getByTestId('image-modal');
    await modal.waitFor();
    const prompt = page.getByTestId('modal-prompt');
    expect(await prompt.textContent()).toBe('A city of glass towers');
    expect(await modal.locator('img').first().getAttribute('src')).toMatch(/\.png$/);
    await page.keyboard.press('ArrowRight');
    await prompt.filter({ hasText: 'Picture 7' }).waitFor();
    await page.keyboard.press('ArrowLeft');
    await prompt.filter({ hasText: 'A city of glass towers' }).waitFor();
    await page.getByRole('button', { name: 'Copy Prompt' }).click();
    await page.getByText('Prompt copied', { exact: true }).waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe('A city of glass towers');
    await screenshot(page, 'gallery-modal');

    // Regenerate lands on /dashboard with every parameter in the form.
    await page.getByTestId('modal-regenerate').click();
    await page.waitForURL(/\/dashboard/);
    await page.getByTestId('generation-form').waitFor();
    expect(await page.getByLabel('Prompt', { exact: true }).inputValue()).toBe('A city of glass towers');
    expect(await page.getByTestId('model-sd3').isChecked()).toBe(true);
    expect(await page.locator('#aspectRatio').inputValue()).toBe('2:3');
    expect(await page.locator('#sd3Model').inputValue()).toBe('sd3.5-medium');
    expect(await page.getByLabel('Negative prompt').inputValue()).toBe('fog');
    expect(await page.getByLabel('Seed', { exact: true }).inputValue()).toBe('4242');
    // The dashboard's latest images are thumbnails too.
    expect(await page.getByTestId('recent-images').locator('img').first().getAttribute('src')).toMatch(/\.webp$/);

    // Delete asks first; Cancel keeps the image, Delete removes it.
    await page.goto(`${baseUrl}/gallery?page=1&limit=12`);
    await cards(page).first().waitFor();
    await page.getByRole('button', { name: 'Delete image: Picture 1' }).click();
    const confirm = page.getByTestId('confirm-delete');
    await confirm.waitFor();
    await confirm.getByRole('button', { name: 'Cancel' }).click();
    await confirm.waitFor({ state: 'detached' });
    expect(await cards(page).count()).toBe(8);
    await page.getByRole('button', { name: 'Delete image: Picture 1' }).click();
    await confirm.getByRole('button', { name: 'Delete' }).click();
    await page.getByTestId('gallery-total').filter({ hasText: '7 images in total' }).waitFor();
    expect(await cards(page).count()).toBe(7);
    expect(await page.getByRole('button', { name: 'View image: Picture 1' }).count()).toBe(0);
    await context.close();
  });

  it.each([
    ['en', 'gallery-phone-en'],
    ['ru', 'gallery-phone-ru'],
  ])('fits a phone in %s', async (language, name) => {
    const context = await browser().newContext({
      viewport: { width: 390, height: 844 },
      deviceScaleFactor: 2,
      isMobile: true,
      hasTouch: true,
    });
    await context.addInitScript((lang) => localStorage.setItem('language', lang), language);
    const page = await context.newPage();
    await page.goto(`${baseUrl}/gallery?limit=6`);
    await page.waitForURL(/\/login/);
    await signIn(page, 'e2e-gallery@example.com');
    await page.waitForURL(/\/gallery/);
    await cards(page).first().waitFor();
    const width = await page.evaluate(() => document.documentElement.scrollWidth);
    expect(width).toBeLessThanOrEqual(390);
    await page.waitForFunction(() => [...document.images].slice(0, 4).every((img) => img.complete));
    await screenshot(page, name);
    if (language === 'ru') {
      expect(await page.getByTestId('gallery-total').textContent()).toBe('Всего 7 изображений');
      await page.goto(`${baseUrl}/gallery?limit=12`);
      await cards(page).first().waitFor();
      await page.setViewportSize({ width: 1280, height: 900 });
      await screenshot(page, 'gallery-ru');
    }
    await context.close();
  });
});

/** Whether an element's content is wider than its box (a prompt that does not wrap). */
async function overflows(page: Page, testId: string): Promise<boolean[]> {
  return page.getByTestId(testId).evaluateAll((elements) => elements.map((el) => el.scrollWidth > el.clientWidth + 1));
}

// #26 item 2: a long unbroken prompt wraps (or is clipped, the whole text reachable) on the
// result panel, the gallery card and the image dialog, on a desktop and on a phone.
describe('a long unbroken prompt in Chromium', () => {
  const baseUrl = inject('baseUrl');
  const browser = useBrowser();
  const long = `https://example.com/${'a'.repeat(300)}`;

  for (const [device, width, height] of [
    ['desktop', 1366, 900],
    ['phone', 390, 844],
  ] as const) {
    it(`stays inside the result panel, the card and the dialog on a ${device}`, async () => {
      const context = await browser().newContext({ viewport: { width, height } });
      await context.addInitScript(() => localStorage.setItem('language', 'en'));
      const page = await context.newPage();
      await page.goto(`${baseUrl}/dashboard`);
      await page.waitForURL(/\/login/);
      await signIn(page, `e2e-long-${device}@example.com`);
      await page.waitForURL(`${baseUrl}/dashboard`);
      await page.getByLabel('Prompt', { exact: true }).fill(long);
      await page.getByTestId('generate').click();
      await page.getByTestId('result-prompt').filter({ hasText: long }).waitFor();
      expect(await overflows(page, 'result-prompt')).toEqual([false]);
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width);

      await thumbnailsMade(page);
      await page.goto(`${baseUrl}/gallery`);
      await cards(page).first().waitFor();
      const card = cards(page).first();
      // The card clips the prompt to two lines; its title holds the whole text.
      expect(await card.locator('p').first().getAttribute('title')).toBe(long);
      expect(
        await card
          .locator('p')
          .first()
          .evaluate((el) => el.scrollWidth > el.clientWidth + 1),
      ).toBe(false);
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width);
      await card.getByRole('button', { name: /^View/ }).first().click();
      await page.getByTestId('modal-prompt').waitFor();
      expect(await page.getByTestId('modal-prompt').textContent()).toBe(long);
      expect(await overflows(page, 'modal-prompt')).toEqual([false]);
      const dialog = page.getByRole('dialog');
      expect(await dialog.evaluate((el) => el.scrollWidth > el.clientWidth + 1)).toBe(false);
      await context.close();
    });
  }
});
