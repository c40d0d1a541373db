import { afterAll, describe, expect, it } from 'vitest';
import { currentTexts, i18next, initI18n, loadAllTexts } from '../../src/i18n';
import { generationEn } from '../../src/i18n/locales/generation.en';
import { generationRu } from '../../src/i18n/locales/generation.ru';
import { texts as textsEn } from '../../src/i18n/texts.en';
import { texts as textsRu } from '../../src/i18n/texts.ru';

/**
 * src/main.tsx loads the `common` texts alone (all the login page on its own needs) and
 * src/app.tsx adds every other namespace of the same language (loadAllTexts); the rest of
 * the app reads them only after that.
 */
const OTHER_NAMESPACES = ['generation', 'chat', 'billing', 'gallery', 'portrait'] as const;

/** A key outside `common`: while it is missing, i18next gives back the key (without its namespace). */
const GENERATION_KEY = 'generation:title';
const UNTRANSLATED = 'title';

function expectOnlyCommon(language: 'ru' | 'en') {
  expect(i18next.language).toBe(language);
  expect(i18next.hasResourceBundle(language, 'common')).toBe(true);
  for (const namespace of OTHER_NAMESPACES) {
    expect(i18next.hasResourceBundle(language, namespace), namespace).toBe(false);
  }
  expect(i18next.exists(GENERATION_KEY)).toBe(false);
  expect(i18next.t(GENERATION_KEY)).toBe(UNTRANSLATED);
  expect(() => currentTexts()).toThrow(/not loaded/);
}

describe('the texts a page loads', () => {
  afterAll(async () => {
    await initI18n('ru');
  });

  it('Russian common texts only, then every Russian namespace', async () => {
    await initI18n('ru', 'common');
    expect(document.documentElement.lang).toBe('ru');
    expect(i18next.t('login.signIn')).toBe('Войти через Google');
    expectOnlyCommon('ru');

    await loadAllTexts();
    expect(i18next.t(GENERATION_KEY)).toBe(generationRu.title);
    expect(i18next.t(GENERATION_KEY)).toBe('AI-генератор изображений');
    expect(i18next.t('login.signIn')).toBe('Войти через Google');
    expect(currentTexts().generation).toEqual(generationRu);
    expect(currentTexts()).toEqual(textsRu);
    for (const namespace of OTHER_NAMESPACES) {
      expect(i18next.hasResourceBundle('ru', namespace), namespace).toBe(true);
    }
    // No English came with them.
    expect(i18next.hasResourceBundle('en', 'common')).toBe(false);
    expect(i18next.hasResourceBundle('en', 'generation')).toBe(false);
  });

  it('English common texts only, then every English namespace', async () => {
    await initI18n('en', 'common');
    expect(document.documentElement.lang).toBe('en');
    expect(i18next.t('login.signIn')).toBe('Sign in with Google');
    expectOnlyCommon('en');
    // Nothing Russian is left from before.
    expect(i18next.hasResourceBundle('ru', 'common')).toBe(false);
    expect(i18next.hasResourceBundle('ru', 'generation')).toBe(false);

    await loadAllTexts();
    expect(i18next.t(GENERATION_KEY)).toBe(generationEn.title);
    expect(i18next.t(GENERATION_KEY)).toBe('AI Image Generator');
    expect(i18next.t('login.signIn')).toBe('Sign in with Google');
    expect(currentTexts().generation).toEqual(generationEn);
    expect(currentTexts()).toEqual(textsEn);
    expect(document.documentElement.lang).toBe('en');
  });

  it('loads every text at once by default', async () => {
    await initI18n('en');
    expect(document.documentElement.lang).toBe('en');
    expect(i18next.language).toBe('en');
    expect(i18next.t('login.signIn')).toBe('Sign in with Google');
    expect(i18next.t(GENERATION_KEY)).toBe('AI Image Generator');
    expect(currentTexts().generation).toEqual(generationEn);
    expect(currentTexts()).toEqual(textsEn);
    for (const namespace of OTHER_NAMESPACES) {
      expect(i18next.hasResourceBundle('en', namespace), namespace).toBe(true);
    }

    await initI18n('ru');
    expect(document.documentElement.lang).toBe('ru');
    expect(i18next.t(GENERATION_KEY)).toBe('AI-генератор изображений');
    expect(currentTexts()).toEqual(textsRu);
  });

  it('loading all texts twice changes nothing', async () => {
    await initI18n('ru', 'common');
    await loadAllTexts();
    const first = currentTexts();
    await loadAllTexts();
    expect(currentTexts()).toBe(first);
    expect(currentTexts()).toEqual(textsRu);
    expect(i18next.t(GENERATION_KEY)).toBe('AI-генератор изображений');
  });

  it('keeps none of the English texts after switching back to Russian common texts', async () => {
    await initI18n('en');
    expect(currentTexts()).toEqual(textsEn);

    await initI18n('ru', 'common');
    expect(document.documentElement.lang).toBe('ru');
    expect(i18next.t('login.signIn')).toBe('Войти через Google');
    expectOnlyCommon('ru');

    await loadAllTexts();
    expect(currentTexts()).toEqual(textsRu);
    expect(currentTexts().generation).toEqual(generationRu);
    expect(i18next.t(GENERATION_KEY)).toBe('AI-генератор изображений');
  });
});
