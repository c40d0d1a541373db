import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, step, testDatabases, type TestApp } from '../helpers';
import { countsFor, expectLedgerConsistent, newConversation, post, signInPerson, stream, type Person } from './helpers';

const good = { message: 'Hello', model: 'offline-assistant', maxTokens: 2000, contextTokensLimit: 500 };

describe.each(testDatabases())('conversations and the offline assistant on $name', (kind) => {
  let app: TestApp;
  let anna: Person;
  let boris: Person;

  beforeAll(async () => {
    app = await startTestApp(kind, { CHAT_OFFLINE_TOKEN_DELAY_MS: '0' });
    anna = await signInPerson(app, 'anna-conv@example.com');
    boris = await signInPerson(app, 'boris-conv@example.com');
  });
  afterAll(async () => {
    await app.close();
  });

  it('offers the offline assistant when no service is configured', async () => {
    const json = (await (await step(anna.jar, `${app.url}/llm/models`)).json()) as {
      success: boolean;
      data: { models: Record<string, { name: string }>; default: string };
    };
    expect(json.success).toBe(true);
    expect(json.data.default).toBe('offline-assistant');
    expect(Object.keys(json.data.models)).toEqual(['offline-assistant']);
  });

  it('creates, lists, loads and deletes conversations; a placeholder title becomes the first message', async () => {
    const created = await post(app, anna, '/llm/conversations', {});
    expect(created.status).toBe(201);
    const conversation = ((await created.json()) as { data: { id: number; title: string; messages: unknown[] } }).data;
    expect(conversation).toMatchObject({ title: 'New Chat', isDeleted: false, messages: [] });

    const result = await stream(app, anna, conversation.id, { ...good, message: '  Write me some code, please  ' });
    expect(result.status).toBe(200);
    const final = result.data.at(-1) as { isComplete: boolean; balanceAfter: number; billing: { cost: number } };
    expect(final.isComplete).toBe(true);
    expect(final.balanceAfter).toBe(50 - final.billing.cost);
    const text = result.data
      .filter((d) => typeof d.content === 'string')
      .map((d) => d.content)
      .join('');
    expect(text).toContain('```ts');
    expect(text).toContain('offline assistant');

    const list = (await (await step(anna.jar, `${app.url}/llm/conversations`)).json()) as {
      data: Array<{ id: number; title: string }>;
    };
    expect(list.data[0]).toMatchObject({ id: conversation.id, title: 'Write me some code, please' });
    const loaded = (await (await step(anna.jar, `${app.url}/llm/conversations/${conversation.id}`)).json()) as {
      data: { messages: Array<{ role: string; content: string; model: string | null; tokensUsed: number | null }> };
    };
    expect(loaded.data.messages.map((m) => m.role)).toEqual(['user', 'assistant']);
    expect(loaded.data.messages[0]?.content).toBe('Write me some code, please');
    expect(loaded.data.messages[1]).toMatchObject({ content: text, model: 'offline-assistant' });
    expect(loaded.data.messages[1]?.tokensUsed).toBeGreaterThan(0);

    // A named conversation keeps its name.
    const named = await newConversation(app, anna, 'Recipes');
    await stream(app, anna, named, good);
    const again = (await (await step(anna.jar, `${app.url}/llm/conversations/${named}`)).json()) as {
      data: { title: string };
    };
    expect(again.data.title).toBe('Recipes');

    const deleted = await step(anna.jar, `${app.url}/llm/conversations/${conversation.id}`, {
      method: 'DELETE',
      headers: { origin: app.url },
    });
    expect(deleted.status).toBe(200);
    const after = (await (await step(anna.jar, `${app.url}/llm/conversations`)).json()) as {
      data: Array<{ id: number }>;
    };
    expect(after.data.map((c) => c.id)).not.toContain(conversation.id);
    expect((await step(anna.jar, `${app.url}/llm/conversations/${conversation.id}`)).status).toBe(404);
    expect((await stream(app, anna, conversation.id, good)).status).toBe(404);
    await expectLedgerConsistent(app, anna.id);
  });

  it('names a conversation with a blank title New Chat, and trims a title of its spaces', async () => {
    const titles: string[] = [];
    for (const title of ['   ', '  Trip plans  ']) {
      const created = await post(app, boris, '/llm/conversations', { title });
      expect(created.status).toBe(201);
      titles.push(((await created.json()) as { data: { title: string } }).data.title);
    }
    expect(titles).toEqual(['New Chat', 'Trip plans']);
  });

  it("answers 404 for another user's conversation and touches nothing", async () => {
    const id = await newConversation(app, anna, 'Private');
    const before = await countsFor(app, boris.id);
    const annaBefore = await countsFor(app, anna.id);
    expect((await step(boris.jar, `${app.url}/llm/conversations/${id}`)).status).toBe(404);
    const del = await step(boris.jar, `${app.url}/llm/conversations/${id}`, {
      method: 'DELETE',
      headers: { origin: app.url },
    });
    expect(del.status).toBe(404);
    const streamed = await post(app, boris, `/llm/conversations/${id}/stream`, good);
    expect(streamed.status).toBe(404);
    expect(((await streamed.json()) as { message: string }).message).toBe('Conversation not found');
    expect((await post(app, boris, `/llm/conversations/${id}/chat`, good)).status).toBe(404);
    expect((await post(app, boris, '/llm/chat', { ...good, conversationId: id })).status).toBe(404);
    expect(await countsFor(app, boris.id)).toEqual(before);
    expect(await countsFor(app, anna.id)).toEqual(annaBefore);
  });

  it('refuses bad input with a clear 4xx, billing and storing nothing', async () => {
    const id = await newConversation(app, anna, 'Bad input');
    const before = await countsFor(app, anna.id);
    const cases: Array<[string, string | Record<string, unknown>, number, string | RegExp]> = [
      [`/llm/conversations/${id}/stream`, { ...good, message: '   ' }, 400, 'Message cannot be empty'],
      [
        `/llm/conversations/${id}/stream`,
        { ...good, message: 'x'.repeat(32001) },
        400,
        'Message must be at most 32000 characters',
      ],
      [`/llm/conversations/${id}/stream`, { ...good, model: 'gpt-5-turbo' }, 400, 'Unknown model: gpt-5-turbo'],
      [
        `/llm/conversations/${id}/stream`,
        { ...good, model: '' },
        400,
        'No model selected. Please select a model in settings.',
      ],
      [`/llm/conversations/${id}/stream`, { ...good, contextTokensLimit: 50 }, 400, /^Context token limit must be/],
      [`/llm/conversations/${id}/stream`, { ...good, contextTokensLimit: 10100 }, 400, /^Context token limit must be/],
      [`/llm/conversations/${id}/stream`, { ...good, contextTokensLimit: 'lots' }, 400, /Context token limit must be/],
      [`/llm/conversations/${id}/stream`, { ...good, maxTokens: 0 }, 400, /^maxTokens must be between/],
      [`/llm/conversations/${id}/stream`, { ...good, maxTokens: 100000 }, 400, /^maxTokens must be between/],
      [`/llm/conversations/${id}/stream`, { ...good, maxTokens: 1.5 }, 400, 'maxTokens must be a whole number'],
      ['/llm/conversations/abc/stream', good, 400, 'Conversation id must be a whole number'],
      ['/llm/conversations/1.5/stream', good, 400, 'Conversation id must be a whole number'],
      ['/llm/conversations/-1/chat', good, 400, 'Conversation id must be a whole number'],
      ['/llm/conversations/99999999999/stream', good, 404, 'Conversation not found'],
      [`/llm/conversations/${id}/stream`, '{"message": "hi", ', 400, /./],
      [`/llm/conversations/${id}/chat`, { ...good, message: '' }, 400, 'Message cannot be empty'],
      ['/llm/chat', { ...good, model: 'nope' }, 400, 'Unknown model: nope'],
      ['/llm/chat', { ...good, conversationId: 'x' }, 400, 'conversationId must be a whole number'],
      ['/llm/conversations', { title: 42 }, 400, 'Title must be text'],
    ];
    for (const [path, payload, status, message] of cases) {
      const response = await post(app, anna, path, payload);
      expect(response.status, `${path} ${JSON.stringify(payload).slice(0, 80)}`).toBe(status);
      const json = (await response.json()) as { success: boolean; message: string };
      expect(json.success).toBe(false);
      if (typeof message === 'string') expect(json.message).toBe(message);
      else expect(json.message).toMatch(message);
    }
    expect((await step(anna.jar, `${app.url}/llm/conversations/abc`)).status).toBe(400);
    expect(await countsFor(app, anna.id)).toEqual(before);
    await expectLedgerConsistent(app, anna.id);
  });

  it('requires a signed-in user', async () => {
    expect((await fetch(`${app.url}/llm/models`)).status).toBe(401);
    const response = await fetch(`${app.url}/llm/conversations/1/stream`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: app.url },
      body: '{}',
    });
    expect(response.status).toBe(401);
  });

  it('trims the history to the context limit, newest first, and says what was sent', async () => {
    const id = await newConversation(app, boris, 'Long');
    for (const word of ['one', 'two', 'three']) await stream(app, boris, id, { ...good, message: word });
    const small = await stream(app, boris, id, { ...good, message: 'four', contextTokensLimit: 100 });
    const info = (small.data.at(-1) as { contextInfo: { messagesIncluded: number; tokensIncluded: number } })
      .contextInfo;
    expect(info.messagesIncluded).toBe(1);
    expect(info.tokensIncluded).toBeLessThanOrEqual(100);
    const big = await stream(app, boris, id, { ...good, message: 'five', contextTokensLimit: 10000 });
    expect((big.data.at(-1) as { contextInfo: { messagesIncluded: number } }).contextInfo.messagesIncluded).toBe(9);
    await expectLedgerConsistent(app, boris.id);
  });
});
