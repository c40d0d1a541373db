import { describe, expect, it } from 'vitest';
import {
  CHAT_MAX_TOKENS_DEFAULT,
  CHAT_MESSAGE_MAX_CHARS,
  CONTEXT_TOKENS_LIMIT_DEFAULT,
  DEFAULT_MODEL_CONTEXT_TOKENS,
  WORDS_PER_1000_TOKENS,
  chatCost,
  chatErrorMessages,
  chatModelSchema,
  chatStreamRequestSchema,
  clampContextLimit,
  modelCostInfo,
  modelOptionLabel,
  parseConversationId,
  relativeDateLabel,
  worstCaseCost,
} from '../../src/domain/chat';

describe('chat constants (SPEC 9)', () => {
  it('match the SPEC', () => {
    expect(CONTEXT_TOKENS_LIMIT_DEFAULT).toBe(500);
    expect(CHAT_MAX_TOKENS_DEFAULT).toBe(2000);
    expect(DEFAULT_MODEL_CONTEXT_TOKENS).toBe(128000);
    expect(WORDS_PER_1000_TOKENS).toBe(750);
    expect(CHAT_MESSAGE_MAX_CHARS).toBe(32000);
  });

  it('keeps the SPEC 8 chat error texts word for word', () => {
    expect(chatErrorMessages).toEqual({
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
    });
  });
});

describe('clampContextLimit', () => {
  it.each([
    [500, 500],
    [100, 100],
    [10000, 10000],
    [99, 100],
    [0, 100],
    [-300, 100],
    [10001, 10000],
    [1e9, 10000],
    [149, 100],
    [150, 200],
    [1234, 1200],
    [9960, 10000],
    ['700', 700],
    [' 2500 ', 2500],
    ['2550', 2600],
  ])('%j -> %j', (input, expected) => {
    expect(clampContextLimit(input, 800)).toBe(expected);
  });

  it.each([[''], ['   '], ['abc'], ['12abc'], [Number.NaN], [Infinity], [null], [undefined], [{}], [[500]], [true]])(
    'ignores the non-numeric %j and keeps the previous value',
    (input) => {
      expect(clampContextLimit(input, 800)).toBe(800);
    },
  );
});

describe('chatCost', () => {
  it('charges ceil(in*inCost/1e6 + out*outCost/1e6)', () => {
    expect(chatCost({ inputTokens: 1_000_000, outputTokens: 0, inputCostPer1M: 3, outputCostPer1M: 9 })).toBe(3);
    expect(chatCost({ inputTokens: 500_000, outputTokens: 500_000, inputCostPer1M: 3, outputCostPer1M: 9 })).toBe(6);
    // 1.5 + 4.5 + a tiny bit more rounds up
    expect(chatCost({ inputTokens: 500_001, outputTokens: 500_000, inputCostPer1M: 3, outputCostPer1M: 9 })).toBe(7);
    expect(chatCost({ inputTokens: 1200, outputTokens: 800, inputCostPer1M: 2500, outputCostPer1M: 10000 })).toBe(11);
  });

  it('is at least 1', () => {
    expect(chatCost({ inputTokens: 0, outputTokens: 0, inputCostPer1M: 3, outputCostPer1M: 9 })).toBe(1);
    expect(chatCost({ inputTokens: 10, outputTokens: 5, inputCostPer1M: 3, outputCostPer1M: 9 })).toBe(1);
    expect(chatCost({ inputTokens: 10, outputTokens: 5, inputCostPer1M: 0, outputCostPer1M: 0 })).toBe(1);
  });

  it('does not charge an extra token for float noise', () => {
    // in floats these sum to 7.000000000000001 and 1.0000000000000002; on paper 7 and 1
    expect(chatCost({ inputTokens: 12_500_000, outputTokens: 0, inputCostPer1M: 0.56, outputCostPer1M: 0 })).toBe(7);
    expect(chatCost({ inputTokens: 100_000, outputTokens: 100_000, inputCostPer1M: 0.7, outputCostPer1M: 9.3 })).toBe(
      1,
    );
    expect(chatCost({ inputTokens: 100_000, outputTokens: 100_001, inputCostPer1M: 0.7, outputCostPer1M: 9.3 })).toBe(
      2,
    );
  });

  it('rejects negative or non-finite input', () => {
    expect(() => chatCost({ inputTokens: -1, outputTokens: 0, inputCostPer1M: 1, outputCostPer1M: 1 })).toThrow(
      RangeError,
    );
    expect(() => chatCost({ inputTokens: 1, outputTokens: Number.NaN, inputCostPer1M: 1, outputCostPer1M: 1 })).toThrow(
      RangeError,
    );
  });

  it('worstCaseCost charges the prompt plus the whole maxTokens as output', () => {
    const model = { inputCostPer1M: 2500, outputCostPer1M: 10000 };
    expect(worstCaseCost(400, 2000, model)).toBe(21); // 1 + 20
    expect(worstCaseCost(400, 2000, model)).toBe(
      chatCost({ inputTokens: 400, outputTokens: 2000, inputCostPer1M: 2500, outputCostPer1M: 10000 }),
    );
    expect(worstCaseCost(1, 1, { inputCostPer1M: 1, outputCostPer1M: 1 })).toBe(1);
  });
});

describe('chatStreamRequestSchema', () => {
  const messagesOf = (input: unknown): string[] => {
    const r = chatStreamRequestSchema.safeParse(input);
    return r.success ? [] : r.error.issues.map((i) => i.message);
  };

  it('trims the message and fills the defaults', () => {
    expect(chatStreamRequestSchema.parse({ message: '  hi  ', model: 'gpt-4o' })).toEqual({
      message: 'hi',
      model: 'gpt-4o',
      maxTokens: 2000,
      contextTokensLimit: 500,
    });
  });

  it('keeps given values', () => {
    expect(
      chatStreamRequestSchema.parse({ message: 'hi', model: 'm', maxTokens: 16384, contextTokensLimit: 10000 }),
    ).toMatchObject({ maxTokens: 16384, contextTokensLimit: 10000 });
  });

  it('rejects a missing, blank or too long message with clear texts', () => {
    expect(messagesOf({ model: 'm' })).toEqual(['Message is required']);
    expect(messagesOf({ message: 42, model: 'm' })).toEqual(['Message must be text']);
    expect(messagesOf({ message: ' \n\t ', model: 'm' })).toEqual(['Message cannot be empty']);
    expect(messagesOf({ message: 'x'.repeat(32001), model: 'm' })).toEqual([
      'Message must be at most 32000 characters',
    ]);
    // the limit counts after trimming
    expect(messagesOf({ message: ` ${'x'.repeat(32000)} `, model: 'm' })).toEqual([]);
  });

  it('rejects a missing model with the SPEC text', () => {
    expect(messagesOf({ message: 'hi' })).toEqual(['No model selected. Please select a model in settings.']);
    expect(messagesOf({ message: 'hi', model: '  ' })).toEqual([
      'No model selected. Please select a model in settings.',
    ]);
  });

  it('checks maxTokens within 1..16384', () => {
    expect(messagesOf({ message: 'hi', model: 'm', maxTokens: 0 })).toEqual(['maxTokens must be between 1 and 16384']);
    expect(messagesOf({ message: 'hi', model: 'm', maxTokens: 16385 })).toEqual([
      'maxTokens must be between 1 and 16384',
    ]);
    expect(messagesOf({ message: 'hi', model: 'm', maxTokens: 1.5 })).toEqual(['maxTokens must be a whole number']);
    expect(messagesOf({ message: 'hi', model: 'm', maxTokens: '2000' })).toEqual(['maxTokens must be a number']);
  });

  it('checks contextTokensLimit within 100..10000 in steps of 100', () => {
    const text = 'Context token limit must be a multiple of 100 from 100 to 10000';
    expect(messagesOf({ message: 'hi', model: 'm', contextTokensLimit: 50 })).toEqual([text]);
    expect(messagesOf({ message: 'hi', model: 'm', contextTokensLimit: 10100 })).toEqual([text]);
    expect(messagesOf({ message: 'hi', model: 'm', contextTokensLimit: 150 })).toEqual([text]);
    expect(messagesOf({ message: 'hi', model: 'm', contextTokensLimit: 100.5 })).toEqual([text]);
    expect(messagesOf({ message: 'hi', model: 'm', contextTokensLimit: 'x' })).toEqual([
      'Context token limit must be a number',
    ]);
  });
});

describe('chatModelSchema', () => {
  it('fills the SPEC defaults', () => {
    expect(chatModelSchema.parse({ id: 'gpt-4o', name: 'GPT-4o' })).toEqual({
      id: 'gpt-4o',
      name: 'GPT-4o',
      description: '',
      maxTokens: 128000,
      inputCostPer1M: null,
      outputCostPer1M: null,
      isStreamingAllowed: true,
    });
  });

  it('rejects negative costs and empty ids', () => {
    expect(chatModelSchema.safeParse({ id: 'x', name: 'X', inputCostPer1M: -1 }).success).toBe(false);
    expect(chatModelSchema.safeParse({ id: '', name: 'X' }).success).toBe(false);
  });
});

describe('modelOptionLabel', () => {
  it('shows input/output per 1M tokens when both are known', () => {
    expect(modelOptionLabel({ name: 'GPT-4o', inputCostPer1M: 2500, outputCostPer1M: 10000 })).toBe(
      'GPT-4o (2500/10000 per 1M tokens)',
    );
    expect(modelOptionLabel({ name: 'GPT-4o Mini', inputCostPer1M: 150.5, outputCostPer1M: 0.6 })).toBe(
      'GPT-4o Mini (150.5/0.6 per 1M tokens)',
    );
  });

  it('otherwise shows the estimated cost for 1000 tokens', () => {
    expect(modelOptionLabel({ name: 'Local', inputCostPer1M: 2000, outputCostPer1M: null })).toBe(
      'Local (~2 per 1K tokens)',
    );
    expect(modelOptionLabel({ name: 'Local', inputCostPer1M: null, outputCostPer1M: 150 })).toBe(
      'Local (~0.15 per 1K tokens)',
    );
    expect(modelCostInfo({ inputCostPer1M: 150 })).toEqual({ kind: 'per1K', estimate: 0.15 });
  });

  it('is just the name without any known cost', () => {
    expect(modelOptionLabel({ name: 'Offline assistant', inputCostPer1M: null, outputCostPer1M: null })).toBe(
      'Offline assistant',
    );
    expect(modelCostInfo({})).toEqual({ kind: 'unknown' });
  });
});

describe('relativeDateLabel', () => {
  // Local-time constructors keep these independent of the machine's time zone.
  const at = (d: number, h: number, m: number, s = 0): Date => new Date(2024, 2, d, h, m, s);

  it('is today for the same calendar day, up to the last second before midnight', () => {
    expect(relativeDateLabel(at(10, 0, 0), at(10, 23, 59, 59))).toEqual({ kind: 'today' });
    expect(relativeDateLabel(at(10, 12, 0), at(10, 12, 0))).toEqual({ kind: 'today' });
  });

  it('is yesterday one minute after midnight', () => {
    expect(relativeDateLabel(at(9, 23, 59), at(10, 0, 1))).toEqual({ kind: 'yesterday' });
    expect(relativeDateLabel(at(9, 0, 0), at(10, 23, 59))).toEqual({ kind: 'yesterday' });
  });

  it('counts n days ago for 2 to 6 calendar days', () => {
    expect(relativeDateLabel(at(8, 23, 59), at(10, 0, 0))).toEqual({ kind: 'daysAgo', n: 2 });
    expect(relativeDateLabel(at(4, 0, 0), at(10, 23, 0))).toEqual({ kind: 'daysAgo', n: 6 });
  });

  it('gives the date from 7 days on, and for the future', () => {
    expect(relativeDateLabel(at(3, 23, 59), at(10, 0, 0))).toEqual({ kind: 'date', date: at(3, 23, 59) });
    expect(relativeDateLabel(at(11, 0, 0), at(10, 23, 59))).toEqual({ kind: 'date', date: at(11, 0, 0) });
  });

  it('works across a month boundary and accepts ISO strings', () => {
    const feb29 = new Date(2024, 1, 29, 22, 0);
    expect(relativeDateLabel(feb29, new Date(2024, 2, 1, 1, 0))).toEqual({ kind: 'yesterday' });
    expect(relativeDateLabel(at(9, 10, 0).toISOString(), at(10, 10, 0))).toEqual({ kind: 'yesterday' });
  });

  it('falls back to the date for an invalid value', () => {
    const result = relativeDateLabel('not a date', at(10, 10, 0));
    expect(result.kind).toBe('date');
  });
});

describe('parseConversationId', () => {
  it('accepts whole numbers', () => {
    expect(parseConversationId('42')).toBe(42);
    expect(parseConversationId('0')).toBe(0);
    expect(parseConversationId(7)).toBe(7);
  });

  it.each([
    ['abc'],
    ['12abc'],
    ['1.5'],
    ['-3'],
    [' 4'],
    [''],
    ['1e3'],
    ['99999999999999999999'],
    [1.5],
    [-1],
    [undefined],
  ])('rejects %j', (value) => {
    expect(parseConversationId(value)).toBeUndefined();
  });
});
