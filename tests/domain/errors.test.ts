import { describe, expect, it } from 'vitest';
import {
  codeForStatus,
  errorCatalogue,
  genericMessages,
  insufficientTokensMessage,
  messageForStatus,
  problemOf,
} from '../../src/domain/errors';

/** SPEC section 8's generic texts, and section 5 rule 5's wording. */
describe('generic error texts', () => {
  it('are the SPEC texts', () => {
    expect(Object.values(genericMessages).sort()).toEqual(
      [
        'Network error occurred',
        'Unauthorized access',
        'Access forbidden',
        'Resource not found',
        'Internal server error',
        'Please check your input',
        'Insufficient tokens',
        'Something went wrong',
        'Please try again later',
      ].sort(),
    );
  });

  it('words a short balance with the cost and the balance', () => {
    expect(insufficientTokensMessage(16, 3)).toBe('Insufficient tokens. Need 16 tokens but only have 3');
  });
});

describe('an HTTP status as a generic text', () => {
  const textOf = (status: number): string => {
    const code = codeForStatus(status);
    if (code === 'NETWORK_ERROR') return genericMessages.network;
    if (code === 'MALFORMED_RESPONSE') return genericMessages.somethingWrong;
    return errorCatalogue[code].message;
  };

  it.each([
    [0, 'Network error occurred'],
    [400, 'Please check your input'],
    [401, 'Unauthorized access'],
    [402, 'Insufficient tokens'],
    [403, 'Access forbidden'],
    [404, 'Resource not found'],
    [422, 'Please check your input'],
    [429, 'Please try again later'],
    [500, 'Internal server error'],
    [503, 'Please try again later'],
  ])('%i: %s', (status, text) => {
    expect(textOf(status)).toBe(text);
  });
});

describe('messageForStatus: a response that carries no message', () => {
  it.each([
    [400, 'Please check your input'],
    [401, 'Unauthorized access'],
    [402, 'Insufficient tokens'],
    [403, 'Access forbidden'],
    [404, 'Resource not found'],
    [422, 'Please check your input'],
    [429, 'Please try again later'],
    [499, 'Please check your input'],
    [500, 'Internal server error'],
    [502, 'Internal server error'],
    [302, 'Something went wrong'],
  ])('%i: %s', (status, text) => {
    expect(messageForStatus(status)).toBe(text);
  });
});

/** SPEC section 8: the server's message is used when present, otherwise the fallback text. */
describe('problemOf', () => {
  const fallback = { code: 'PROVIDER_ERROR', message: 'Ultra generation failed' };

  it("uses the server's message when it sent one", () => {
    const error = { code: 'INSUFFICIENT_TOKENS', message: 'Insufficient tokens. Need 16 tokens but only have 3' };
    expect(problemOf(error, fallback)).toEqual(error);
  });

  it('uses the fallback text when the server sent no message', () => {
    expect(problemOf({ code: 'PROVIDER_ERROR' }, fallback)).toEqual({
      code: 'PROVIDER_ERROR',
      message: 'Ultra generation failed',
    });
  });

  it('is the fallback for a failure that is not an answer of the server', () => {
    for (const error of [undefined, null, 'boom', 42, new Error('boom'), { message: 'no code' }, { code: '' }]) {
      expect(problemOf(error, fallback)).toEqual(fallback);
    }
  });
});
