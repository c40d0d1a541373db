import { cleanup, screen, waitFor } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { openApp } from './support/app';

/*
 * An address no route knows (#26 item 10): the page says so in the visitor's language, links
 * home, and offers the language switch like every other page.
 */
describe('a page that does not exist', () => {
  afterEach(() => cleanup());

  for (const [lang, title, home, switcher] of [
    ['ru', 'Страница не найдена', 'На главную', 'Язык: Русский, RU'],
    ['en', 'Page not found', 'Go home', 'Language: English, EN'],
  ] as const) {
    it(`[${lang}] says so, links home and can switch the language`, async () => {
      const ui = await openApp('/no-such-page', { lang });
      try {
        await waitFor(() => expect(screen.getByRole('heading', { level: 1 }).textContent).toBe(title), {
          timeout: 15_000,
        });
        expect(screen.getByRole('link', { name: home }).getAttribute('href')).toBe('/');
        expect(screen.getByTestId('language-switcher').getAttribute('aria-label')).toBe(switcher);
      } finally {
        ui.close();
      }
    });
  }
});
