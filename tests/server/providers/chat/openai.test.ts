// One file: one adapter's tests against one fake replaying the OpenAI API's published shapes.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { registry } from '../../../../server/metrics';
import { createOpenAiChatEngine } from '../../../../server/providers/chat/openai';
import type { OpenAiChatEngineOptions } from '../../../../server/providers/chat/openai';
import { countMessageTokens, countTokens } from '../../../../server/providers/chat/tokens';
import { ChatProviderError } from '../../../../server/providers/chat/types';
import type { ChatChunk, ChatEngine, ChatMessageIn, MaxTokensParam } from '../../../../server/providers/chat/types';
import { INSUFFICIENT_QUOTA, startFakeOpenAi } from './fake-openai';
import type { FakeOpenAi, RecordedRequest } from './fake-openai';

let fake: FakeOpenAi;

beforeAll(async () => {
  fake = await startFakeOpenAi();
});
afterAll(async () => {
  await fake.close();
});
beforeEach(() => {
  fake.setBehaviour({});
  fake.requests.length = 0;
});

const API_KEY = 'sk-test-key';
const messages: ChatMessageIn[] = [
  { role: 'system', content: 'You are helpful.' },
  { role: 'user', content: 'Say hello' },
];

function engine(options: Partial<OpenAiChatEngineOptions> = {}): ChatEngine {
  return createOpenAiChatEngine({
    apiKey: API_KEY,
    baseURL: fake.baseURL,
    timeoutMs: 5000,
    maxRetries: 0,
    ...options,
  });
}

interface Run {
  chunks: ChatChunk[];
  text: string;
  deltas: string[];
  usage: Extract<ChatChunk, { type: 'usage' }> | undefined;
  error: unknown;
  ms: number;
}

async function run(
  e: ChatEngine,
  options: {
    signal?: AbortSignal;
    onDelta?: (n: number) => 'break' | void;
    maxTokens?: number;
    model?: string;
    maxTokensParam?: MaxTokensParam;
  } = {},
): Promise<Run> {
  const chunks: ChatChunk[] = [];
  const deltas: string[] = [];
  let error: unknown;
  const started = Date.now();
  try {
    for await (const chunk of e.stream({
      model: options.model ?? 'gpt-4o-mini',
      messages,
      maxTokens: options.maxTokens ?? 2000,
      ...(options.maxTokensParam ? { maxTokensParam: options.maxTokensParam } : {}),
      signal: options.signal ?? new AbortController().signal,
    })) {
      chunks.push(chunk);
      if (chunk.type === 'delta') {
        deltas.push(chunk.content);
        if (options.onDelta?.(deltas.length) === 'break') break;
      }
    }
  } catch (err) {
    error = err;
  }
  const last = chunks.at(-1);
  return {
    chunks,
    deltas,
    text: deltas.join(''),
    usage: last?.type === 'usage' ? last : undefined,
    error,
    ms: Date.now() - started,
  };
}

function providerError(r: Run): ChatProviderError {
  expect(r.error).toBeInstanceOf(ChatProviderError);
  return r.error as ChatProviderError;
}

/** Resolves when the fake server has seen the exchange end; fails the test after `ms`. */
async function settledWithin(record: RecordedRequest | undefined, ms = 2000): Promise<RecordedRequest> {
  expect(record).toBeDefined();
  const r = record!;
  let timer: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([
    r.settled,
    new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error('the fake server never saw the connection end')), ms);
    }),
  ]);
  clearTimeout(timer);
  return r;
}

describe('OpenAI-compatible chat engine', () => {
  it('streams the deltas and sends the documented request', async () => {
    fake.setBehaviour({ reply: 'Hello there, friend! How are you today?', chunkSize: 3 });
    const r = await run(engine(), { maxTokens: 123 });
    expect(r.error).toBeUndefined();
    expect(r.text).toBe('Hello there, friend! How are you today?');
    expect(r.deltas.length).toBeGreaterThan(5);

    expect(fake.requests).toHaveLength(1);
    const req = fake.requests[0]!;
    expect(req.method).toBe('POST');
    expect(req.url).toBe('/v1/chat/completions');
    expect(req.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(req.body).toEqual({
      model: 'gpt-4o-mini',
      messages,
      stream: true,
      stream_options: { include_usage: true },
      max_tokens: 123,
    });
  });

  it('sends max_completion_tokens when the model is configured so', async () => {
    await run(engine(), { maxTokens: 77, maxTokensParam: 'max_completion_tokens' });
    const body = fake.requests[0]!.body as Record<string, unknown>;
    expect(body.max_completion_tokens).toBe(77);
    expect(body).not.toHaveProperty('max_tokens');
  });

  describe('the reply limit each model accepts (issue #25 item 8)', () => {
    // OpenAI's o-series and GPT-5 answer max_tokens with 400 unsupported_parameter.
    it.each(['o1', 'o3-mini', 'o4-mini', 'gpt-5', 'gpt-5-mini', 'gpt-5.1'])(
      '%s chats: the limit goes as max_completion_tokens',
      async (model) => {
        fake.setBehaviour({ rejectsMaxTokens: true, reply: 'Reasoned.' });
        const r = await run(engine(), { model, maxTokens: 300 });
        expect(r.error).toBeUndefined();
        expect(r.text).toBe('Reasoned.');
        expect(fake.requests[0]!.body).toMatchObject({ model, max_completion_tokens: 300 });
        expect(fake.requests[0]!.body).not.toHaveProperty('max_tokens');
      },
    );

    // Ollama reads only max_tokens (PROVIDERS.md): other ids keep it.
    it.each(['gpt-4o', 'gpt-4o-mini', 'gpt-4.1', 'llama3.1:8b', 'openai/o3-mini', 'omni'])(
      '%s keeps max_tokens',
      async (model) => {
        await run(engine(), { model, maxTokens: 300 });
        expect(fake.requests[0]!.body).toMatchObject({ model, max_tokens: 300 });
        expect(fake.requests[0]!.body).not.toHaveProperty('max_completion_tokens');
      },
    );

    it('a model configured with max_tokens keeps it whatever its id (a local server)', async () => {
      await run(engine(), { model: 'o1', maxTokens: 40, maxTokensParam: 'max_tokens' });
      expect(fake.requests[0]!.body).toMatchObject({ max_tokens: 40 });
    });
  });

  describe('how a reply ends', () => {
    it('a refusal streams as refusal chunks and its usage is reported (openai-node refusal stream)', async () => {
      // tests/lib/__snapshots__/ChatCompletionStream.test.ts.snap, ".stream() emits refusal
      // logprobs events": the pieces, finish_reason "stop", usage 17 / 12.
      const pieces = ["I'm", ' sorry', ',', ' but', ' I', " can't", ' assist', ' with', ' that', ' request', '.'];
      fake.setBehaviour({ refusal: pieces, usageTokens: { prompt_tokens: 17, completion_tokens: 12 } });
      const r = await run(engine());
      expect(r.error).toBeUndefined();
      expect(r.chunks).toEqual([
        ...pieces.map((content) => ({ type: 'refusal', content })),
        { type: 'usage', promptTokens: 17, completionTokens: 12 },
      ]);
    });

    it.each(['length', 'content_filter'] as const)('finish_reason "%s" is reported with the usage', async (reason) => {
      fake.setBehaviour({ reply: 'Cut here', finishReason: reason });
      const r = await run(engine());
      expect(r.text).toBe('Cut here');
      expect(r.usage).toMatchObject({ type: 'usage', finishReason: reason });
    });

    it('finish_reason "stop" is an ordinary end', async () => {
      const r = await run(engine());
      expect(r.usage).not.toHaveProperty('finishReason');
    });
  });

  it('reports the usage the service sends', async () => {
    fake.setBehaviour({ reply: 'abcdefgh', chunkSize: 2, usageTokens: { prompt_tokens: 42, completion_tokens: 7 } });
    const r = await run(engine());
    expect(r.chunks.filter((c) => c.type === 'usage')).toEqual([
      { type: 'usage', promptTokens: 42, completionTokens: 7 },
    ]);
    expect(r.chunks.at(-1)).toEqual(r.usage);
  });

  it('counts tokens itself when the service sends no usage', async () => {
    fake.setBehaviour({ reply: 'The quick brown fox jumps over the lazy dog.', usage: 'never' });
    const r = await run(engine());
    expect(r.error).toBeUndefined();
    expect(r.usage).toEqual({
      type: 'usage',
      promptTokens: countMessageTokens(messages),
      completionTokens: countTokens('The quick brown fox jumps over the lazy dog.'),
    });
  });

  it('ignores comment lines and reads CRLF frames', async () => {
    fake.setBehaviour({ reply: 'kept alive', chunkSize: 2, comments: true, crlf: true });
    const r = await run(engine());
    expect(r.error).toBeUndefined();
    expect(r.text).toBe('kept alive');
    expect(r.usage?.promptTokens).toBe(11);
  });

  it('keeps Cyrillic and emoji intact across chunks', async () => {
    fake.setBehaviour({ reply: 'Привет, мир! 👋🏽 Как дела?', chunkSize: 1 });
    expect((await run(engine())).text).toBe('Привет, мир! 👋🏽 Как дела?');
  });

  describe('errors before streaming', () => {
    it('401 -> auth, without echoing the key text', async () => {
      fake.setBehaviour({ apiKey: 'sk-the-right-one' });
      const err = providerError(await run(engine({ maxRetries: 2 })));
      expect(err.kind).toBe('auth');
      expect(err.status).toBe(401);
      expect(err.userMessage).toBe('The language model service rejected our credentials.');
      expect(err.providerMessage).toBe('Incorrect API key provided: sk-te****key.');
      expect(fake.requests).toHaveLength(1); // 401 is never retried
    });

    it('429 -> rate_limit with the provider message', async () => {
      fake.setBehaviour({
        errorBeforeStream: { status: 429, message: 'Rate limit reached for gpt-4o-mini', type: 'requests' },
      });
      const err = providerError(await run(engine()));
      expect(err.kind).toBe('rate_limit');
      expect(err.status).toBe(429);
      expect(err.userMessage).toBe(
        'The language model service is busy. Please try again later. Details: Rate limit reached for gpt-4o-mini',
      );
    });

    it('429 insufficient_quota -> unavailable, not retried, no provider text, counted as quota (#25 item 9)', async () => {
      const quota = async () =>
        (await registry.getSingleMetric('imagegen_provider_errors_total')?.get())?.values.find(
          (v) => v.labels.provider === 'openai' && v.labels.kind === 'quota',
        )?.value ?? 0;
      const before = await quota();
      fake.setBehaviour({ errorBeforeStream: INSUFFICIENT_QUOTA });
      const err = providerError(await run(engine({ maxRetries: 2 })));
      expect(err.kind).toBe('unavailable');
      expect(err.status).toBe(429);
      expect(err.userMessage).toBe('Chat is unavailable right now. Please try again later.');
      // The operator's log keeps OpenAI's words.
      expect(err.providerMessage).toMatch(/^You exceeded your current quota/);
      expect(fake.requests).toHaveLength(1);
      expect(await quota()).toBe(before + 1);
    });

    it('429 with a long retry-after is not waited for', async () => {
      fake.setBehaviour({ errorBeforeStream: { status: 429, message: 'slow down', retryAfter: '60' } });
      const r = await run(engine({ maxRetries: 2 }));
      const err = providerError(r);
      expect(err.kind).toBe('rate_limit');
      expect(err.retryAfterMs).toBe(60_000);
      expect(fake.requests).toHaveLength(1);
      expect(r.ms).toBeLessThan(2000);
    });

    it('500 -> upstream with the provider message', async () => {
      fake.setBehaviour({ errorBeforeStream: { status: 500, message: 'The server had an error' } });
      const err = providerError(await run(engine()));
      expect(err.kind).toBe('upstream');
      expect(err.status).toBe(500);
      expect(err.userMessage).toBe(
        'The language model service failed to answer. Please try again later. Details: The server had an error',
      );
    });

    it('503 with a plain-text body -> upstream with that text', async () => {
      fake.setBehaviour({ errorBeforeStream: { status: 503, rawBody: 'Service Unavailable: model loading' } });
      const err = providerError(await run(engine()));
      expect(err.kind).toBe('upstream');
      expect(err.userMessage).toContain('Details: Service Unavailable: model loading');
    });

    it('400 and 404 -> bad_request', async () => {
      fake.setBehaviour({
        errorBeforeStream: {
          status: 400,
          message: "This model's maximum context length is 128000 tokens.",
          type: 'invalid_request_error',
          code: 'context_length_exceeded',
        },
      });
      const err = providerError(await run(engine()));
      expect(err.kind).toBe('bad_request');
      expect(err.userMessage).toBe(
        "The language model service rejected the request. Details: This model's maximum context length is 128000 tokens.",
      );
      fake.setBehaviour({ errorBeforeStream: { status: 404, message: 'The model `nope` does not exist' } });
      expect(providerError(await run(engine())).kind).toBe('bad_request');
    });

    it('an unreachable service -> network', async () => {
      const gone = await startFakeOpenAi();
      const baseURL = gone.baseURL;
      await gone.close();
      const err = providerError(await run(engine({ baseURL })));
      expect(err.kind).toBe('network');
      expect(err.userMessage).toBe('Could not reach the language model service. Please try again later.');
    });
  });

  describe('retries', () => {
    it('retries a 500 and then succeeds', async () => {
      fake.setBehaviour(({ index }) =>
        index === 0
          ? { errorBeforeStream: { status: 500, message: 'boom', retryAfterMs: '10' } }
          : { reply: 'second time lucky' },
      );
      const r = await run(engine({ maxRetries: 2 }));
      expect(r.error).toBeUndefined();
      expect(r.text).toBe('second time lucky');
      expect(fake.requests).toHaveLength(2);
      expect(fake.requests[1]!.headers['x-stainless-retry-count']).toBe('1');
    });

    it('gives up after maxRetries', async () => {
      fake.setBehaviour({ errorBeforeStream: { status: 500, message: 'boom', retryAfterMs: '10' } });
      const err = providerError(await run(engine({ maxRetries: 2 })));
      expect(err.kind).toBe('upstream');
      expect(fake.requests).toHaveLength(3);
    });

    it('does not retry once the stream has started', async () => {
      fake.setBehaviour({ reply: 'abcdefghij', chunkSize: 2, dropAfterChunks: 2 });
      const r = await run(engine({ maxRetries: 2 }));
      expect(r.text).toBe('abcd');
      const err = providerError(r);
      expect(err.kind).toBe('network');
      expect(err.userMessage).toBe('The connection to the language model service was lost. Please try again.');
      expect(fake.requests).toHaveLength(1);
      expect((await settledWithin(fake.requests[0])).aborted).toBe(false);
    });
  });

  it('a mid-stream error event -> stream, after the deltas that came before', async () => {
    fake.setBehaviour({
      reply: 'abcdefghij',
      chunkSize: 2,
      errorMidStream: { afterChunks: 3, message: 'Provider returned error', code: 502 },
    });
    const r = await run(engine({ maxRetries: 2 }));
    expect(r.text).toBe('abcdef');
    const err = providerError(r);
    expect(err.kind).toBe('stream');
    expect(err.userMessage).toBe('The language model service failed while answering. Details: Provider returned error');
    expect(fake.requests).toHaveLength(1);
  });

  describe('timeouts', () => {
    it('a slow first token times out and the request is closed', async () => {
      fake.setBehaviour({ reply: 'late', firstChunkDelayMs: 3000 });
      const r = await run(engine({ timeoutMs: 200 }));
      const err = providerError(r);
      expect(err.kind).toBe('timeout');
      expect(err.userMessage).toBe('The language model service did not answer in time. Please try again later.');
      expect(r.ms).toBeLessThan(1500);
      const record = await settledWithin(fake.requests[0]);
      expect(record.aborted).toBe(true);
    });

    it('slow response headers time out (the SDK timeout), retried within bounds', async () => {
      fake.setBehaviour({ headersDelayMs: 3000 });
      const r = await run(engine({ timeoutMs: 150, maxRetries: 1 }));
      expect(providerError(r).kind).toBe('timeout');
      expect(fake.requests).toHaveLength(2);
      expect(r.ms).toBeLessThan(2500);
    });

    it('a stream that stalls between chunks times out too', async () => {
      fake.setBehaviour({ reply: 'abcdefgh', chunkSize: 2, chunkDelayMs: 3000 });
      const r = await run(engine({ timeoutMs: 200 }));
      expect(r.text).toBe('ab');
      expect(providerError(r).kind).toBe('timeout');
    });

    it('a steady stream slower in total than the timeout is fine', async () => {
      fake.setBehaviour({ reply: 'abcdefghijkl', chunkSize: 2, chunkDelayMs: 60 });
      const r = await run(engine({ timeoutMs: 200 }));
      expect(r.error).toBeUndefined();
      expect(r.text).toBe('abcdefghijkl');
    });
  });

  describe('abort', () => {
    it('a client abort closes the upstream connection and reports what was produced', async () => {
      fake.setBehaviour({ reply: 'x'.repeat(200), chunkSize: 1, chunkDelayMs: 20 });
      const controller = new AbortController();
      const r = await run(engine(), {
        signal: controller.signal,
        onDelta: (n) => {
          if (n === 3) controller.abort();
        },
      });
      expect(r.error).toBeUndefined();
      expect(r.deltas).toHaveLength(3);
      expect(r.usage).toEqual({
        type: 'usage',
        promptTokens: countMessageTokens(messages),
        completionTokens: countTokens('xxx'),
      });
      const record = await settledWithin(fake.requests[0]);
      expect(record.aborted).toBe(true);
      expect(record.completed).toBe(false);
    });

    it('an abort while waiting for the first token closes the connection promptly', async () => {
      fake.setBehaviour({ reply: 'late', firstChunkDelayMs: 5000 });
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 100);
      const r = await run(engine(), { signal: controller.signal });
      expect(r.error).toBeUndefined();
      expect(r.ms).toBeLessThan(1000);
      expect(r.chunks).toEqual([{ type: 'usage', promptTokens: countMessageTokens(messages), completionTokens: 0 }]);
      expect((await settledWithin(fake.requests[0])).aborted).toBe(true);
    });

    it('an abort during the retry backoff does not wait for it', async () => {
      fake.setBehaviour({ errorBeforeStream: { status: 503, message: 'busy', retryAfter: '3' } });
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 150);
      const r = await run(engine({ maxRetries: 2 }), { signal: controller.signal });
      expect(r.error).toBeUndefined();
      expect(r.ms).toBeLessThan(1000);
      expect(r.usage?.completionTokens).toBe(0);
    });

    it('a consumer that stops reading closes the upstream connection', async () => {
      fake.setBehaviour({ reply: 'y'.repeat(200), chunkSize: 1, chunkDelayMs: 20 });
      const r = await run(engine(), { onDelta: (n) => (n === 2 ? 'break' : undefined) });
      expect(r.deltas).toHaveLength(2);
      expect((await settledWithin(fake.requests[0])).aborted).toBe(true);
    });

    it('an already aborted signal sends nothing', async () => {
      const controller = new AbortController();
      controller.abort();
      const r = await run(engine(), { signal: controller.signal });
      expect(r.chunks).toEqual([{ type: 'usage', promptTokens: countMessageTokens(messages), completionTokens: 0 }]);
      expect(fake.requests).toHaveLength(0);
    });
  });
});
