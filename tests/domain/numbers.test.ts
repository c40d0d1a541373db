import { describe, expect, it } from 'vitest';
import { parsePlainDecimal, plainDecimalInteger } from '../../src/domain/numbers';

/** SPEC sections 2 and 5: the route's conversationId must be a whole number. */
describe('parsePlainDecimal', () => {
  it('reads whole numbers', () => {
    expect(parsePlainDecimal('0')).toBe(0);
    expect(parsePlainDecimal('42')).toBe(42);
  });

  it('refuses what is not a whole number', () => {
    for (const value of ['', 'abc', '4.2', '-3', '12abc', 42, null, undefined]) {
      expect(parsePlainDecimal(value)).toBeUndefined();
    }
  });
});

describe('plainDecimalInteger', () => {
  const id = plainDecimalInteger({ message: 'Conversation id must be a whole number', min: 1, max: 1000 });

  it('gives the number of a whole number in range', () => {
    expect(id.parse('1')).toBe(1);
    expect(id.parse('1000')).toBe(1000);
  });

  it('refuses the rest with its message', () => {
    for (const value of ['0', '1001', 'abc', '1.5', 7, undefined]) {
      const result = id.safeParse(value);
      expect(result.success).toBe(false);
      expect(result.error?.issues[0]?.message).toBe('Conversation id must be a whole number');
    }
  });
});
