import { describe, expect, inject, it } from 'vitest';
import { screenshot, signIn, useBrowser } from './browser';

describe('AI chat in Chromium', () => {
  const baseUrl = inject('baseUrl');
  const browser = useBrowser();

  it('sends a first message, streams a markdown reply with highlighted code, bills it, survives a reload, stops and deletes', async () => {
    const context = await browser().newContext({ viewport: { width: 1280, height: 860 }, locale: 'en-US' });
    await context.addInitScript(() => localStorage.setItem('language', 'en'));
    const page = await context.newPage();
    await page.goto(`${baseUrl}/chat`);
    await page.waitForURL(/\/login/);
    await signIn(page, 'e2e-chat@example.com');
    await page.waitForURL(/\/chat$/);
    await page.getByTestId('chat-empty').waitFor();
    expect(await page.getByText('No conversation selected').isVisible()).toBe(true);
    const balance = page.getByTestId('token-balance');
    expect(await balance.textContent()).toBe('50 tokens');
    expect(await page.getByTestId('config-bar').textContent()).toContain('Offline assistant');

    const input = page.getByTestId('chat-input');
    expect(await page.getByTestId('chat-send').isDisabled()).toBe(true);
    // The box grows with its text up to 120 px, and an emptied box is one line again.
    const height = async () => (await input.boundingBox())!.height;
    const oneLine = await height();
    await input.fill('one');
    expect(await height()).toBe(oneLine);
    await input.fill('one\ntwo\nthree');
    expect(await height()).toBeGreaterThan(oneLine * 1.8);
    await input.fill('many\n'.repeat(20));
    expect(await height()).toBe(120);
    await input.fill('');
    expect(await height()).toBe(oneLine);
    await input.fill('Show me a TypeScript code example');
    await input.press('Enter');
    await page.waitForURL(/\/chat\/\d+$/);
    await page.getByTestId('ai-sending').waitFor();
    expect(await page.getByText('AI sending...').isVisible()).toBe(true);
    await page.getByTestId('cursor').waitFor();
    // While the code block is still open, it shows the code received so far, highlighted.
    const openBlock = page.getByTestId('code-block').first();
    await openBlock.waitFor();
    const partial = await openBlock.textContent();
    expect(await page.getByTestId('cursor').count()).toBe(1);
    expect(partial).not.toContain('undefined');
    expect('function countWords(text: string): number {').toContain((partial ?? '').slice(0, 20));
    await page.waitForFunction(
      () =>
        (document.querySelector('[data-testid="code-block"]')?.querySelectorAll('span[style*="color"]').length ?? 0) >
        0,
    );
    // The reply completes: the cursor goes, the meta line (model and HH:MM) appears.
    await page.getByTestId('message-meta').waitFor({ timeout: 30_000 });
    expect(await page.getByTestId('message-meta').textContent()).toMatch(/^Offline assistant · \d{2}:\d{2}$/);
    const reply = page.getByTestId('assistant-markdown').last();
    expect(await reply.locator('h2').first().textContent()).toBe('Offline assistant');
    expect(await reply.locator('strong').first().isVisible()).toBe(true);
    expect(await reply.locator('ul li').count()).toBeGreaterThan(2);
    expect(await reply.locator('blockquote').isVisible()).toBe(true);
    const code = reply.getByTestId('code-block');
    expect(await code.getAttribute('data-language')).toBe('typescript');
    // Highlighted: coloured token spans (inline styles of the Prism light build).
    expect(await code.locator('code span[style*="color"]').count()).toBeGreaterThan(3);
    expect(await input.inputValue()).toBe('');
    expect(await height()).toBe(oneLine);
    await expect.poll(() => balance.textContent()).not.toBe('50 tokens');
    const afterFirst = await balance.textContent();
    expect(await page.getByTestId('conversation-list').textContent()).toContain('Show me a TypeScript code example');
    await screenshot(page, 'chat');

    // A reload keeps the history.
    const url = page.url();
    await page.reload();
    await page.getByTestId('message-assistant').waitFor();
    expect(page.url()).toBe(url);
    expect(await page.getByTestId('message-user').count()).toBe(1);
    expect(await page.getByTestId('code-block').count()).toBe(1);

    // Stop mid-reply: the partial reply stays, the button returns to Send.
    await input.fill('Tell me more, please');
    await page.getByTestId('chat-send').click();
    await page.getByTestId('chat-stop').waitFor();
    await page.getByTestId('cursor').waitFor();
    // Some words of the reply have arrived: they are what is kept and billed.
    await page.waitForFunction(
      () => ([...document.querySelectorAll('[data-testid="message-assistant"]')].at(-1)?.textContent ?? '').length > 20,
    );
    await page.getByTestId('chat-stop').click();
    await page.getByTestId('chat-send').waitFor();
    expect(await page.getByTestId('message-assistant').count()).toBe(2);
    await expect.poll(() => balance.textContent(), { timeout: 5000 }).not.toBe(afterFirst);

    // The settings modal: model options with prices, the context limit, closed by the button.
    await page.getByTestId('chat-settings').click();
    const dialog = page.getByRole('dialog');
    await dialog.waitFor();
    expect(await dialog.getByTestId('model-select').textContent()).toContain(
      'Offline assistant (1000/2000 per 1M tokens)',
    );
    expect(await dialog.getByText('1000 tokens is roughly 750 words.').isVisible()).toBe(true);
    await dialog.getByTestId('context-limit').fill('1234');
    await dialog.getByTestId('context-limit').press('Enter');
    await dialog.getByRole('button', { name: 'Close' }).click();
    await dialog.waitFor({ state: 'detached' });
    expect(await page.getByTestId('config-bar').textContent()).toContain('Context: 1,200 tokens');

    // A route id that is not a whole number goes back to /chat.
    await page.goto(`${baseUrl}/chat/abc`);
    await page.waitForURL(`${baseUrl}/chat`);
    await page.goto(`${baseUrl}/chat/99999`);
    await page.getByTestId('conversation-not-found').waitFor();
    await page.getByRole('link', { name: 'Back to conversations' }).click();
    await page.waitForURL(`${baseUrl}/chat`);
    await page.getByTestId('chat-empty').waitFor();

    // Delete the open conversation, confirmed: back to /chat.
    await page.goto(url);
    await page.getByTestId('message-assistant').first().waitFor();
    await page.getByTestId('delete-conversation').first().click();
    await page.getByText('Are you sure you want to delete this conversation?').waitFor();
    await page.getByTestId('confirm-delete').click();
    await page.waitForURL(`${baseUrl}/chat`);
    await page.getByTestId('chat-empty').waitFor();
    expect(await page.getByTestId('conversation-link').count()).toBe(0);
    await context.close();
  });

  it('keeps what was typed when the stream fails (Retry sends it), shows failed lists with Retry, and marks New Chat current only on /chat', async () => {
    const context = await browser().newContext({ viewport: { width: 1280, height: 860 }, locale: 'en-US' });
    await context.addInitScript(() => localStorage.setItem('language', 'en'));
    const page = await context.newPage();
    // The conversation list fails to load the first time: an error with Retry, not "no conversations yet".
    let failList = true;
    await page.route('**/llm/conversations', async (route) => {
      if (route.request().method() === 'GET' && failList) {
        failList = false;
        await route.fulfill({ status: 500, body: '' });
      } else await route.continue();
    });
    await page.goto(`${baseUrl}/chat`);
    await page.waitForURL(/\/login/);
    await signIn(page, 'e2e-chat-retry@example.com');
    await page.waitForURL(/\/chat$/);
    const listFailure = page.getByTestId('conversations-failed');
    await listFailure.waitFor();
    expect(await listFailure.textContent()).toContain('Failed to load conversations');
    expect(await page.getByText('No conversations yet').count()).toBe(0);
    await page.getByTestId('conversations-retry').click();
    await page.getByText('No conversations yet').waitFor();
    expect(await page.getByTestId('new-chat').getAttribute('aria-current')).toBe('page');

    // The input has a name for screen readers.
    const input = page.getByRole('textbox', { name: 'Message to the AI' });
    await input.waitFor();

    // The stream fails: the text returns to the input and the message offers Retry.
    await page.route('**/llm/conversations/*/stream', (route) => route.abort('connectionreset'));
    await input.fill('Tell me a story');
    await input.press('Enter');
    await page.waitForURL(/\/chat\/\d+$/);
    const failed = page.getByTestId('failed-message');
    await failed.waitFor();
    expect(await page.getByTestId('failed-reason').textContent()).toBe('Failed to send message');
    expect(await input.inputValue()).toBe('Tell me a story');
    // While a conversation is open, New Chat is not the current page.
    expect(await page.getByTestId('new-chat').getAttribute('aria-current')).toBeNull();
    await page.unroute('**/llm/conversations/*/stream');
    await page.getByRole('button', { name: 'Retry' }).click();
    await page.getByTestId('message-meta').waitFor({ timeout: 30_000 });
    await failed.waitFor({ state: 'detached' });
    expect(await page.getByTestId('message-user').count()).toBe(1);
    expect(await input.inputValue()).toBe('');
    // Reloaded from the server: the message is there once, with its reply.
    await page.reload();
    await page.getByTestId('message-assistant').waitFor();
    expect(await page.getByTestId('message-user').count()).toBe(1);
    await context.close();
  });

  it('collapses the sidebar on a phone and speaks Russian by default', async () => {
    const context = await browser().newContext({ viewport: { width: 390, height: 844 }, isMobile: true });
    const page = await context.newPage();
    await page.goto(`${baseUrl}/chat`);
    await page.waitForURL(/\/login/);
    await page.getByTestId('google-sign-in').waitFor();
    await signIn(page, 'e2e-chat-mobile');
    await page.waitForURL(/\/chat$/);
    await page.getByTestId('chat-empty').waitFor();
    expect(await page.getByTestId('new-chat').isVisible()).toBe(false);
    expect(await page.getByText('Enter — отправить').isVisible()).toBe(true);
    await page.getByTestId('chat-input').fill('Привет');
    await page.getByTestId('chat-send').click();
    await page.getByTestId('message-meta').waitFor({ timeout: 30_000 });
    // The offline assistant and its settings speak Russian too.
    expect(await page.getByTestId('message-meta').textContent()).toMatch(/^Офлайн-ассистент · \d{2}:\d{2}$/);
    expect(await page.getByTestId('config-bar').textContent()).toContain('Модель: Офлайн-ассистент');
    await page.getByRole('button', { name: 'Показать разговоры' }).click();
    const drawer = page.getByRole('dialog');
    await drawer.getByTestId('new-chat').waitFor();
    await screenshot(page, 'chat-mobile');
    // Choosing a conversation closes the drawer.
    await drawer.getByTestId('new-chat').click();
    await page.waitForURL(/\/chat$/);
    await drawer.waitFor({ state: 'detached' });
    await page.getByRole('button', { name: 'Показать разговоры' }).click();
    await drawer.getByTestId('conversation-link').first().click();
    await page.waitForURL(/\/chat\/\d+$/);
    await drawer.waitFor({ state: 'detached' });
    // Deleting from the drawer asks first, then leaves the list open and empty.
    await page.getByRole('button', { name: 'Показать разговоры' }).click();
    await drawer.getByTestId('delete-conversation').first().click();
    await page.getByTestId('confirm-delete').click();
    await page.waitForURL(/\/chat$/);
    await drawer.getByTestId('conversation-link').waitFor({ state: 'detached' });
    await context.close();
  });
});
