import { z } from 'zod';
import { chatStreamRequestSchema } from '../chat';
import {
  chatReplySchema,
  conversationListSchema,
  conversationSchema,
  createConversationSchema,
  modelListSchema,
} from '../conversation';
import { plainDecimalInteger } from '../numbers';
import { chatStreamEventSchema } from '../sse';
import {
  CROSS_SITE,
  doneMessage,
  endpoint,
  JSON_BODY_REFUSALS,
  ok,
  rawReply,
  refusals,
  SIGNED_IN_REFUSALS,
} from './contract';

/**
 * The chat (SPEC section 7): models, conversations, one reply whole or as server-sent events,
 * and Stop from any tab (issue #28 item 5). A refusal before the reply starts (input,
 * ownership, balance) answers in the error shape; once a stream has begun, a failure is its
 * last event.
 */

const tags = ['Chat'];

export const conversationIdParamsSchema = z.object({
  id: plainDecimalInteger({ message: 'Conversation id must be a whole number' }),
});

/** POST /llm/chat: the stream's body, and the conversation to answer in (none: a new one). */
export const chatBodySchema = chatStreamRequestSchema.extend({
  conversationId: z
    .number({ error: 'conversationId must be a whole number' })
    .int('conversationId must be a whole number')
    .nonnegative('conversationId must be a whole number')
    .optional(),
});

export const modelListEndpoint = endpoint({
  method: 'GET',
  path: '/llm/models',
  tags,
  summary: 'The models offered, with their prices',
  replies: { 200: ok(modelListSchema), ...refusals(...SIGNED_IN_REFUSALS) },
});

export const conversationListEndpoint = endpoint({
  method: 'GET',
  path: '/llm/conversations',
  tags,
  summary: "The user's conversations, newest first",
  replies: { 200: ok(conversationListSchema), ...refusals(...SIGNED_IN_REFUSALS) },
});

export const createConversationEndpoint = endpoint({
  method: 'POST',
  path: '/llm/conversations',
  tags,
  summary: 'A new conversation; no body makes an empty one',
  description:
    'Made for a first message (with its model and limits), it is refused with 402 when the balance cannot pay ' +
    'for even the smallest reply to it, and nothing is created.',
  body: createConversationSchema,
  replies: {
    201: ok(conversationSchema),
    ...refusals(...JSON_BODY_REFUSALS, 402, CROSS_SITE, ...SIGNED_IN_REFUSALS),
  },
});

export const conversationEndpoint = endpoint({
  method: 'GET',
  path: '/llm/conversations/:id',
  tags,
  summary: 'One conversation with its messages',
  description: 'Another user’s conversation answers 404, like a missing one.',
  params: conversationIdParamsSchema,
  replies: { 200: ok(conversationSchema), ...refusals(400, 404, ...SIGNED_IN_REFUSALS) },
});

export const deleteConversationEndpoint = endpoint({
  method: 'DELETE',
  path: '/llm/conversations/:id',
  tags,
  summary: 'Delete a conversation',
  params: conversationIdParamsSchema,
  replies: { 200: doneMessage, ...refusals(400, CROSS_SITE, 404, ...SIGNED_IN_REFUSALS) },
});

/** The whole reply's refusals: those of the stream, and the provider's failure (502), billed for what it did. */
const wholeReplies = {
  200: ok(chatReplySchema),
  ...refusals(...JSON_BODY_REFUSALS, 402, CROSS_SITE, 404, ...SIGNED_IN_REFUSALS, 502),
};

export const chatEndpoint = endpoint({
  method: 'POST',
  path: '/llm/chat',
  tags,
  summary: 'One reply, whole, in a new conversation or the one named',
  body: chatBodySchema,
  replies: wholeReplies,
});

export const conversationChatEndpoint = endpoint({
  method: 'POST',
  path: '/llm/conversations/:id/chat',
  tags,
  summary: 'One reply, whole, in this conversation',
  params: conversationIdParamsSchema,
  body: chatStreamRequestSchema,
  replies: wholeReplies,
});

export const stopReplyEndpoint = endpoint({
  method: 'POST',
  path: '/llm/conversations/:id/stop',
  tags,
  summary: 'Stop the reply in progress in this conversation, from any tab: stored and billed for what was produced',
  description: '`stopped` is false when no reply was in progress.',
  params: conversationIdParamsSchema,
  replies: {
    200: ok(z.object({ stopped: z.boolean() })),
    ...refusals(400, CROSS_SITE, 404, ...SIGNED_IN_REFUSALS),
  },
});

export const chatStreamEndpoint = endpoint({
  method: 'POST',
  path: '/llm/conversations/:id/stream',
  tags,
  summary: 'One reply as server-sent events: content chunks, then a last event with the billing, then [DONE]',
  params: conversationIdParamsSchema,
  body: chatStreamRequestSchema,
  replies: {
    200: rawReply(
      'text/event-stream',
      'Each event is `data: <json>` with the schema given here, the last `data: [DONE]`',
      chatStreamEventSchema,
    ),
    ...refusals(...JSON_BODY_REFUSALS, 402, CROSS_SITE, 404, ...SIGNED_IN_REFUSALS),
  },
});
