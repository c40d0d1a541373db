import { cleanup, render, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { initI18n } from '../../src/i18n';
import { commonEn } from '../../src/i18n/locales/common.en';
import { commonRu } from '../../src/i18n/locales/common.ru';
import { LanguageSwitcher } from '../../src/ui/common/LanguageSwitcher';

/**
 * The menu is its own lazily loaded module, and its first load (Radix and all) is slow
 * here: load it once, so that whatever a test does that would show it shows it at once.
 * (Radix's dropdown needs no stand-ins for jsdom's missing APIs here: it has no arrow to
 * measure with ResizeObserver, and nothing calls pointer capture or scrollIntoView.)
 */
beforeAll(async () => {
  await import('../../src/ui/common/LanguageMenu');
}, 30_000);

/**
 * jsdom's location.reload is neither writable nor configurable, so it cannot be spied on;
 * switchLanguage calls globalThis.location.reload(), and globalThis.location can be
 * replaced for the test by a stand-in that only records the reload.
 */
let reload: ReturnType<typeof vi.fn<() => void>>;
beforeEach(() => {
  reload = vi.fn<() => void>();
  vi.stubGlobal('location', { href: window.location.href, reload });
});

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  localStorage.clear();
});

const switcher = () => screen.getByTestId('language-switcher');

/** The menu's radio items by language, checked against the texts they should show. */
function items(menu: HTMLElement) {
  const radios = within(menu).getAllByRole('menuitemradio');
  expect(radios).toHaveLength(2);
  return {
    radios,
    ru: within(menu).getByTestId('language-ru'),
    en: within(menu).getByTestId('language-en'),
  };
}

describe('language switcher (Russian, the default)', () => {
  beforeEach(async () => {
    await initI18n('ru');
  });

  it('before any interaction is a light button with no menu', () => {
    render(<LanguageSwitcher />);
    const button = screen.getByRole('button', {
      name: `${commonRu.header.language}: ${commonRu.languages.ru}, RU`,
    });
    expect(button).toBe(switcher());
    expect(button.getAttribute('aria-haspopup')).toBe('menu');
    expect(button.getAttribute('aria-expanded')).toBe('false');
    expect(button.textContent).toBe('RU');
    expect(screen.queryByRole('menu')).toBeNull();
    expect(screen.queryAllByRole('menuitemradio')).toHaveLength(0);
  });

  it('hovering or focusing the button does not open the menu', async () => {
    const user = userEvent.setup();
    render(<LanguageSwitcher />);
    await user.hover(switcher());
    await user.tab();
    expect(document.activeElement).toBe(switcher());
    // The module is at hand (see beforeAll): were it shown when preloaded, it would be by now.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(screen.queryByRole('menu')).toBeNull();
    expect(switcher().getAttribute('aria-expanded')).toBe('false');
  });

  it('a click opens the menu, the current language checked', async () => {
    const user = userEvent.setup();
    render(<LanguageSwitcher />);
    await user.click(switcher());
    const menu = await screen.findByRole('menu');
    expect(menu.getAttribute('aria-label')).toBe(commonRu.header.language);
    const { radios, ru, en } = items(menu);
    expect(radios).toEqual([ru, en]);
    expect(ru.getAttribute('aria-checked')).toBe('true');
    expect(en.getAttribute('aria-checked')).toBe('false');
    expect(ru.textContent).toBe(commonRu.languages.ru);
    expect(en.textContent).toBe(commonRu.languages.en);
    // The menu's own trigger has taken the button's place, and says it is open.
    const trigger = switcher();
    expect(trigger.getAttribute('aria-expanded')).toBe('true');
    expect(trigger.getAttribute('aria-controls')).toBe(menu.id);
    expect(trigger.getAttribute('aria-label')).toBe(`${commonRu.header.language}: ${commonRu.languages.ru}, RU`);
    expect(trigger.textContent).toBe('RU');
  });

  it('Arrow Down on the focused button opens the menu', async () => {
    const user = userEvent.setup();
    render(<LanguageSwitcher />);
    await user.tab();
    expect(document.activeElement).toBe(switcher());
    await user.keyboard('{ArrowDown}');
    const menu = await screen.findByRole('menu');
    const { ru } = items(menu);
    expect(ru.getAttribute('aria-checked')).toBe('true');
    expect(switcher().getAttribute('aria-expanded')).toBe('true');
    // Focus has moved to the first item, as Radix's own trigger does for a key.
    await waitFor(() => expect(document.activeElement).toBe(ru));
  });

  it('Enter on the button opens the menu with the first item focused', async () => {
    const user = userEvent.setup();
    render(<LanguageSwitcher />);
    await user.tab();
    await user.keyboard('{Enter}');
    const menu = await screen.findByRole('menu');
    await waitFor(() => expect(document.activeElement).toBe(items(menu).ru));
  });

  it('other keys on the button do not open the menu', async () => {
    const user = userEvent.setup();
    render(<LanguageSwitcher />);
    await user.tab();
    await user.keyboard('{ArrowUp}{ArrowLeft}a');
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(screen.queryByRole('menu')).toBeNull();
  });

  it('choosing English stores it and reloads the page', async () => {
    const user = userEvent.setup();
    render(<LanguageSwitcher />);
    await user.click(switcher());
    const { en } = items(await screen.findByRole('menu'));
    expect(reload).not.toHaveBeenCalled();
    await user.click(en);
    expect(localStorage.getItem('language')).toBe('en');
    expect(reload).toHaveBeenCalledTimes(1);
  });

  it('choosing English with the keyboard stores it and reloads the page', async () => {
    const user = userEvent.setup();
    render(<LanguageSwitcher />);
    await user.click(switcher());
    const { en } = items(await screen.findByRole('menu'));
    en.focus();
    await user.keyboard('{Enter}');
    expect(localStorage.getItem('language')).toBe('en');
    expect(reload).toHaveBeenCalledTimes(1);
  });

  it('choosing the current language neither stores nor reloads, and closes the menu', async () => {
    const user = userEvent.setup();
    render(<LanguageSwitcher />);
    await user.click(switcher());
    const { ru } = items(await screen.findByRole('menu'));
    await user.click(ru);
    await waitFor(() => expect(screen.queryByRole('menu')).toBeNull());
    expect(reload).not.toHaveBeenCalled();
    expect(localStorage.getItem('language')).toBeNull();
  });

  it('Escape closes the menu, focus returns to the trigger, and a click opens it again', async () => {
    const user = userEvent.setup();
    render(<LanguageSwitcher />);
    await user.click(switcher());
    await screen.findByRole('menu');
    await user.keyboard('{Escape}');
    await waitFor(() => expect(screen.queryByRole('menu')).toBeNull());
    const trigger = screen.getByRole('button', {
      name: `${commonRu.header.language}: ${commonRu.languages.ru}, RU`,
    });
    expect(trigger).toBe(switcher());
    expect(trigger.getAttribute('aria-expanded')).toBe('false');
    expect(trigger.getAttribute('aria-haspopup')).toBe('menu');
    await waitFor(() => expect(document.activeElement).toBe(trigger));
    expect(reload).not.toHaveBeenCalled();

    await user.click(trigger);
    const menu = await screen.findByRole('menu');
    expect(items(menu).ru.getAttribute('aria-checked')).toBe('true');
    expect(switcher().getAttribute('aria-expanded')).toBe('true');

    // And it still closes, and still switches.
    await user.keyboard('{Escape}');
    await waitFor(() => expect(screen.queryByRole('menu')).toBeNull());
    await waitFor(() => expect(document.activeElement).toBe(switcher()));
    await user.keyboard('{ArrowDown}');
    await user.click(items(await screen.findByRole('menu')).en);
    expect(localStorage.getItem('language')).toBe('en');
    expect(reload).toHaveBeenCalledTimes(1);
  });
});

describe('language switcher (English chosen before)', () => {
  beforeEach(async () => {
    localStorage.setItem('language', 'en');
    await initI18n('en');
  });

  afterAll(async () => {
    await initI18n('ru');
  });

  it('shows EN and names English as the current language', () => {
    render(<LanguageSwitcher />);
    const button = screen.getByRole('button', {
      name: `${commonEn.header.language}: ${commonEn.languages.en}, EN`,
    });
    expect(button).toBe(switcher());
    expect(button.getAttribute('aria-haspopup')).toBe('menu');
    expect(button.getAttribute('aria-expanded')).toBe('false');
    expect(button.textContent).toBe('EN');
    expect(screen.queryByRole('menu')).toBeNull();
  });

  it('the menu checks English; choosing Russian stores it and reloads', async () => {
    const user = userEvent.setup();
    render(<LanguageSwitcher />);
    await user.click(switcher());
    const menu = await screen.findByRole('menu');
    expect(menu.getAttribute('aria-label')).toBe(commonEn.header.language);
    const { ru, en } = items(menu);
    expect(en.getAttribute('aria-checked')).toBe('true');
    expect(ru.getAttribute('aria-checked')).toBe('false');
    expect(switcher().textContent).toBe('EN');

    await user.click(en);
    await waitFor(() => expect(screen.queryByRole('menu')).toBeNull());
    expect(reload).not.toHaveBeenCalled();
    expect(localStorage.getItem('language')).toBe('en');

    await user.click(switcher());
    await user.click(items(await screen.findByRole('menu')).ru);
    expect(localStorage.getItem('language')).toBe('ru');
    expect(reload).toHaveBeenCalledTimes(1);
  });
});
