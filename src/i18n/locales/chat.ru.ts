/** Texts of the chat feature, Russian. */
export const chatRu = {};
