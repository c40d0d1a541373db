import type { chatRu } from './chat.ru';

/** Texts of the chat feature, English: the same keys as Russian. */
export const chatEn: typeof chatRu = {};
