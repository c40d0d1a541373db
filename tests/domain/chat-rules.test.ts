import { describe, expect, it } from 'vitest';
import {
  CHAT_STREAM_FAILURE_KINDS,
  cannotPayAnyReply,
  chatErrorMessages,
  chatProblem,
  chatStreamRequestSchema,
  formatCost,
  modelOptionLabel,
  parseConversationId,
  streamFailureCode,
} from '../../src/domain/chat';
import { parsePlainDecimal, plainDecimalInteger } from '../../src/domain/numbers';
import { chatRu } from '../../src/i18n/locales/chat.ru';

const chatErrorsRu = chatRu.errors as Record<string, string>;

describe('chat failures as the screen words them (SPEC 8, in Russian by default)', () => {
  it('keep SPEC 8 text as the message and the failure as the code', () => {
    expect(chatProblem('noModelSelected')).toEqual({
      code: 'noModelSelected',
      message: 'No model selected. Please select a model in settings.',
    });
    for (const key of Object.keys(chatErrorMessages) as (keyof typeof chatErrorMessages)[]) {
      const problem = chatProblem(key);
      expect(problem.message).toBe(chatErrorMessages[key]);
      expect(chatErrorsRu[problem.code], key).toBeTruthy();
    }
  });

  it('give each kind of stream failure a CHAT_ code the screen has a text for', () => {
    expect(streamFailureCode('upstream')).toBe('CHAT_UPSTREAM');
    expect(streamFailureCode('rate_limit')).toBe('CHAT_RATE_LIMIT');
    for (const kind of CHAT_STREAM_FAILURE_KINDS) {
      const code = streamFailureCode(kind);
      expect(code).toMatch(/^CHAT_[A-Z_]+$/);
      expect(chatErrorsRu[code], kind).toBeTruthy();
    }
  });

  it('keep a code of the catalogue as it is', () => {
    expect(streamFailureCode('INSUFFICIENT_TOKENS')).toBe('INSUFFICIENT_TOKENS');
    expect(streamFailureCode('UPSTREAM')).toBe('UPSTREAM');
  });
});

describe('cannotPayAnyReply (SPEC 6: spending is gated by the balance)', () => {
  it('is true below one token and false from one token on', () => {
    expect(cannotPayAnyReply(0)).toBe(true);
    expect(cannotPayAnyReply(-5)).toBe(true);
    expect(cannotPayAnyReply(0.5)).toBe(true);
    expect(cannotPayAnyReply(Number.NaN)).toBe(true);
    expect(cannotPayAnyReply(1)).toBe(false);
    expect(cannotPayAnyReply(2)).toBe(false);
  });
});

describe('model option prices (SPEC 2, chat settings)', () => {
  it('show no float noise', () => {
    expect(formatCost(0.1 + 0.2)).toBe('0.3');
    expect(formatCost(3)).toBe('3');
  });

  it('never show a small price as 0', () => {
    // 0.15 per 1M tokens is 0.00015 per 1K: a price, not nothing.
    const label = modelOptionLabel({ name: 'Mini', inputCostPer1M: 0.15, outputCostPer1M: null });
    expect(label).toMatch(/^Mini \(~0\.000[12] per 1K tokens\)$/);
    expect(Number(formatCost(0.004))).toBeGreaterThan(0);
  });
});

describe('conversation ids (SPEC 2/5: a whole number)', () => {
  it('takes 0, the smallest whole number', () => {
    expect(parseConversationId(0)).toBe(0);
    expect(parseConversationId('0')).toBe(0);
  });

  it('refuses a list of ids and other values that are not one number', () => {
    for (const value of [['12'], [12], { id: 12 }, null, undefined, true]) {
      expect(parseConversationId(value)).toBeUndefined();
    }
  });
});

describe('chat message and limits (SPEC 2 and 5)', () => {
  const base = { message: 'Hello', model: 'm' };

  it('keep the newlines Shift+Enter adds', () => {
    expect(chatStreamRequestSchema.parse({ ...base, message: 'line one\nline two\ttab' }).message).toBe(
      'line one\nline two\ttab',
    );
  });

  it('say one thing about a context limit that breaks several rules', () => {
    for (const contextTokensLimit of [50.5, 20000.5, 10050, 99999]) {
      const issues = chatStreamRequestSchema.safeParse({ ...base, contextTokensLimit }).error?.issues ?? [];
      expect(issues, String(contextTokensLimit)).toHaveLength(1);
    }
  });
});

describe('plain decimals', () => {
  it('take up to 15 digits and refuse more', () => {
    expect(parsePlainDecimal('999999999999999')).toBe(999999999999999);
    expect(parsePlainDecimal('1000000000000000')).toBeUndefined();
  });

  it('give their own message for a number out of range', () => {
    const page = plainDecimalInteger({ message: 'page must be a whole number', min: 1, max: 10 });
    expect(page.safeParse('11').error?.issues).toEqual([
      expect.objectContaining({ message: 'page must be a whole number' }),
    ]);
    expect(page.safeParse('0').error?.issues[0]?.message).toBe('page must be a whole number');
  });
});
