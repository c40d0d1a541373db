import { billingRu } from './locales/billing.ru';
import { chatRu } from './locales/chat.ru';
import { commonRu } from './locales/common.ru';
import { galleryRu } from './locales/gallery.ru';
import { generationRu } from './locales/generation.ru';
import { portraitRu } from './locales/portrait.ru';
import { queueRu } from './locales/queue.ru';

/** Every Russian text, namespaces per feature. */
export const texts = {
  common: commonRu,
  generation: generationRu,
  chat: chatRu,
  billing: billingRu,
  gallery: galleryRu,
  portrait: portraitRu,
  queue: queueRu,
} as const;
