/** Texts of the generation feature, Russian. */
export const generationRu = {};
