import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gate, signIn, useBrowser } from './browser';
import { startApp } from './global-setup';

// Issue #28 item 5 and its "Done when": reload in the middle of a chat reply and see it
// finish; Stop from a second tab stops it; every balance right. This suite runs its own
// `npm start` whose offline assistant writes a piece every 120 ms (its replies here are 136
// pieces, about 16 s), so a reply is seen in the middle. The offline assistant's price (1000
// and 2000 balance tokens per 1M tokens of prompt and reply) makes any reply that produced
// something cost 1 token, against the 5 reserved for it before it starts: a balance of 49
// after one reply, 48 after two, is a bill for what was produced, taken once.

const lastReply = (page: Page) => page.getByTestId('assistant-markdown').last();
const replyLength = (page: Page) =>
  page.evaluate(
    () => [...document.querySelectorAll('[data-testid="assistant-markdown"]')].at(-1)?.textContent?.length ?? 0,
  );

/** The reply being written: the cursor in the last message, "AI sending...", the input disabled, Stop offered. */
async function expectWriting(page: Page): Promise<void> {
  await page.getByTestId('cursor').waitFor();
  expect(await page.getByTestId('ai-sending').textContent()).toBe('AI sending...');
  expect(await page.getByTestId('chat-input').isDisabled()).toBe(true);
  expect(await page.getByTestId('chat-send').count()).toBe(0);
  expect(await page.getByTestId('chat-stop').isEnabled()).toBe(true);
}

/** The reply ended: no cursor, its model and time under it (SPEC 2), the input free again. */
async function expectEnded(page: Page, timeout = 30_000): Promise<void> {
  await page.getByTestId('cursor').waitFor({ state: 'detached', timeout });
  await page.getByTestId('ai-sending').waitFor({ state: 'detached' });
  expect(await page.getByTestId('message-meta').last().textContent()).toMatch(/^Offline assistant · \d{2}:\d{2}$/);
  expect(await page.getByTestId('chat-input').isDisabled()).toBe(false);
  await page.getByTestId('chat-send').waitFor();
}

/** What the server says now: the balance, and the chat's ledger rows (reservations and returns). */
async function serverSide(page: Page, baseUrl: string) {
  const me = (await (await page.request.get(`${baseUrl}/auth/me`)).json()) as { data: { tokensAmount: number } };
  const ledger = (await (await page.request.get(`${baseUrl}/api/ledger?page=1&limit=50`)).json()) as {
    data: { entries: Array<{ kind: string; delta: number; balanceAfter: number }> };
  };
  const chat = ledger.data.entries.filter((e) => e.kind === 'chat' || e.kind === 'chat_release');
  return {
    balance: me.data.tokensAmount,
    reservations: chat.filter((e) => e.kind === 'chat').length,
    spent: -chat.reduce((sum, e) => sum + e.delta, 0),
  };
}

describe('chat replies that survive a reload, in Chromium', () => {
  const browser = useBrowser();
  let app: Awaited<ReturnType<typeof startApp>>;
  beforeAll(async () => {
    app = await startApp({ CHAT_OFFLINE_TOKEN_DELAY_MS: '120' });
  });
  afterAll(async () => {
    await app?.stop();
  });

  it('a reply goes on through a reload and finishes; Stop from a second tab ends the next one in both tabs, billed for what was produced', async () => {
    const { baseUrl } = app;
    const context = await browser().newContext({ viewport: { width: 1280, height: 860 }, locale: 'en-US' });
    await context.addInitScript(() => localStorage.setItem('language', 'en'));
    const page = await context.newPage();
    await page.goto(`${baseUrl}/chat`);
    await page.waitForURL(/\/login/);
    await signIn(page, 'e2e-chat-reload@example.com');
    await page.waitForURL(/\/chat$/);
    await page.getByTestId('chat-empty').waitFor();
    const balance = page.getByTestId('token-balance');
    expect(await balance.textContent()).toBe('50 tokens');

    // A reply, and a reload in its middle.
    const input = page.getByTestId('chat-input');
    await input.fill('Explain monads, please');
    await input.press('Enter');
    await page.waitForURL(/\/chat\/\d+$/);
    await page.getByTestId('cursor').waitFor();
    await page.waitForFunction(
      () =>
        ([...document.querySelectorAll('[data-testid="assistant-markdown"]')].at(-1)?.textContent ?? '').length > 40,
    );
    const url = page.url();
    // The reloaded page's event stream waits at a gate: what it shows first comes from the
    // conversation alone (its pendingReply), what comes later from the stream.
    const events = gate();
    await page.route('**/api/events', async (route) => {
      await events.wait;
      await route.continue();
    });
    await page.reload();
    expect(page.url()).toBe(url);
    // Shown again as far as it got, as the message being written.
    await expectWriting(page);
    expect(await page.getByTestId('message-user').count()).toBe(1);
    expect(await page.getByTestId('message-assistant').count()).toBe(1);
    const atReload = await replyLength(page);
    expect(atReload).toBeGreaterThan(0);
    // Followed from there once the stream flows.
    // (The route stays: with the gate open it lets every connection through at once.)
    events.open();
    await page.waitForFunction(
      (seen) =>
        ([...document.querySelectorAll('[data-testid="assistant-markdown"]')].at(-1)?.textContent ?? '').length >
        seen + 40,
      atReload,
    );
    // It finishes: the whole reply, stored, and its bill in the header.
    await expectEnded(page);
    const whole = await lastReply(page).textContent();
    expect(await lastReply(page).locator('h2').first().textContent()).toBe('Offline assistant');
    expect(whole).toContain('You wrote:');
    expect(whole).toContain('in the server settings.');
    await balance.filter({ hasText: '49 tokens' }).waitFor();
    expect(await serverSide(page, baseUrl)).toEqual({ balance: 49, reservations: 1, spent: 1 });
    // Stored once, as shown.
    await page.reload();
    await page.getByTestId('message-meta').waitFor();
    expect(await page.getByTestId('message-assistant').count()).toBe(1);
    expect(await lastReply(page).textContent()).toBe(whole);
    expect(await page.getByTestId('cursor').count()).toBe(0);

    // The next reply, followed in a second tab of the same browser, and stopped there.
    await input.fill('Tell me about functors');
    await input.press('Enter');
    await page.getByTestId('cursor').waitFor();
    await page.waitForFunction(
      () =>
        ([...document.querySelectorAll('[data-testid="assistant-markdown"]')].at(-1)?.textContent ?? '').length > 40,
    );
    const second = await context.newPage();
    await second.goto(url);
    await expectWriting(second);
    expect(await second.getByTestId('message-user').count()).toBe(2);
    // The other tab's reply grows here too.
    const seen = await replyLength(second);
    await second.waitForFunction(
      (n) =>
        ([...document.querySelectorAll('[data-testid="assistant-markdown"]')].at(-1)?.textContent ?? '').length > n,
      seen,
    );
    await second.getByTestId('chat-stop').click();
    // It ends in both tabs, with the same text, short of the whole reply.
    await expectEnded(second, 10_000);
    await expectEnded(page, 10_000);
    const stopped = await lastReply(second).textContent();
    expect(await lastReply(page).textContent()).toBe(stopped);
    expect(stopped!.length).toBeGreaterThan(40);
    expect(stopped).not.toContain('in the server settings.');
    for (const tab of [page, second]) {
      expect(await tab.getByTestId('message-assistant').count()).toBe(2);
      expect(await tab.getByTestId('message-user').count()).toBe(2);
      await tab.getByTestId('token-balance').filter({ hasText: '48 tokens' }).waitFor();
    }
    // Billed once, for what was produced (1 token), not for the 5 reserved.
    expect(await serverSide(page, baseUrl)).toEqual({ balance: 48, reservations: 2, spent: 2 });
    // What was stored is what both tabs show.
    await second.reload();
    await second.getByTestId('message-meta').first().waitFor();
    expect(await second.getByTestId('message-assistant').count()).toBe(2);
    expect(await lastReply(second).textContent()).toBe(stopped);
    await context.close();
  }, 120_000);
});
