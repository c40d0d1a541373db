import { cleanup, render, screen, within } from '@testing-library/react';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { initI18n } from '../../src/i18n';
import { MessageBubble } from '../../src/ui/chat/MessageList';

beforeAll(async () => {
  await initI18n('ru');
  // The highlighter is its own lazily loaded chunk: until it has loaded a block shows its
  // code unhighlighted. Load it once, so every render below draws it at once.
  await import('../../src/ui/chat/CodeBlock');
  render(<MessageBubble message={reply('```ts\nconst x = 1;\n```')} streaming />);
  await screen.findAllByText((_, element) => element?.getAttribute('style')?.includes('color') ?? false, undefined, {
    timeout: 20_000,
  });
  cleanup();
}, 30_000);
afterEach(cleanup);

const reply = (content: string) => ({
  id: -2,
  role: 'assistant' as const,
  content,
  model: 'offline-assistant',
  tokensUsed: null,
  createdAt: '2026-11-21T10:00:00.000Z',
});

/** The reply as it grows, piece by piece, the way the stream delivers it. */
const full =
  'Here it is:\n\n```ts\nfunction countWords(text: string): number {\n  return text.length;\n}\n```\n\nDone.';

describe('code blocks in a streaming reply', () => {
  it('never shows "undefined" and shows the code received so far, highlighted, at every step', () => {
    const start = full.indexOf('```');
    for (let end = start + 3; end <= full.length; end += 1) {
      const text = full.slice(0, end);
      const { container, unmount } = render(<MessageBubble message={reply(text)} streaming />);
      expect(container.textContent, `after ${JSON.stringify(text)}`).not.toContain('undefined');
      const opened = /```ts\n/.test(text);
      if (opened) {
        const block = screen.getByTestId('code-block');
        expect(block.getAttribute('data-language')).toBe('typescript');
        const code =
          text
            .slice(text.indexOf('```ts\n') + 6)
            .split('```')[0]
            ?.replace(/\n$/, '') ?? '';
        expect(block.textContent).toBe(code);
        if (code.includes('function')) {
          // Prism's light build colours the tokens with inline styles.
          expect(block.querySelectorAll('code span[style*="color"]').length).toBeGreaterThan(0);
        }
      }
      unmount();
    }
  });

  it('draws an open block without a language as a block, and inline code inline', () => {
    render(<MessageBubble message={reply('Use `npm start`:\n\n```\nnpm start')} streaming />);
    const block = screen.getByTestId('code-block');
    expect(block.getAttribute('data-language')).toBe('text');
    expect(block.textContent).toBe('npm start');
    const inline = within(screen.getByTestId('assistant-markdown')).getAllByText('npm start')[0];
    expect(inline?.tagName).toBe('CODE');
    expect(inline?.closest('[data-testid="code-block"]')).toBeNull();
  });
});

describe('markdown that has opened but not yet closed in a streaming reply (issue #26 item 10)', () => {
  const markdown = () => screen.getByTestId('assistant-markdown');

  it.each([
    ['bold', 'The answer is **very imp', 'STRONG', 'very imp'],
    ['italic', 'It is *almost', 'EM', 'almost'],
    ['inline code', 'Run `npm sta', 'CODE', 'npm sta'],
  ])('draws unfinished %s as formatted text, never as raw markers', (_, text, tag, shown) => {
    render(<MessageBubble message={reply(text)} streaming />);
    expect(markdown().textContent).not.toMatch(/[*`]/);
    expect(within(markdown()).getByText(shown).tagName).toBe(tag);
  });

  it('shows an unfinished link as its text only, not as a link to an address that has not arrived', () => {
    render(<MessageBubble message={reply('See [the docs](https://exa')} streaming />);
    expect(markdown().textContent).toContain('the docs');
    expect(markdown().textContent).not.toContain('](');
    expect(within(markdown()).queryByRole('link')).toBeNull();
  });

  it('leaves a finished reply exactly as the model wrote it', () => {
    render(<MessageBubble message={reply('Two stars: 2 ** 3 = 8 and a lone * here')} streaming={false} />);
    expect(markdown().textContent).toContain('2 ** 3 = 8 and a lone * here');
  });
});
