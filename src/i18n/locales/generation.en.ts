import type { generationRu } from './generation.ru';

/** Texts of the generation feature, English: the same keys as Russian. */
export const generationEn: typeof generationRu = {};
