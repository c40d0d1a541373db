import { billingEn } from './locales/billing.en';
import { chatEn } from './locales/chat.en';
import { commonEn } from './locales/common.en';
import { galleryEn } from './locales/gallery.en';
import { generationEn } from './locales/generation.en';
import { portraitEn } from './locales/portrait.en';
import type { Texts } from './index';

/** Every English text, namespaces per feature; the same keys as the Russian (typed so). */
export const texts: Texts = {
  common: commonEn,
  generation: generationEn,
  chat: chatEn,
  billing: billingEn,
  gallery: galleryEn,
  portrait: portraitEn,
};
