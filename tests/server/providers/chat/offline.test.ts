import { describe, expect, it } from 'vitest';
import {
  OFFLINE_CHAT_MODEL_ID,
  asksForCode,
  composeOfflineReply,
  createOfflineChatEngine,
  detectLanguage,
  splitIntoPieces,
} from '../../../../server/providers/chat/offline';
import { countMessageTokens, countTokens } from '../../../../server/providers/chat/tokens';
import type { ChatChunk, ChatEngine, ChatMessageIn } from '../../../../server/providers/chat/types';

interface Collected {
  text: string;
  deltas: string[];
  usage: Extract<ChatChunk, { type: 'usage' }> | undefined;
  chunks: ChatChunk[];
}

async function collect(
  engine: ChatEngine,
  messages: ChatMessageIn[],
  options: { maxTokens?: number; signal?: AbortSignal; onDelta?: (n: number) => void } = {},
): Promise<Collected> {
  const chunks: ChatChunk[] = [];
  const deltas: string[] = [];
  for await (const chunk of engine.stream({
    model: OFFLINE_CHAT_MODEL_ID,
    messages,
    maxTokens: options.maxTokens ?? 2000,
    signal: options.signal ?? new AbortController().signal,
  })) {
    chunks.push(chunk);
    if (chunk.type === 'delta') {
      deltas.push(chunk.content);
      options.onDelta?.(deltas.length);
    }
  }
  const last = chunks.at(-1);
  return { text: deltas.join(''), deltas, usage: last?.type === 'usage' ? last : undefined, chunks };
}

const fast = createOfflineChatEngine({ tokenDelayMs: 0 });
const ask = (content: string): ChatMessageIn[] => [{ role: 'user', content }];

describe('offline chat engine', () => {
  it('serves the offline-assistant model', () => {
    expect(OFFLINE_CHAT_MODEL_ID).toBe('offline-assistant');
    expect(fast.name).toBe('offline');
  });

  it('streams a markdown reply in small pieces that says what it is and echoes the message', async () => {
    const { text, deltas } = await collect(fast, ask('What is the weather like on Mars?'));
    expect(text).toBe(composeOfflineReply(ask('What is the weather like on Mars?')));
    expect(text).toMatch(/^## Offline assistant$/m);
    expect(text).toMatch(/offline assistant/i);
    expect(text).toMatch(/no language model is configured/);
    expect(text).toContain('> What is the weather like on Mars?');
    expect(text).toMatch(/^- /m);
    expect(text).not.toContain('```');
    expect(deltas.length).toBeGreaterThan(50);
    expect(Math.max(...deltas.map((d) => d.trim().length))).toBeLessThanOrEqual(4);
  });

  it('adds a fenced code block with a language tag when code is asked for', async () => {
    for (const prompt of [
      'Write a function that adds two numbers',
      'show me some code please',
      'Can you give an example?',
      'a quick script for renaming files',
    ]) {
      const { text } = await collect(fast, ask(prompt));
      expect(text, prompt).toMatch(/```ts\n[\s\S]+\n```/);
    }
    expect((await collect(fast, ask('Write a Python function'))).text).toMatch(/```python\n/);
    expect((await collect(fast, ask('JavaScript code please'))).text).toMatch(/```js\n/);
  });

  it('answers in Russian when the message is mostly Cyrillic', async () => {
    const { text } = await collect(fast, ask('Привет! Напиши пример кода на TypeScript'));
    expect(text).toMatch(/^## Офлайн-ассистент$/m);
    expect(text).toContain('языковая модель');
    expect(text).toMatch(/```ts\n/);
    expect(text).toMatch(/^- В вашем сообщении 6 слов/m);
    const plain = await collect(fast, ask('Как дела?'));
    expect(plain.text).toMatch(/^## Офлайн-ассистент$/m);
    expect(plain.text).not.toContain('```');
  });

  it('recognises code requests and languages by words', () => {
    for (const t of ['нужна функция', 'покажи примеры', 'программу на питоне', 'a code snippet', 'functions']) {
      expect(asksForCode(t), t).toBe(true);
    }
    for (const t of ['hello there', 'encoder', 'как дела', 'decode this']) expect(asksForCode(t), t).toBe(false);
    expect(detectLanguage('Hello мир')).toBe('en');
    expect(detectLanguage('Привет world')).toBe('ru');
    expect(detectLanguage('')).toBe('en');
  });

  it('is deterministic for the same input and echoes the last user message', async () => {
    const messages: ChatMessageIn[] = [
      { role: 'user', content: 'first question' },
      { role: 'assistant', content: 'first answer' },
      { role: 'user', content: 'second question' },
    ];
    const a = await collect(fast, messages);
    const b = await collect(fast, messages);
    expect(a.deltas).toEqual(b.deltas);
    expect(a.text).toContain('> second question');
    expect(a.text).not.toContain('> first question');
    expect(a.text).toContain('3 messages in context');
  });

  it('quotes markdown in the message harmlessly', async () => {
    const { text } = await collect(fast, ask('```\n# not a heading\n*x*'));
    expect(text).toContain('> \\`\\`\\` \\# not a heading \\*x\\*');
    expect(text.match(/```/g)).toBeNull();
  });

  it('ends with usage counted by gpt-tokenizer', async () => {
    const messages = ask('Count my tokens');
    const { text, usage, chunks } = await collect(fast, messages);
    expect(usage).toEqual({
      type: 'usage',
      promptTokens: countMessageTokens(messages),
      completionTokens: countTokens(text),
    });
    expect(chunks.filter((c) => c.type === 'usage')).toHaveLength(1);
  });

  it('stops at maxTokens like a model would', async () => {
    const { text, usage } = await collect(fast, ask('hello'), { maxTokens: 10 });
    expect(countTokens(text)).toBeLessThanOrEqual(10);
    expect(countTokens(text)).toBeGreaterThan(5);
    expect(usage?.completionTokens).toBe(countTokens(text));
  });

  it('streams at a realistic pace', async () => {
    const engine = createOfflineChatEngine({ tokenDelayMs: 10 });
    const started = Date.now();
    const { deltas } = await collect(engine, ask('hi'), { maxTokens: 10 });
    expect(Date.now() - started).toBeGreaterThanOrEqual(deltas.length * 10 - 15);
  });

  it('stops promptly when aborted and reports only what was produced', async () => {
    const engine = createOfflineChatEngine({ tokenDelayMs: 1000 });
    const controller = new AbortController();
    const started = Date.now();
    setTimeout(() => controller.abort(), 50);
    const { deltas, usage } = await collect(engine, ask('hello'), { signal: controller.signal });
    expect(Date.now() - started).toBeLessThan(500);
    expect(deltas).toEqual([]);
    expect(usage).toEqual({ type: 'usage', promptTokens: countMessageTokens(ask('hello')), completionTokens: 0 });
  });

  it('stops mid-reply when aborted after some pieces', async () => {
    const engine = createOfflineChatEngine({ tokenDelayMs: 5 });
    const controller = new AbortController();
    const { text, deltas, usage } = await collect(engine, ask('hello'), {
      signal: controller.signal,
      onDelta: (n) => {
        if (n === 5) controller.abort();
      },
    });
    expect(deltas).toHaveLength(5);
    expect(usage?.completionTokens).toBe(countTokens(text));
  });

  it('yields only usage when the signal is already aborted', async () => {
    const controller = new AbortController();
    controller.abort();
    const { chunks } = await collect(createOfflineChatEngine(), ask('hello'), { signal: controller.signal });
    expect(chunks).toEqual([{ type: 'usage', promptTokens: countMessageTokens(ask('hello')), completionTokens: 0 }]);
  });

  it('splits text into pieces that join back exactly', () => {
    const text = composeOfflineReply(ask('Напиши функцию, please 👋🏽 with  double  spaces\n\nand lines'));
    expect(splitIntoPieces(text).join('')).toBe(text);
    expect(splitIntoPieces('  a  ')).toEqual(['  a', '  ']);
  });
});
