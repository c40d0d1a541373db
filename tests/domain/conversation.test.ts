import { describe, expect, it } from 'vitest';
import {
  CONVERSATION_TITLE_MAX_CHARS,
  CONVERSATION_TITLE_MAX_LENGTH,
  NEW_CONVERSATION_TITLE,
  chatReplySchema,
  conversationListSchema,
  conversationSchema,
  conversationSummarySchema,
  createConversationSchema,
  isPlaceholderTitle,
  messageSchema,
  modelListSchema,
  titleFromMessage,
} from '../../src/domain/conversation';
import { chatErrorMessages } from '../../src/domain/chat';

// SPEC section 3: Conversation: id (number), title, isDeleted, createdAt, updatedAt,
// messages (list). Message: id, role (user or assistant), content, model, tokensUsed,
// createdAt.
const userMessage = {
  id: 11,
  role: 'user',
  content: 'Hello',
  model: null,
  tokensUsed: null,
  createdAt: '2026-01-02T10:00:00.000Z',
};
const assistantMessage = {
  id: 12,
  role: 'assistant',
  content: 'Hi! How can I help?',
  model: 'gpt-4o-mini',
  tokensUsed: 42,
  createdAt: '2026-01-02T10:00:03.000Z',
};
const summary = {
  id: 5,
  title: 'Greetings',
  isDeleted: false,
  createdAt: '2026-01-02T10:00:00.000Z',
  updatedAt: '2026-01-02T10:00:03.000Z',
};

describe('conversation and message shapes (SPEC section 3)', () => {
  it('read a conversation with its messages, every SPEC field kept', () => {
    const conversation = { ...summary, messages: [userMessage, assistantMessage] };
    expect(conversationSchema.parse(conversation)).toEqual(conversation);
    expect(messageSchema.parse(assistantMessage)).toEqual(assistantMessage);
    expect(conversationSummarySchema.parse(summary)).toEqual(summary);
    expect(conversationListSchema.parse([summary, { ...summary, id: 6, isDeleted: true }])).toEqual([
      summary,
      { ...summary, id: 6, isDeleted: true },
    ]);
    expect(conversationListSchema.parse([])).toEqual([]);
  });

  it('refuse a message whose role is neither user nor assistant', () => {
    for (const role of ['system', 'tool', '', 'User']) {
      expect(messageSchema.safeParse({ ...userMessage, role }).success).toBe(false);
    }
  });

  it.each(Object.keys(userMessage))('refuse a message without %s', (field) => {
    const message: Record<string, unknown> = { ...assistantMessage };
    delete message[field];
    expect(messageSchema.safeParse(message).success).toBe(false);
  });

  it.each(Object.keys(summary))('refuse a conversation without %s', (field) => {
    const conversation: Record<string, unknown> = { ...summary, messages: [] };
    delete conversation[field];
    expect(conversationSchema.safeParse(conversation).success).toBe(false);
    const listed: Record<string, unknown> = { ...summary };
    delete listed[field];
    expect(conversationListSchema.safeParse([listed]).success).toBe(false);
  });

  it('refuse a conversation without its message list, and ids that are not whole numbers', () => {
    expect(conversationSchema.safeParse(summary).success).toBe(false);
    expect(conversationSchema.safeParse({ ...summary, id: 5.5, messages: [] }).success).toBe(false);
    expect(conversationSchema.safeParse({ ...summary, id: '5', messages: [] }).success).toBe(false);
    expect(messageSchema.safeParse({ ...userMessage, id: 1.5 }).success).toBe(false);
    expect(messageSchema.safeParse({ ...assistantMessage, tokensUsed: 4.2 }).success).toBe(false);
    expect(conversationSchema.safeParse({ ...summary, messages: [{ ...userMessage, role: 'system' }] }).success).toBe(
      false,
    );
  });
});

describe('POST /llm/conversations body (SPEC section 7: title)', () => {
  it('takes no body, an empty body or a blank title as "no title"', () => {
    expect(createConversationSchema.parse(undefined)).toEqual({});
    expect(createConversationSchema.parse(null)).toEqual({});
    const empty = createConversationSchema.parse({});
    expect(empty.title).toBeUndefined();
    expect(empty.message).toBeUndefined();
    expect(createConversationSchema.parse({ title: '   ' }).title).toBe('');
  });

  it('trims the title and keeps it up to 200 characters', () => {
    expect(createConversationSchema.parse({ title: '  Trip to Kazan  ' }).title).toBe('Trip to Kazan');
    const longest = 'я'.repeat(CONVERSATION_TITLE_MAX_LENGTH);
    expect(CONVERSATION_TITLE_MAX_LENGTH).toBe(200);
    expect(createConversationSchema.parse({ title: longest }).title).toBe(longest);
    const tooLong = createConversationSchema.safeParse({ title: `${longest}я` });
    expect(tooLong.success).toBe(false);
    expect(tooLong.error?.issues[0]?.message).toBe('Title must be at most 200 characters');
    expect(createConversationSchema.safeParse({ title: 42 }).error?.issues[0]?.message).toBe('Title must be text');
  });

  it('refuses a title on more than one line', () => {
    expect(createConversationSchema.safeParse({ title: 'one\ntwo' }).success).toBe(false);
    expect(createConversationSchema.safeParse({ title: 'one\ttwo' }).success).toBe(false);
  });

  it('needs a model when it carries a first message (SPEC 8: "No model selected...")', () => {
    const result = createConversationSchema.safeParse({ message: 'Hello' });
    expect(result.success).toBe(false);
    expect(result.error?.issues).toEqual([
      expect.objectContaining({ message: chatErrorMessages.noModelSelected, path: ['model'] }),
    ]);
    expect(createConversationSchema.safeParse({ message: 'Hello', model: '' }).success).toBe(false);
    const ok = createConversationSchema.parse({ message: ' Hello ', model: 'gpt-4o-mini', contextTokensLimit: 1000 });
    expect(ok).toMatchObject({ message: 'Hello', model: 'gpt-4o-mini', contextTokensLimit: 1000 });
    // A model alone (no message yet) is fine.
    expect(createConversationSchema.parse({ model: 'gpt-4o-mini' }).model).toBe('gpt-4o-mini');
  });

  it('checks the first message limits as the stream does (SPEC 5 and 9)', () => {
    const base = { message: 'Hello', model: 'm' };
    expect(createConversationSchema.safeParse({ ...base, contextTokensLimit: 50 }).success).toBe(false);
    expect(createConversationSchema.safeParse({ ...base, contextTokensLimit: 150 }).success).toBe(false);
    expect(createConversationSchema.safeParse({ ...base, contextTokensLimit: 10100 }).success).toBe(false);
    expect(createConversationSchema.safeParse({ ...base, message: '   ' }).success).toBe(false);
  });
});

describe('GET /llm/models and the chat reply (SPEC section 7)', () => {
  it('reads models keyed by id and the default id', () => {
    const list = modelListSchema.parse({
      models: { 'gpt-4o-mini': { id: 'gpt-4o-mini', name: 'GPT-4o mini', inputCostPer1M: 1, outputCostPer1M: 4 } },
      default: 'gpt-4o-mini',
    });
    expect(list.default).toBe('gpt-4o-mini');
    expect(list.models['gpt-4o-mini']).toMatchObject({ name: 'GPT-4o mini', inputCostPer1M: 1, outputCostPer1M: 4 });
    expect(modelListSchema.safeParse({ models: {} }).success).toBe(false);
    expect(modelListSchema.safeParse({ default: 'x' }).success).toBe(false);
  });

  it('reads a non-streaming reply and refuses negative counts', () => {
    const reply = {
      conversationId: 5,
      content: 'Hi',
      message: assistantMessage,
      tokensUsed: 42,
      contextInfo: { messagesIncluded: 1, tokensIncluded: 10, contextTokensLimit: 500 },
      billing: { inputTokens: 10, outputTokens: 32, cost: 1 },
      balanceAfter: 99,
    };
    expect(chatReplySchema.parse(reply)).toEqual(reply);
    expect(chatReplySchema.safeParse({ ...reply, tokensUsed: -1 }).success).toBe(false);
    expect(chatReplySchema.safeParse({ ...reply, balanceAfter: -1 }).success).toBe(false);
    expect(chatReplySchema.safeParse({ ...reply, balanceAfter: 0, tokensUsed: 0 }).success).toBe(true);
    expect(chatReplySchema.safeParse({ ...reply, conversationId: 5.5 }).success).toBe(false);
  });
});

describe('conversation titles', () => {
  it('treats a blank title and "New Chat" as the placeholder (SPEC 2: the New Chat button)', () => {
    expect(NEW_CONVERSATION_TITLE).toBe('New Chat');
    expect(isPlaceholderTitle('')).toBe(true);
    expect(isPlaceholderTitle('   ')).toBe(true);
    expect(isPlaceholderTitle('New Chat')).toBe(true);
    expect(isPlaceholderTitle('New Chat about cats')).toBe(false);
    expect(isPlaceholderTitle('Cats')).toBe(false);
  });

  it('names a conversation after its first message, on one line', () => {
    expect(titleFromMessage('Hello there')).toBe('Hello there');
    expect(titleFromMessage('  Hello\n\n there\t friend  ')).toBe('Hello there friend');
    expect(titleFromMessage('   \n ')).toBe(NEW_CONVERSATION_TITLE);
    expect(titleFromMessage('')).toBe(NEW_CONVERSATION_TITLE);
  });

  it('keeps a message of exactly the limit whole and cuts a longer one at a word, with an ellipsis', () => {
    expect(CONVERSATION_TITLE_MAX_CHARS).toBe(60);
    const exact = 'word '.repeat(11) + 'abcd5'; // 60 characters
    expect(exact).toHaveLength(60);
    expect(titleFromMessage(exact)).toBe(exact);

    const long = 'The quick brown fox jumps over the lazy dog and keeps running far away';
    const title = titleFromMessage(long);
    expect(Array.from(title).length).toBeLessThanOrEqual(60);
    expect(title.endsWith('…')).toBe(true);
    const kept = title.slice(0, -1);
    // Whole words only, and no trailing space before the ellipsis.
    expect(long.startsWith(`${kept} `)).toBe(true);
    expect(kept).toBe('The quick brown fox jumps over the lazy dog and keeps');
  });

  it('cuts a long word in the middle rather than leave a short title', () => {
    const word = 'x'.repeat(100);
    expect(titleFromMessage(word)).toBe(`${'x'.repeat(59)}…`);
    // A space early on is not a good cut: the title would be too short.
    const early = `ab ${'y'.repeat(100)}`;
    expect(titleFromMessage(early)).toBe(`ab ${'y'.repeat(56)}…`);
  });

  it('counts characters, not UTF-16 units (an emoji is one)', () => {
    const emoji = '😀'.repeat(60);
    expect(titleFromMessage(emoji)).toBe(emoji);
    const longer = '😀'.repeat(61);
    expect(titleFromMessage(longer)).toBe(`${'😀'.repeat(59)}…`);
  });
});
