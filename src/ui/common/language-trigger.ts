import { i18next, type Language } from '../../i18n';

/*
 * What the language button and the menu that replaces it share, apart from both, since
 * LanguageSwitcher loads LanguageMenu.
 */

export const triggerClassName =
  'flex items-center gap-1 rounded-lg px-2 py-1.5 text-sm font-medium text-slate-700 hover:bg-slate-100';

/**
 * The button's name: what it is and which language is chosen, ending with the code the
 * button shows, so that the name contains the visible text (WCAG 2.5.3, label in name;
 * axe ignores a code in parentheses).
 */
export const triggerLabel = (current: Language) =>
  `${i18next.t('header.language')}: ${i18next.t(`languages.${current}`)}, ${current.toUpperCase()}`;
