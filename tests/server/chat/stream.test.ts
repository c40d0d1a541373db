// One file: the chat stream's whole life (reserve, stream, settle, stop, disconnect) against one
// fake.
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type { FastifyBaseLogger } from 'fastify';
import { eq } from 'drizzle-orm';
import { chatRequests, messages } from '../../../server/db/schema';
import { countMessageTokens, countTokens, promptTokensBound } from '../../../server/providers/chat/tokens';
import { worstCaseCost } from '../../../src/domain/chat';
import { replyEventSchema, STREAM_EVENTS, type ReplyEvent } from '../../../src/domain/jobs';
import { createChatStreamReader, encodeSseData, SSE_DONE, type ChatStreamItem } from '../../../src/domain/sse';
import { registry } from '../../../server/metrics';
import { INSUFFICIENT_QUOTA, startFakeOpenAi, type FakeOpenAi } from '../providers/chat/fake-openai';
import { startTestApp, step, testDatabases, type TestApp } from '../helpers';
import {
  balanceOf,
  expectLedgerConsistent,
  lastRequestOf,
  moneyMoved,
  moneyOf,
  newConversation,
  post,
  signInPerson,
  stream,
  until,
  type Person,
} from './helpers';

// 0.1 app token per input token, 1 per output token: small replies give visible, exact sums.
const MODELS = [
  { id: 'gpt-4o', name: 'GPT-4o', description: 'test', inputCostPer1M: 100_000, outputCostPer1M: 1_000_000 },
  { id: 'gpt-4o-mini', name: 'GPT-4o Mini', inputCostPer1M: 10_000, outputCostPer1M: 100_000 },
  // Issue #25 item 8: an o-series model as OpenAI names it, and a renamed one set by hand.
  { id: 'o3-mini', name: 'o3-mini', inputCostPer1M: 100_000, outputCostPer1M: 1_000_000 },
  {
    id: 'house-reasoner',
    name: 'House reasoner',
    inputCostPer1M: 100_000,
    outputCostPer1M: 1_000_000,
    maxTokensParam: 'max_completion_tokens',
  },
];
const body = (message: string, extra: Record<string, unknown> = {}) => ({
  message,
  model: 'gpt-4o',
  maxTokens: 50,
  contextTokensLimit: 500,
  ...extra,
});

describe.each(testDatabases())('chat stream through an OpenAI-compatible service on $name', (kind) => {
  let fake: FakeOpenAi;
  let app: TestApp;
  let anna: Person;

  beforeAll(async () => {
    fake = await startFakeOpenAi();
    app = await startTestApp(kind, {
      OPENAI_API_KEY: 'sk-test-key',
      OPENAI_BASE_URL: fake.baseURL,
      OPENAI_MODELS: JSON.stringify(MODELS),
      OPENAI_MAX_RETRIES: '0',
      CHAT_HEARTBEAT_MS: '40',
    });
    anna = await signInPerson(app, 'anna-chat@example.com', 1000);
  });
  afterAll(async () => {
    await app.close();
    await fake.close();
  });
  beforeEach(async () => {
    fake.setBehaviour({});
    return async () => {
      await expectLedgerConsistent(app, anna.id);
    };
  });

  it('lists the configured models with their prices and a default', async () => {
    const response = await step(anna.jar, `${app.url}/llm/models`);
    const json = (await response.json()) as { data: { models: Record<string, unknown>; default: string } };
    expect(json.data.default).toBe('gpt-4o');
    expect(json.data.models['gpt-4o-mini']).toEqual({
      id: 'gpt-4o-mini',
      name: 'GPT-4o Mini',
      description: '',
      maxTokens: 128000,
      inputCostPer1M: 10_000,
      outputCostPer1M: 100_000,
      isStreamingAllowed: true,
    });
  });

  it('streams content frames, then the billing frame and [DONE], byte for byte; bills the reported usage', async () => {
    const id = await newConversation(app, anna);
    const before = await balanceOf(app, anna.id);
    const result = await stream(app, anna, id, body('Say hello'));
    expect(result.status).toBe(200);
    expect(result.contentType).toBe('text/event-stream; charset=utf-8');
    // fake: 7 chunks of 4 characters, usage prompt 11 / completion 7 -> ceil(1.1 + 7) = 9.
    const cost = 9;
    const request = await lastRequestOf(app, anna.id);
    const saved = await app.database.db.select().from(messages).where(eq(messages.conversationId, id));
    const expected =
      ['Hell', 'o fr', 'om t', 'he f', 'ake ', 'mode', 'l.'].map((content) => encodeSseData({ content })).join('') +
      encodeSseData({
        isComplete: true,
        tokensUsed: 18,
        contextInfo: {
          messagesIncluded: 1,
          tokensIncluded: countMessageTokens([{ role: 'user', content: 'Say hello' }]) - 3,
          contextTokensLimit: 500,
        },
        billing: { inputTokens: 11, outputTokens: 7, cost },
        balanceAfter: before - cost,
        conversationId: id,
        messageId: saved[1]?.id,
      }) +
      SSE_DONE;
    // Heartbeat comments (every 40 ms here) may fall between frames on a slow machine;
    // they have their own test below. Every other byte is as expected.
    expect(result.raw.replaceAll(': keep-alive\n\n', '')).toBe(expected);
    expect(await balanceOf(app, anna.id)).toBe(before - cost);
    expect(request).toMatchObject({ status: 'COMPLETED', charged: cost, inputTokens: 11, outputTokens: 7 });
    expect(saved.map((m) => [m.role, m.content, m.model, m.tokensUsed])).toEqual([
      ['user', 'Say hello', null, null],
      ['assistant', 'Hello from the fake model.', 'gpt-4o', 18],
    ]);
    // The upstream request asked for usage and for at most maxTokens.
    expect(fake.requests.at(-1)?.body).toMatchObject({
      model: 'gpt-4o',
      stream: true,
      stream_options: { include_usage: true },
      max_tokens: 50,
      messages: [{ role: 'user', content: 'Say hello' }],
    });
  });

  describe('how a reply ends (issue #25 items 6, 7)', () => {
    const conversationOf = async (person: Person, id: number) =>
      (
        (await (await step(person.jar, `${app.url}/llm/conversations/${id}`)).json()) as {
          data: { messages: Array<Record<string, unknown>> };
        }
      ).data.messages;

    it('a refusal is the reply: streamed, stored marked as a refusal, billed what the provider reports', async () => {
      const bea = await signInPerson(app, `bea-refusal-${kind.name}@example.com`, 500);
      // openai-node's recorded refusal stream (ChatCompletionStream.test.ts.snap): usage 17 / 12.
      const pieces = ["I'm", ' sorry', ',', ' but', ' I', " can't", ' assist', ' with', ' that', ' request', '.'];
      const text = pieces.join('');
      fake.setBehaviour({ refusal: pieces, usageTokens: { prompt_tokens: 17, completion_tokens: 12 } });
      const id = await newConversation(app, bea);
      const before = await moneyOf(app, bea);
      const result = await stream(app, bea, id, body('Something forbidden'));
      // 0.1 per input token, 1 per output token: ceil(1.7 + 12) = 14.
      const cost = 14;
      expect(
        result.data
          .slice(0, -1)
          .map((d) => d.content)
          .join(''),
      ).toBe(text);
      expect(result.data.at(-1)).toMatchObject({
        isComplete: true,
        ending: 'refusal',
        billing: { inputTokens: 17, outputTokens: 12, cost },
        balanceAfter: before.balance - cost,
      });
      const after = await moneyOf(app, bea);
      const moved = moneyMoved(before, after);
      expect(moved.delta).toBe(-cost);
      expect(moved.rows).toHaveLength(2); // the reservation and the release of the rest
      expect(await conversationOf(bea, id)).toMatchObject([
        { role: 'user', content: 'Something forbidden' },
        { role: 'assistant', content: text, model: 'gpt-4o', ending: 'refusal' },
      ]);
    });

    it.each(['length', 'content_filter'] as const)(
      'a reply that ends with finish_reason "%s" is stored with why, said on the last event, billed as reported',
      async (reason) => {
        const cy = await signInPerson(app, `cy-${reason}-${kind.name}@example.com`, 500);
        fake.setBehaviour({
          reply: 'Half a story',
          finishReason: reason,
          usageTokens: { prompt_tokens: 30, completion_tokens: 50 },
        });
        const id = await newConversation(app, cy);
        const before = await moneyOf(app, cy);
        const result = await stream(app, cy, id, body('Tell me a long story'));
        // ceil(3 + 50) = 53.
        expect(result.data.at(-1)).toMatchObject({ isComplete: true, ending: reason, billing: { cost: 53 } });
        expect(moneyMoved(before, await moneyOf(app, cy)).delta).toBe(-53);
        expect((await conversationOf(cy, id))[1]).toMatchObject({ content: 'Half a story', ending: reason });
      },
    );

    it('a reply the filter stopped before any text is still the answer: stored with its note, billed as reported', async () => {
      const di = await signInPerson(app, `di-filtered-${kind.name}@example.com`, 500);
      fake.setBehaviour({
        chunks: [],
        finishReason: 'content_filter',
        usageTokens: { prompt_tokens: 40, completion_tokens: 0 },
      });
      const id = await newConversation(app, di);
      const before = await moneyOf(app, di);
      const result = await stream(app, di, id, body('Filtered at once'));
      expect(result.data).toHaveLength(1);
      expect(result.data[0]).toMatchObject({ isComplete: true, ending: 'content_filter', billing: { cost: 4 } });
      expect(moneyMoved(before, await moneyOf(app, di)).delta).toBe(-4);
      expect((await conversationOf(di, id))[1]).toMatchObject({
        role: 'assistant',
        content: '',
        ending: 'content_filter',
      });
    });

    it('an ordinary reply carries no ending, on the wire or stored', async () => {
      const id = await newConversation(app, anna);
      const result = await stream(app, anna, id, body('Plain'));
      expect(result.data.at(-1)).not.toHaveProperty('ending');
      expect((await conversationOf(anna, id))[1]).not.toHaveProperty('ending');
    });
  });

  it('o-series models chat: the reply limit goes as max_completion_tokens, by id or by setting (issue #25 item 8)', async () => {
    const eve = await signInPerson(app, `eve-o3-${kind.name}@example.com`, 500);
    // OpenAI answers max_tokens to these models with 400 unsupported_parameter.
    fake.setBehaviour({ rejectsMaxTokens: true, reply: 'Thought it through.' });
    for (const model of ['o3-mini', 'house-reasoner']) {
      const id = await newConversation(app, eve);
      const before = await moneyOf(app, eve);
      const result = await stream(app, eve, id, body('Think', { model }));
      // The fake's usage: prompt 11, one completion token per 4-character chunk (5): ceil(1.1 + 5) = 7.
      expect(result.data.at(-1)).toMatchObject({ isComplete: true, billing: { cost: 7 } });
      expect(fake.requests.at(-1)?.body).toMatchObject({ model, max_completion_tokens: 50 });
      expect(fake.requests.at(-1)?.body).not.toHaveProperty('max_tokens');
      expect(moneyMoved(before, await moneyOf(app, eve)).delta).toBe(-7);
    }
    // The setting is the server's: the model list does not carry it.
    const list = (await (await step(eve.jar, `${app.url}/llm/models`)).json()) as {
      data: { models: Record<string, Record<string, unknown>> };
    };
    expect(list.data.models['house-reasoner']).not.toHaveProperty('maxTokensParam');
  });

  it('an empty OpenAI account (429 insufficient_quota): chat is unavailable, nothing is billed, the operator is told (issue #25 item 9)', async () => {
    const quota = async () =>
      (await registry.getSingleMetric('imagegen_provider_errors_total')?.get())?.values.find(
        (v) => v.labels.provider === 'openai' && v.labels.kind === 'quota',
      )?.value ?? 0;
    const fay = await signInPerson(app, `fay-quota-${kind.name}@example.com`, 500);
    fake.setBehaviour({ errorBeforeStream: INSUFFICIENT_QUOTA });
    const id = await newConversation(app, fay);
    const before = await moneyOf(app, fay);
    const metricBefore = await quota();
    // What each request logs, by level (LOG_LEVEL is silent here, so the lines are caught).
    const lines: Array<{ level: string; obj: unknown; msg: unknown }> = [];
    const root = app.server.log;
    const makeChild = root.child.bind(root);
    const spy = vi.spyOn(root, 'child').mockImplementation((...args: Parameters<FastifyBaseLogger['child']>) => {
      const child = makeChild(...args);
      for (const level of ['error', 'warn'] as const) {
        child[level] = (obj: unknown, msg?: unknown) => void lines.push({ level, obj, msg });
      }
      return child;
    });
    const result = await stream(app, fay, id, body('Anyone there?')).finally(() => spy.mockRestore());
    expect(result.data).toEqual([
      {
        error: 'unavailable',
        message: 'Chat is unavailable right now. Please try again later.',
        billing: expect.objectContaining({ cost: 0 }) as unknown,
        balanceAfter: before.balance,
      },
    ]);
    expect(result.raw).not.toMatch(/quota|billing details/i);
    const moved = moneyMoved(before, await moneyOf(app, fay));
    expect(moved.delta).toBe(0);
    expect(await quota()).toBe(metricBefore + 1);
    // The operator's line: error level, with OpenAI's own words in the error.
    const failed = lines.filter((l) => l.msg === 'chat provider failed');
    expect(failed.map((l) => l.level)).toEqual(['error']);
    expect(String((failed[0]?.obj as { err?: { providerMessage?: string } }).err?.providerMessage)).toMatch(
      /^You exceeded your current quota/,
    );
  });

  it('reads the same events whatever way the network cuts the bytes (client parser)', async () => {
    const id = await newConversation(app, anna);
    const result = await stream(app, anna, id, body('Привет, как дела? 👋'));
    const whole = result.events;
    expect(whole.at(-1)).toEqual({ type: 'done' });
    for (let cut = 1; cut < result.bytes.length; cut += 7) {
      const parser = createChatStreamReader();
      const events: ChatStreamItem[] = [
        ...parser.push(result.bytes.slice(0, cut)),
        ...parser.push(result.bytes.slice(cut)),
        ...parser.end(),
      ];
      expect(events).toEqual(whole);
    }
    const parser = createChatStreamReader();
    const byByte = [...result.bytes].flatMap((b) => parser.push(new Uint8Array([b])));
    expect([...byByte, ...parser.end()]).toEqual(whole);
  });

  it('counts the tokens itself when the service sends no usage, and ignores comment lines', async () => {
    fake.setBehaviour({ usage: 'never', comments: true, reply: 'Counted locally by us.' });
    const id = await newConversation(app, anna);
    const before = await balanceOf(app, anna.id);
    const result = await stream(app, anna, id, body('Count it'));
    const final = result.data.at(-1) as { billing: { inputTokens: number; outputTokens: number; cost: number } };
    const inputTokens = countMessageTokens([{ role: 'user', content: 'Count it' }]);
    const outputTokens = countTokens('Counted locally by us.');
    expect(
      result.data
        .slice(0, -1)
        .map((d) => d.content)
        .join(''),
    ).toBe('Counted locally by us.');
    expect(final.billing).toEqual({
      inputTokens,
      outputTokens,
      cost: Math.ceil(inputTokens * 0.1 + outputTokens - 1e-9),
    });
    expect(await balanceOf(app, anna.id)).toBe(before - final.billing.cost);
  });

  it('bills the usage the service sends even unasked', async () => {
    fake.setBehaviour({ usage: 'always', usageTokens: { prompt_tokens: 20, completion_tokens: 3 } });
    const id = await newConversation(app, anna);
    const result = await stream(app, anna, id, body('Hi'));
    expect((result.data.at(-1) as { billing: unknown }).billing).toEqual({ inputTokens: 20, outputTokens: 3, cost: 5 });
  });

  it('turns an error before streaming into an SSE error line and bills nothing', async () => {
    fake.setBehaviour({ errorBeforeStream: { status: 500, message: 'boom' } });
    const id = await newConversation(app, anna);
    const before = await balanceOf(app, anna.id);
    const result = await stream(app, anna, id, body('Fail please'));
    expect(result.status).toBe(200);
    expect(result.data).toHaveLength(1);
    expect(result.data[0]).toMatchObject({
      error: 'upstream',
      message: 'The language model service failed to answer. Please try again later. Details: boom',
      billing: { cost: 0 },
      balanceAfter: before,
    });
    expect(result.raw.endsWith(SSE_DONE)).toBe(true);
    expect(await balanceOf(app, anna.id)).toBe(before);
    expect(await lastRequestOf(app, anna.id)).toMatchObject({ status: 'FAILED', charged: 0 });
    // Nothing of the failed turn stays: the browser offers the message again (Retry), and
    // sending it again does not store it twice.
    const saved = await app.database.db.select().from(messages).where(eq(messages.conversationId, id));
    expect(saved).toEqual([]);
  });

  it('tells the user the service is busy on a 429', async () => {
    fake.setBehaviour({ errorBeforeStream: { status: 429, message: 'Rate limit reached', retryAfter: '60' } });
    const id = await newConversation(app, anna);
    const before = await balanceOf(app, anna.id);
    const result = await stream(app, anna, id, body('Too fast'));
    expect(result.data[0]?.message).toMatch(/^The language model service is busy\. Please try again later\./);
    expect(await balanceOf(app, anna.id)).toBe(before);
  });

  it('bills only what arrived when the service fails mid-stream, and keeps the partial reply', async () => {
    fake.setBehaviour({ usage: 'never', errorMidStream: { afterChunks: 2, message: 'upstream overloaded' } });
    const id = await newConversation(app, anna);
    const before = await balanceOf(app, anna.id);
    const result = await stream(app, anna, id, body('Break midway'));
    expect(result.data.slice(0, 2)).toEqual([{ content: 'Hell' }, { content: 'o fr' }]);
    expect(result.data[2]).toMatchObject({ error: 'stream' });
    expect(String(result.data[2]?.message)).toContain('upstream overloaded');
    const inputTokens = countMessageTokens([{ role: 'user', content: 'Break midway' }]);
    const cost = Math.ceil(inputTokens * 0.1 + countTokens('Hello fr') - 1e-9);
    expect(await balanceOf(app, anna.id)).toBe(before - cost);
    const saved = await app.database.db.select().from(messages).where(eq(messages.conversationId, id));
    expect(saved.map((m) => m.content)).toEqual(['Break midway', 'Hello fr']);
    expect(await lastRequestOf(app, anna.id)).toMatchObject({ status: 'FAILED', charged: cost });
  });

  it('sends heartbeat comments while the first token is slow', async () => {
    fake.setBehaviour({ firstChunkDelayMs: 250 });
    const id = await newConversation(app, anna);
    const result = await stream(app, anna, id, body('Take your time'));
    const firstData = result.raw.indexOf('data: ');
    expect(result.raw.slice(0, firstData)).toContain(': keep-alive\n\n');
    expect(result.data.at(-1)).toMatchObject({ isComplete: true });
  });

  // Issue #28: a reply in progress goes on when its page disconnects, and can be followed
  // from another tab; Stop, from any tab, ends it on the server.
  const openStream = async (id: number, message: string, person: Person = anna) => {
    const controller = new AbortController();
    const response = await fetch(`${app.url}/llm/conversations/${id}/stream`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: app.url, cookie: person.jar.header() },
      body: JSON.stringify(body(message)),
      signal: controller.signal,
    });
    const reader = response.body!.getReader();
    let text = '';
    const readUntil = async (contents: number) => {
      while ((text.match(/"content"/g) ?? []).length < contents) {
        const { value, done } = await reader.read();
        if (done) return false;
        text += new TextDecoder().decode(value);
      }
      return true;
    };
    const readToEnd = async () => {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return text;
        text += new TextDecoder().decode(value);
      }
    };
    return { controller, readUntil, readToEnd };
  };

  it('goes on when its page disconnects after the first words: shown to a reload, stored whole, billed once', async () => {
    const reply = 'x '.repeat(200);
    fake.setBehaviour({ usage: 'never', reply, chunkSize: 2, chunkDelayMs: 20 });
    const id = await newConversation(app, anna);
    const before = await balanceOf(app, anna.id);
    const requestsBefore = fake.requests.length;
    const stream = await openStream(id, 'Talk a lot');
    await stream.readUntil(3);
    stream.controller.abort();
    // A reload meanwhile: the conversation shows the reply so far.
    const during = await until(async () => {
      const conv = (await (await step(anna.jar, `${app.url}/llm/conversations/${id}`)).json()) as {
        data: { pendingReply?: { content: string; model: string } };
      };
      return conv.data.pendingReply && conv.data.pendingReply.content.length > 0 ? conv.data.pendingReply : undefined;
    });
    expect(reply.startsWith(during.content)).toBe(true);
    expect(during.model).toBe('gpt-4o');

    await fake.waitForRequests(requestsBefore + 1);
    const upstream = fake.requests.at(-1)!;
    await upstream.settled;
    expect(upstream.aborted).toBe(false);
    const settled = await until(async () => {
      const r = await lastRequestOf(app, anna.id);
      return r?.status === 'PENDING' ? undefined : r;
    }, 20_000);
    const saved = await app.database.db.select().from(messages).where(eq(messages.conversationId, id));
    expect(saved.map((m) => m.role)).toEqual(['user', 'assistant']);
    expect(saved[1]?.content).toBe(reply);
    // The whole reply's cost, never more than was reserved for it (the fake ignores max_tokens).
    const cost = Math.min(
      settled.reserved,
      Math.ceil(countMessageTokens([{ role: 'user', content: 'Talk a lot' }]) * 0.1 + countTokens(reply) - 1e-9),
    );
    expect(settled).toMatchObject({ status: 'COMPLETED', charged: cost, outputTokens: countTokens(reply) });
    expect(await balanceOf(app, anna.id)).toBe(before - cost);
    const after = (await (await step(anna.jar, `${app.url}/llm/conversations/${id}`)).json()) as {
      data: { pendingReply?: unknown };
    };
    expect(after.data.pendingReply).toBeUndefined();
  });

  it('stops a reply whose page went before its first word, and bills nothing', async () => {
    fake.setBehaviour({ firstChunkDelayMs: 1500 });
    const id = await newConversation(app, anna);
    const before = await balanceOf(app, anna.id);
    const requestsBefore = fake.requests.length;
    const stream = await openStream(id, 'Never mind');
    await fake.waitForRequests(requestsBefore + 1);
    stream.controller.abort();
    const upstream = fake.requests.at(-1)!;
    await upstream.settled;
    expect(upstream.aborted).toBe(true);
    const settled = await until(async () => {
      const r = await lastRequestOf(app, anna.id);
      return r?.status === 'PENDING' ? undefined : r;
    });
    expect(settled).toMatchObject({ charged: 0 });
    expect(await balanceOf(app, anna.id)).toBe(before);
    const saved = await app.database.db.select().from(messages).where(eq(messages.conversationId, id));
    expect(saved.filter((m) => m.role === 'assistant')).toEqual([]);
  });

  it('stops on the server when Stop comes from another tab, and bills only the tokens produced', async () => {
    fake.setBehaviour({ usage: 'never', reply: 'x '.repeat(200), chunkSize: 2, chunkDelayMs: 30 });
    const id = await newConversation(app, anna);
    const before = await balanceOf(app, anna.id);
    const requestsBefore = fake.requests.length;
    const stream = await openStream(id, 'Talk a lot');
    await stream.readUntil(3);
    // Another tab of the same person: its own request, the same session.
    const stop = await post(app, anna, `/llm/conversations/${id}/stop`, {});
    expect(stop.status).toBe(200);
    expect(((await stop.json()) as { data: { stopped: boolean } }).data.stopped).toBe(true);
    // The first tab's stream ends with its last frame.
    const whole = await stream.readToEnd();
    expect(whole).toContain('data: [DONE]');
    await fake.waitForRequests(requestsBefore + 1);
    const upstream = fake.requests.at(-1)!;
    await upstream.settled;
    expect(upstream.aborted).toBe(true);
    const settled = await until(async () => {
      const r = await lastRequestOf(app, anna.id);
      return r?.status === 'PENDING' ? undefined : r;
    });
    const saved = await app.database.db.select().from(messages).where(eq(messages.conversationId, id));
    const partial = saved[1]?.content ?? '';
    expect(partial.length).toBeGreaterThanOrEqual(6);
    expect(partial.length).toBeLessThan(400);
    const cost = Math.ceil(
      countMessageTokens([{ role: 'user', content: 'Talk a lot' }]) * 0.1 + countTokens(partial) - 1e-9,
    );
    expect(settled).toMatchObject({ status: 'COMPLETED', charged: cost, outputTokens: countTokens(partial) });
    expect(await balanceOf(app, anna.id)).toBe(before - cost);
    // Nothing in progress any more: Stop says so.
    const again = await post(app, anna, `/llm/conversations/${id}/stop`, {});
    expect(((await again.json()) as { data: { stopped: boolean } }).data.stopped).toBe(false);
  });

  /** The `reply` events in the person's log after `afterId` (what their other tabs hear). */
  async function replyEvents(personId: number, afterId: number): Promise<ReplyEvent[]> {
    const events = await app.services.events.after(personId, afterId);
    return events.filter((event) => event.type === STREAM_EVENTS.reply).map((event) => event.data as ReplyEvent);
  }

  it("tells the person's other tabs the reply as it is written, then its end with the stored message and balance", async () => {
    const reply = 'y '.repeat(150);
    fake.setBehaviour({ usage: 'never', reply, chunkSize: 2, chunkDelayMs: 10 });
    const tabs = await signInPerson(app, `tabs-${kind.name}@example.com`, 1000);
    const id = await newConversation(app, tabs);
    const from = await app.services.events.latestId(tabs.id);

    const started = Date.now();
    const result = await stream(app, tabs, id, body('Talk a while'));
    expect(result.status).toBe(200);
    const elapsed = Date.now() - started;

    const events = await replyEvents(tabs.id, from);
    const request = await lastRequestOf(app, tabs.id);
    for (const event of events) {
      expect(replyEventSchema.parse(event)).toMatchObject({
        conversationId: id,
        requestId: request!.id,
        model: 'gpt-4o',
      });
    }
    // The text so far, a few times a second, each the whole text up to then (replyEventSchema).
    const progress = events.slice(0, -1);
    expect(progress.length).toBeGreaterThanOrEqual(2);
    // At most one every 250 ms (docs/architecture.md "Chat replies that outlive their page"):
    // 150 chunks are not 150 writes.
    expect(progress.length).toBeLessThanOrEqual(Math.floor(elapsed / 250) + 1);
    for (const [i, event] of progress.entries()) {
      expect(event.done).toBe(false);
      expect(event.message).toBeUndefined();
      expect(event.balance).toBeUndefined();
      expect(event.content.length).toBeGreaterThan(0);
      expect(reply.startsWith(event.content)).toBe(true);
      if (i > 0) expect(event.content.length).toBeGreaterThan(progress[i - 1]!.content.length);
    }
    // The last: the whole reply, the stored message and the balance after the charge.
    const saved = await app.database.db.select().from(messages).where(eq(messages.conversationId, id));
    const assistant = saved.find((m) => m.role === 'assistant')!;
    expect(events.at(-1)).toEqual({
      conversationId: id,
      requestId: request!.id,
      model: 'gpt-4o',
      content: reply,
      done: true,
      message: {
        id: assistant.id,
        role: 'assistant',
        content: reply,
        model: 'gpt-4o',
        tokensUsed: assistant.tokensUsed,
        createdAt: assistant.createdAt.toISOString(),
      },
      balance: await balanceOf(app, tabs.id),
    });
  });

  it('a reply stopped before its first word ends, for the other tabs, with no message and the whole balance', async () => {
    fake.setBehaviour({ firstChunkDelayMs: 1500 });
    const quiet = await signInPerson(app, `quiet-${kind.name}@example.com`, 1000);
    const id = await newConversation(app, quiet);
    const from = await app.services.events.latestId(quiet.id);
    const before = await balanceOf(app, quiet.id);
    const requestsBefore = fake.requests.length;
    const opened = await openStream(id, 'Never mind', quiet);
    await fake.waitForRequests(requestsBefore + 1);
    opened.controller.abort();
    const last = await until(async () => (await replyEvents(quiet.id, from)).find((event) => event.done));
    expect(last).toMatchObject({ conversationId: id, content: '', done: true, balance: before });
    expect(last.message).toBeUndefined();
  });

  it("answers Stop on another person's conversation with 404 and stops nothing", async () => {
    fake.setBehaviour({ usage: 'never', reply: 'z '.repeat(200), chunkSize: 2, chunkDelayMs: 20 });
    const id = await newConversation(app, anna);
    const opened = await openStream(id, 'Talk a lot');
    await opened.readUntil(3);
    const stranger = await signInPerson(app, `stranger-stop-${kind.name}@example.com`, 1000);
    const refused = await post(app, stranger, `/llm/conversations/${id}/stop`, {});
    expect(refused.status).toBe(404);
    expect(await refused.json()).toMatchObject({
      success: false,
      code: 'NOT_FOUND',
      message: 'Conversation not found',
    });
    // Anna's reply goes on to its end, whole.
    const whole = await opened.readToEnd();
    expect(whole).toContain('data: [DONE]');
    const saved = await app.database.db.select().from(messages).where(eq(messages.conversationId, id));
    expect(saved.find((m) => m.role === 'assistant')?.content).toBe('z '.repeat(200));
  });

  it('answers the non-streaming calls with the whole reply and the same billing fields', async () => {
    const before = await balanceOf(app, anna.id);
    const first = await post(app, anna, '/llm/chat', { message: 'One shot', model: 'gpt-4o-mini' });
    expect(first.status).toBe(200);
    const reply = ((await first.json()) as { data: Record<string, unknown> }).data as {
      conversationId: number;
      content: string;
      billing: { cost: number };
      balanceAfter: number;
      message: { role: string; model: string };
    };
    expect(reply.content).toBe('Hello from the fake model.');
    expect(reply.message).toMatchObject({ role: 'assistant', model: 'gpt-4o-mini' });
    expect(reply.billing.cost).toBe(1);
    expect(reply.balanceAfter).toBe(before - 1);
    const conv = (await (await step(anna.jar, `${app.url}/llm/conversations/${reply.conversationId}`)).json()) as {
      data: { title: string; messages: unknown[] };
    };
    expect(conv.data.title).toBe('One shot');
    expect(conv.data.messages).toHaveLength(2);
    const second = await post(app, anna, `/llm/conversations/${reply.conversationId}/chat`, body('Again'));
    expect(second.status).toBe(200);
    fake.setBehaviour({ errorBeforeStream: { status: 503, message: 'down' } });
    const failed = await post(app, anna, `/llm/conversations/${reply.conversationId}/chat`, body('Down?'));
    expect(failed.status).toBe(502);
    expect(((await failed.json()) as { message: string }).message).toMatch(/failed to answer/);
  });

  it('refuses with 402 before streaming when not even the smallest reply is covered', async () => {
    const poor = await signInPerson(app, `poor-${kind.name}@example.com`);
    await app.services.ledger.charge(
      { userId: poor.id, amount: 49, reason: 'generation_charge', idempotencyKey: `spend-${kind.name}` },
      () => 'x',
    );
    const id = await newConversation(app, poor);
    const response = await post(app, poor, `/llm/conversations/${id}/stream`, body('Hello?'));
    expect(response.status).toBe(402);
    expect(response.headers.get('content-type')).toContain('application/json');
    const json = (await response.json()) as { code: string; message: string; details: Record<string, number> };
    expect(json.code).toBe('INSUFFICIENT_TOKENS');
    expect(json.message).toMatch(/^Insufficient tokens\. Need \d+ tokens but only have 1$/);
    // The values the browser words it with, the current balance among them.
    expect(json.details.balance).toBe(1);
    expect(json.details.cost).toBeGreaterThan(1);
    expect(await balanceOf(app, poor.id)).toBe(1);
    const rows = await app.database.db.select().from(chatRequests).where(eq(chatRequests.userId, poor.id));
    expect(rows).toHaveLength(0);
    await expectLedgerConsistent(app, poor.id);
  });

  it('refuses to create a conversation for a first message the balance cannot pay any reply for', async () => {
    const broke = await signInPerson(app, `broke-${kind.name}@example.com`);
    await app.services.ledger.charge(
      { userId: broke.id, amount: 49, reason: 'generation_charge', idempotencyKey: `broke-${kind.name}` },
      () => 'x',
    );
    const refused = await post(app, broke, '/llm/conversations', { title: 'New Chat', ...body('Hello?') });
    expect(refused.status).toBe(402);
    const json = (await refused.json()) as { code: string; details: Record<string, number> };
    expect(json.code).toBe('INSUFFICIENT_TOKENS');
    expect(json.details.balance).toBe(1);
    expect(json.details.cost).toBeGreaterThan(1);
    // Nothing was created or stored.
    const list = await step(broke.jar, `${app.url}/llm/conversations`);
    expect(((await list.json()) as { data: unknown[] }).data).toEqual([]);
    // A first message that the balance covers is created as before; so is one without a message.
    const rich = await signInPerson(app, `rich-${kind.name}@example.com`, 1000);
    const created = await post(app, rich, '/llm/conversations', { title: 'New Chat', ...body('Hello?') });
    expect(created.status).toBe(201);
    expect(((await created.json()) as { data: { title: string } }).data.title).toBe('New Chat');
    expect((await post(app, broke, '/llm/conversations', { title: 'Plain' })).status).toBe(201);
  });

  it('lowers the reply limit to what the balance covers instead of refusing', async () => {
    const modest = await signInPerson(app, `modest-${kind.name}@example.com`);
    const id = await newConversation(app, modest);
    const result = await stream(app, modest, id, body('Hi', { maxTokens: 2000 }));
    expect(result.data.at(-1)).toMatchObject({ isComplete: true });
    const sent = fake.requests.at(-1)?.body as { max_tokens: number };
    expect(sent.max_tokens).toBeLessThan(50);
    expect(sent.max_tokens).toBeGreaterThan(40);
    await expectLedgerConsistent(app, modest.id);
  });

  it('reserves in one statement when the balance covers the context budget, exactly otherwise, alike', async () => {
    // Two conversations with the same history: one priced from the bound, one exactly.
    const [quickId, exactId] = [await newConversation(app, anna), await newConversation(app, anna)];
    for (const id of [quickId, exactId]) expect((await stream(app, anna, id, body('First question'))).status).toBe(200);
    const request = { message: 'Second question', model: 'gpt-4o', maxTokens: 50, contextTokensLimit: 500 };
    const model = { ...MODELS[0]!, maxTokens: 128000, isStreamingAllowed: true };
    const bound = worstCaseCost(promptTokensBound({ role: 'user', content: request.message }, 500), 50, model);

    const before = await balanceOf(app, anna.id);
    const quick = await app.services.chat.begin(anna.id, quickId, request, before);
    expect(quick.reserved).toBe(bound);
    expect(await balanceOf(app, anna.id)).toBe(before - bound);
    const exact = await app.services.chat.begin(anna.id, exactId, request);
    expect(exact.reserved).toBe(worstCaseCost(countMessageTokens(exact.messages), 50, model));
    expect(exact.reserved).toBeLessThan(bound);
    // The same prompt either way: the history read with the reservation, without the new message.
    expect(quick.messages).toEqual(exact.messages);
    expect(quick.messages.map((m) => m.content)).toEqual([
      'First question',
      'Hello from the fake model.',
      'Second question',
    ]);
    expect(quick.contextInfo).toEqual(exact.contextInfo);
    expect(quick.maxTokens).toBe(50);

    // Another user's conversation is refused by the same statement, with nothing written.
    const ben = await signInPerson(app, `ben-${kind.name}@example.com`, 1000);
    const benBefore = await balanceOf(app, ben.id);
    await expect(app.services.chat.begin(ben.id, quickId, request, benBefore)).rejects.toMatchObject({
      code: 'NOT_FOUND',
    });
    expect(await balanceOf(app, ben.id)).toBe(benBefore);
    expect(await app.database.db.select().from(chatRequests).where(eq(chatRequests.userId, ben.id))).toHaveLength(0);

    expect(await app.services.chat.releaseStale(-1000)).toBe(2);
    expect(await balanceOf(app, anna.id)).toBe(before);
  });

  it('releases a reservation left pending by a crash', async () => {
    const id = await newConversation(app, anna);
    const before = await balanceOf(app, anna.id);
    const turn = await app.services.chat.begin(anna.id, id, {
      message: 'lost',
      model: 'gpt-4o',
      maxTokens: 50,
      contextTokensLimit: 500,
    });
    expect(await balanceOf(app, anna.id)).toBe(before - turn.reserved);
    expect(await app.services.chat.releaseStale(60_000)).toBe(0);
    expect(await app.services.chat.releaseStale(-1000)).toBe(1);
    expect(await balanceOf(app, anna.id)).toBe(before);
    expect(await app.services.chat.releaseStale(-1000)).toBe(0);
    expect(await lastRequestOf(app, anna.id)).toMatchObject({ status: 'FAILED', charged: 0 });
  });
});
