import { describe, expect, it } from 'vitest';
import {
  countMessageTokens,
  countSingleMessageTokens,
  countTokens,
  promptTokensBound,
  ROLE_TOKENS,
  trimHistory,
} from '../../../../server/providers/chat/tokens';
import type { ChatMessageIn } from '../../../../server/providers/chat/types';

const user = (content: string): ChatMessageIn => ({ role: 'user', content });
const assistant = (content: string): ChatMessageIn => ({ role: 'assistant', content });

describe('token counting', () => {
  it('counts text with the o200k encoding', () => {
    expect(countTokens('')).toBe(0);
    expect(countTokens('hello world')).toBe(2);
    expect(countTokens('Привет, как дела?')).toBeGreaterThan(0);
  });

  it('knows what each role name costs in the encoding', () => {
    for (const [role, tokens] of Object.entries(ROLE_TOKENS)) expect(countTokens(role), role).toBe(tokens);
  });

  it('treats special-token text typed by a user as plain text', () => {
    expect(countTokens('hi <|endoftext|> there')).toBeGreaterThan(3);
  });

  it('adds the per-message framing and the reply priming', () => {
    // 3 framing + 1 for the role + 2 for "hello world"
    expect(countSingleMessageTokens(user('hello world'))).toBe(6);
    expect(countMessageTokens([user('hello world')])).toBe(9);
    expect(countMessageTokens([user('hello world'), assistant('hello world')])).toBe(15);
    expect(countMessageTokens([])).toBe(0);
  });
});

describe('trimHistory', () => {
  // Each of these costs exactly 6 tokens as a message.
  const history: ChatMessageIn[] = [
    user('one two'),
    assistant('three four'),
    user('five six'),
    assistant('seven eight'),
  ];
  const perMessage = countSingleMessageTokens(history[0]!);

  it('keeps all history when it fits, in order, new message last', () => {
    const next = user('nine ten');
    const { messages, contextInfo } = trimHistory(history, next, 500);
    expect(messages).toEqual([...history, next]);
    expect(contextInfo).toEqual({ messagesIncluded: 5, tokensIncluded: 5 * perMessage, contextTokensLimit: 500 });
  });

  it('keeps the newest messages that fit and drops the older ones', () => {
    expect(history.every((m) => countSingleMessageTokens(m) === perMessage)).toBe(true);
    const next = user('nine ten');
    // room for the new message and two more, not three
    const limit = perMessage * 3 + perMessage - 1;
    const { messages, contextInfo } = trimHistory(history, next, limit);
    expect(messages).toEqual([history[2], history[3], next]);
    expect(contextInfo).toEqual({ messagesIncluded: 3, tokensIncluded: 3 * perMessage, contextTokensLimit: limit });
  });

  it('stops at the first message that does not fit instead of skipping over it', () => {
    const long = assistant('word '.repeat(200));
    const next = user('nine ten');
    const { messages } = trimHistory([user('old'), long, user('recent')], next, 100);
    expect(messages).toEqual([user('recent'), next]);
  });

  it('always includes the new message, even alone over the limit', () => {
    const next = user('token '.repeat(300));
    const { messages, contextInfo } = trimHistory(history, next, 100);
    expect(messages).toEqual([next]);
    expect(contextInfo.messagesIncluded).toBe(1);
    expect(contextInfo.tokensIncluded).toBe(countSingleMessageTokens(next));
    expect(contextInfo.tokensIncluded).toBeGreaterThan(100);
  });

  it('works without history', () => {
    const next = user('hi');
    expect(trimHistory([], next, 100)).toEqual({
      messages: [next],
      contextInfo: { messagesIncluded: 1, tokensIncluded: countSingleMessageTokens(next), contextTokensLimit: 100 },
    });
  });
});

describe('promptTokensBound', () => {
  it('is never below the prompt trimHistory builds, whatever the history', () => {
    const words = ['alpha', 'beta gamma', 'Привет, мир', '```ts\nconst x = 1;\n```', 'a '.repeat(40), ''];
    let seed = 7;
    const next = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    for (let round = 0; round < 300; round++) {
      const history: ChatMessageIn[] = Array.from({ length: next(30) }, (_, i) =>
        (i % 2 ? assistant : user)(words[next(words.length)]!.repeat(1 + next(20))),
      );
      const message = user(words[next(words.length)]!.repeat(1 + next(200)));
      const limit = 100 + 100 * next(100);
      const prompt = countMessageTokens(trimHistory(history, message, limit).messages);
      expect(prompt).toBeLessThanOrEqual(promptTokensBound(message, limit));
    }
  });

  it('is the limit plus the reply priming, or the new message alone when it is bigger', () => {
    expect(promptTokensBound(user('hello world'), 500)).toBe(503);
    const long = user('word '.repeat(1000));
    expect(promptTokensBound(long, 100)).toBe(countMessageTokens([long]));
  });
});
