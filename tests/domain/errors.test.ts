import { describe, expect, it } from 'vitest';
import {
  balanceOf,
  codeForStatus,
  errorCatalogue,
  genericMessages,
  insufficientTokensMessage,
  messageForStatus,
  problemOf,
  UNCODED,
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

describe('codeForStatus: an answer that names no code', () => {
  it('knows a too-large upload (SPEC 5: upload max 10MB) from other bad input', () => {
    expect(codeForStatus(413)).toBe('PAYLOAD_TOO_LARGE');
    expect(codeForStatus(400)).toBe('VALIDATION_ERROR');
    expect(codeForStatus(499)).toBe('VALIDATION_ERROR');
  });

  it('does not call a redirect or an informational answer bad input', () => {
    for (const status of [200, 302, 399]) expect(codeForStatus(status)).not.toBe('VALIDATION_ERROR');
    for (const status of [500, 502, 504]) expect(codeForStatus(status)).toBe('INTERNAL');
  });
});

/** The API client marks a code it only guessed from the status (src/api/client.ts, codeGuessed). */
describe('problemOf, when the server named no code', () => {
  const fallback = { code: 'PROVIDER_ERROR', message: 'Generation failed' };
  const guessed = (status: number, body?: unknown) => ({
    code: codeForStatus(status),
    codeGuessed: true,
    status,
    message: messageForStatus(status),
    body,
  });

  it("shows another server's own words as they are", () => {
    expect(problemOf(guessed(502, { message: 'Upstream is restarting' }), fallback)).toEqual({
      code: UNCODED,
      message: 'Upstream is restarting',
    });
    expect(UNCODED).not.toBe(codeForStatus(502));
  });

  it('is the operation\'s failure (SPEC 8: "Generation failed") for a server failure that said nothing', () => {
    expect(problemOf(guessed(502), fallback)).toEqual(fallback);
    expect(problemOf(guessed(500, { message: '' }), fallback)).toEqual(fallback);
    expect(problemOf(guessed(503, { message: 42 }), fallback)).toEqual(fallback);
  });

  it('keeps the guessed code of a client error that said nothing', () => {
    expect(problemOf(guessed(404), fallback)).toEqual({ code: 'NOT_FOUND', message: 'Resource not found' });
    expect(problemOf(guessed(429, 'Too Many Requests'), fallback)).toEqual({
      code: 'RATE_LIMITED',
      message: 'Please try again later',
    });
  });

  it('does not treat a named code as guessed', () => {
    const named = { code: 'INTERNAL', codeGuessed: false, status: 500, message: 'Internal server error', body: {} };
    expect(problemOf(named, fallback)).toEqual({ code: 'INTERNAL', message: 'Internal server error' });
    const namedWithWords = { ...named, body: { message: 'db down' } };
    expect(problemOf(namedWithWords, fallback)).toEqual({ code: 'INTERNAL', message: 'Internal server error' });
  });

  it('takes the values for the wording from the error or from its body', () => {
    const details = { cost: 16, balance: 3 };
    expect(problemOf({ code: 'INSUFFICIENT_TOKENS', message: 'x', details }, fallback)).toEqual({
      code: 'INSUFFICIENT_TOKENS',
      message: 'x',
      details,
    });
    expect(problemOf({ code: 'INSUFFICIENT_TOKENS', message: 'x', body: { details } }, fallback)).toEqual({
      code: 'INSUFFICIENT_TOKENS',
      message: 'x',
      details,
    });
  });
});

describe('balanceOf: the balance a refusal stated', () => {
  it('reads the balance, else the balance after a charge', () => {
    expect(balanceOf({ code: 'INSUFFICIENT_TOKENS', message: '', details: { cost: 16, balance: 3 } })).toBe(3);
    expect(balanceOf({ code: 'PROVIDER_ERROR', message: '', details: { balanceAfter: 40 } })).toBe(40);
    expect(balanceOf({ code: 'X', message: '', details: { balance: 0, balanceAfter: 40 } })).toBe(0);
    expect(balanceOf({ code: 'X', message: '', details: { balance: 'n/a', balanceAfter: 40 } })).toBe(40);
  });

  it('has none when the problem states none or an impossible one', () => {
    expect(balanceOf(null)).toBeUndefined();
    expect(balanceOf(undefined)).toBeUndefined();
    expect(balanceOf({ code: 'X', message: '' })).toBeUndefined();
    expect(balanceOf({ code: 'X', message: '', details: {} })).toBeUndefined();
    for (const balance of [-1, 2.5, '3', null, Number.NaN]) {
      expect(balanceOf({ code: 'X', message: '', details: { balance } })).toBeUndefined();
    }
  });
});
