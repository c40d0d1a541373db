import { describe, expect, it } from 'vitest';
import { issueErrorCode, isStorableText, storedText, textLength } from '../../src/domain/text';

describe('textLength', () => {
  it('counts code points, the way a person counts characters', () => {
    expect(textLength('')).toBe(0);
    expect(textLength('abc')).toBe(3);
    expect(textLength('кот')).toBe(3);
    expect(textLength('😀')).toBe(1);
    expect(textLength('😀'.repeat(1001))).toBe(1001);
    expect('😀'.repeat(1001).length).toBe(2002);
  });
});

describe('storedText', () => {
  const schema = storedText({ max: 5, multiline: true, tooLong: 'too long', required: 'required' });
  const title = storedText({ max: 5, multiline: false, tooLong: 'too long' });

  it('keeps newlines and tabs where a person types them, and refuses them in a single line', () => {
    expect(schema.safeParse('a\nb\tc').success).toBe(true);
    expect(schema.safeParse('a\r\nb').success).toBe(true);
    expect(title.safeParse('a\nb').success).toBe(false);
    expect(title.safeParse('a\tb').success).toBe(false);
  });

  it.each([
    '\u0000',
    'a\u0000b',
    '\u0007',
    '\u001b[31m',
    '\u007f',
    '\u0085',
    '\u009f',
    '\ud800',
    'a\udc00',
    'a\u000bb',
    'a\u000cb',
  ])('refuses %j with the INVALID_TEXT code', (value) => {
    const result = schema.safeParse(value);
    expect(result.success).toBe(false);
    const issue = result.error?.issues[0] as { params?: { code?: string }; message: string } | undefined;
    expect(issue?.params?.code).toBe('INVALID_TEXT');
    expect(issue?.message).toBe('Text contains characters that are not allowed');
    expect(isStorableText(value, true)).toBe(false);
  });

  it('counts the limit in code points', () => {
    expect(schema.safeParse('😀😀😀😀😀').success).toBe(true);
    expect(schema.safeParse('😀😀😀😀😀😀').error?.issues[0]?.message).toBe('too long');
    expect(schema.safeParse('   ').error?.issues[0]?.message).toBe('required');
    expect(schema.safeParse(undefined).error?.issues[0]?.message).toBe('required');
  });
});

describe('storedText: one message per rule', () => {
  const schema = storedText({ max: 5, multiline: false, required: 'R', notText: 'N', missing: 'M', tooLong: 'L' });
  const messages = (value: unknown) => schema.safeParse(value).error?.issues.map((issue) => issue.message);

  it('calls a null or absent value missing and anything else not text', () => {
    expect(messages(undefined)).toEqual(['M']);
    expect(messages(null)).toEqual(['M']);
    expect(messages(42)).toEqual(['N']);
  });

  it('says only "required" for a long blank text, and only "invalid" for a long text with controls', () => {
    expect(messages(' '.repeat(20))).toEqual(['R']);
    expect(messages(`ab\u0000${'c'.repeat(20)}`)).toEqual(['Text contains characters that are not allowed']);
  });

  it('keeps the spaces of a text it is not told to trim, and counts them', () => {
    const untrimmed = storedText({ max: 6, multiline: true, tooLong: 'L' });
    expect(untrimmed.parse('  ab  ')).toBe('  ab  ');
    expect(untrimmed.safeParse('   ab   ').error?.issues[0]?.message).toBe('L');
    const trimmed = storedText({ max: 6, multiline: true, tooLong: 'L', trim: true });
    expect(trimmed.parse('   ab   ')).toBe('ab');
  });

  it('marks the control-character issue with INVALID_TEXT for the server to answer with', () => {
    const issue = schema.safeParse('a\u0007b').error?.issues[0];
    expect(issueErrorCode(issue)).toBe('INVALID_TEXT');
    expect(issueErrorCode(schema.safeParse('abcdefgh').error?.issues[0])).toBeUndefined();
  });
});

describe('issueErrorCode', () => {
  it('reads a string code from the params of an issue, and nothing else', () => {
    expect(issueErrorCode({ params: { code: 'INVALID_TEXT' } })).toBe('INVALID_TEXT');
    for (const issue of [
      undefined,
      null,
      'INVALID_TEXT',
      42,
      {},
      { params: null },
      { params: 'INVALID_TEXT' },
      { params: {} },
      { params: { code: 7 } },
    ]) {
      expect(issueErrorCode(issue)).toBeUndefined();
    }
  });
});
