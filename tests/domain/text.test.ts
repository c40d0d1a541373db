import { describe, expect, it } from 'vitest';
import { isStorableText, storedText, textLength } from '../../src/domain/text';

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
