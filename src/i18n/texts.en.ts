import { billingEn } from './locales/billing.en';
import { chatEn } from './locales/chat.en';
import { commonEn } from './locales/common.en';
import { galleryEn } from './locales/gallery.en';
import { generationEn } from './locales/generation.en';
import { portraitEn } from './locales/portrait.en';
import { queueEn } from './locales/queue.en';
// Typed by the Russian texts themselves, not by ./index, which imports this module.
import type { texts as ruTexts } from './texts.ru';

/** Every English text, namespaces per feature; the same keys as the Russian (typed so). */
export const texts: typeof ruTexts = {
  common: commonEn,
  generation: generationEn,
  chat: chatEn,
  billing: billingEn,
  gallery: galleryEn,
  portrait: portraitEn,
  queue: queueEn,
};
