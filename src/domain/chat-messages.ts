/** Kept apart from chat.ts's schemas so the texts can read it without loading the schema library. */

/** SPEC 8: the chat's error texts, word for word. */
export const chatErrorMessages = {
  loadModels: 'Failed to load available models',
  loadConversations: 'Failed to load conversations',
  createConversation: 'Failed to create conversation',
  loadConversation: 'Failed to load conversation',
  deleteConversation: 'Failed to delete conversation',
  noModelSelected: 'No model selected. Please select a model in settings.',
  createOrLoadConversation: 'Failed to create or load conversation',
  sendMessage: 'Failed to send message',
  streamErrorFallback: 'Something went wrong :(',
  noResponseBody: 'No response body reader',
} as const;
