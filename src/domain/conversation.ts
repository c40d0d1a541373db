import { z } from 'zod';
import { chatErrorMessages, chatModelSchema, chatStreamRequestSchema, REPLY_ENDINGS } from './chat';
import { hasVisibleText, storedText, withoutBidiControls } from './text';
import { chatBillingSchema, chatContextInfoSchema } from './sse';

/**
 * SPEC section 3 "Conversation" and "Message" as they travel between the API and the
 * browser, plus the rule that names a conversation after its first message.
 */

/** The title a conversation gets when it is created before anything was said. */
export const NEW_CONVERSATION_TITLE = 'New Chat';
export const CONVERSATION_TITLE_MAX_CHARS = 60;

export const messageSchema = z.object({
  id: z.number().int(),
  role: z.enum(['user', 'assistant']),
  content: z.string(),
  model: z.string().nullable(),
  tokensUsed: z.number().int().nullable(),
  /** Only on a reply that is not an ordinary complete answer (a refusal, cut off, filtered). */
  ending: z.enum(REPLY_ENDINGS).optional(),
  createdAt: z.string(),
});
export type Message = z.infer<typeof messageSchema>;

export const conversationSummarySchema = z.object({
  id: z.number().int(),
  title: z.string(),
  isDeleted: z.boolean(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type ConversationSummary = z.infer<typeof conversationSummarySchema>;

/**
 * A reply still being written (issue #28): its text so far. The conversation answers with
 * it, so a reload or another tab shows the reply and follows it on the event stream
 * (`event: reply`, src/domain/jobs.ts) to its end. Absent when no reply is in progress.
 */
export const pendingReplySchema = z.object({
  requestId: z.number().int(),
  model: z.string(),
  content: z.string(),
  startedAt: z.string(),
});
export type PendingReply = z.infer<typeof pendingReplySchema>;

export const conversationSchema = conversationSummarySchema.extend({
  messages: z.array(messageSchema),
  pendingReply: pendingReplySchema.optional(),
});
export type Conversation = z.infer<typeof conversationSchema>;

export const conversationListSchema = z.array(conversationSummarySchema);

export const CONVERSATION_TITLE_MAX_LENGTH = 200;

/**
 * Body of POST /llm/conversations: a blank or missing title gets the placeholder, and so
 * does a request with no body at all. A conversation made for a first message names it
 * with its model and limits (as the stream will), so the server can refuse, before
 * creating anything, a message that the balance cannot pay any reply for.
 */
export const createConversationSchema = z
  .object({
    title: storedText({
      max: CONVERSATION_TITLE_MAX_LENGTH,
      multiline: false,
      trim: true,
      notText: 'Title must be text',
      tooLong: `Title must be at most ${CONVERSATION_TITLE_MAX_LENGTH} characters`,
    })
      // Nothing visible (zero-width characters only) is a blank title: the placeholder.
      .transform((title) => (hasVisibleText(title) ? title : ''))
      .optional(),
    message: chatStreamRequestSchema.shape.message.optional(),
    model: chatStreamRequestSchema.shape.model.optional(),
    contextTokensLimit: chatStreamRequestSchema.shape.contextTokensLimit,
    maxTokens: chatStreamRequestSchema.shape.maxTokens,
  })
  .nullish()
  .transform((body): CreateConversationRequest => body ?? {})
  .refine((body) => body.message === undefined || body.model !== undefined, {
    message: chatErrorMessages.noModelSelected,
    path: ['model'],
  });

/** What POST /llm/conversations works with once validated. */
export interface CreateConversationRequest {
  title?: string;
  message?: string;
  model?: string;
  contextTokensLimit?: number;
  maxTokens?: number;
}

/** GET /llm/models: models keyed by id and the default id (SPEC section 7). */
export const modelListSchema = z.object({
  models: z.record(z.string(), chatModelSchema),
  default: z.string(),
});
export type ModelList = z.infer<typeof modelListSchema>;

/** What the non-streaming chat calls answer with. */
export const chatReplySchema = z.object({
  conversationId: z.number().int(),
  content: z.string(),
  message: messageSchema,
  tokensUsed: z.number().int().nonnegative(),
  contextInfo: chatContextInfoSchema,
  billing: chatBillingSchema,
  balanceAfter: z.number().int().nonnegative(),
});
export type ChatReply = z.infer<typeof chatReplySchema>;

export function isPlaceholderTitle(title: string): boolean {
  return title.trim() === '' || title === NEW_CONVERSATION_TITLE;
}

/**
 * The first message on one line, cut at a word boundary when it is long; without the
 * bidirectional controls a title may not hold, and the placeholder when nothing shows.
 */
export function titleFromMessage(message: string): string {
  const flat = withoutBidiControls(message).replace(/\s+/g, ' ').trim();
  if (!hasVisibleText(flat)) return NEW_CONVERSATION_TITLE;
  const chars = Array.from(flat);
  if (chars.length <= CONVERSATION_TITLE_MAX_CHARS) return flat || NEW_CONVERSATION_TITLE;
  const cut = chars.slice(0, CONVERSATION_TITLE_MAX_CHARS - 1).join('');
  const atSpace = cut.lastIndexOf(' ');
  return `${(atSpace > CONVERSATION_TITLE_MAX_CHARS / 2 ? cut.slice(0, atSpace) : cut).trimEnd()}…`;
}
