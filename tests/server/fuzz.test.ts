import fs from 'node:fs/promises';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chatRequests, generationRequests, tokenLedger, users } from '../../server/db/schema';
import { startTestApp, testDatabases, type TestApp } from './helpers';
import { signInPerson, type Person } from './chat/helpers';

/** Every endpoint a client can send something to. `:id` is replaced by a real id. */
const ENDPOINTS: Array<{ method: 'GET' | 'POST' | 'DELETE'; url: string }> = [
  { method: 'POST', url: '/api/stability/text-to-image' },
  { method: 'POST', url: '/api/stability-ultra/generate' },
  { method: 'POST', url: '/api/stability-core/generate' },
  { method: 'POST', url: '/api/stability-sd3/generate' },
  { method: 'GET', url: '/api/images/my-images' },
  { method: 'GET', url: '/auth/me' },
  { method: 'POST', url: '/auth/logout' },
  { method: 'GET', url: '/llm/models' },
  { method: 'GET', url: '/llm/conversations' },
  { method: 'POST', url: '/llm/conversations' },
  { method: 'GET', url: '/llm/conversations/:id' },
  { method: 'DELETE', url: '/llm/conversations/:id' },
  { method: 'POST', url: '/llm/chat' },
  { method: 'POST', url: '/llm/conversations/:id/chat' },
  { method: 'POST', url: '/llm/conversations/:id/stream' },
];

const HUGE = 'x'.repeat(70_000);
const hostileStrings = [
  '\u0000',
  'a\u0000b',
  '\u0007\u001b[2J',
  '\ud800',
  '\udc00x',
  '\u202e',
  '\ufeff',
  '😀'.repeat(2001),
  HUGE,
];

/** Bodies: raw text with a content type. None is a valid generation or chat request. */
const BODIES: Array<{ name: string; type: string; body: string }> = [
  { name: 'malformed JSON', type: 'application/json', body: '{"prompt": "a' },
  { name: 'JSON null', type: 'application/json', body: 'null' },
  { name: 'JSON array', type: 'application/json', body: '[1,2,3]' },
  { name: 'JSON string', type: 'application/json', body: '"hello"' },
  { name: 'JSON number', type: 'application/json', body: '1e309' },
  { name: 'proto pollution', type: 'application/json', body: '{"__proto__": {"admin": true}, "prompt": null}' },
  {
    name: 'wrong types',
    type: 'application/json',
    body: JSON.stringify({
      prompt: 5,
      message: [],
      title: {},
      model: 1,
      aspect_ratio: true,
      width: '1024',
      height: null,
      seed: 'x',
      maxTokens: '10',
      contextTokensLimit: 1e20,
    }),
  },
  {
    name: 'nulls',
    type: 'application/json',
    body: JSON.stringify({ prompt: null, message: null, title: null, model: null, aspect_ratio: null, seed: null }),
  },
  {
    name: 'huge numbers',
    type: 'application/json',
    body: JSON.stringify({
      prompt: 'a',
      message: 'a',
      model: 'gpt-4o',
      width: 1e300,
      height: -1,
      seed: 2 ** 64,
      maxTokens: 1e12,
      contextTokensLimit: -5,
      aspect_ratio: '1:1',
      conversationId: 2 ** 53,
    }),
  },
  ...hostileStrings.map((s, i) => ({
    name: `hostile string ${i}`,
    type: 'application/json',
    // No aspect ratio or size: unicode that is fine (BOM, RLO) must not make a valid, paid request.
    body: JSON.stringify({ prompt: s, negative_prompt: s, message: s, title: s, model: s, extra: s }),
  })),
  { name: 'text/plain', type: 'text/plain', body: 'prompt=a cat' },
  { name: 'form', type: 'application/x-www-form-urlencoded', body: 'prompt=a%00cat&message=hi' },
  { name: 'multipart garbage', type: 'multipart/form-data; boundary=x', body: '--x\r\nbroken' },
  { name: 'oversized', type: 'application/json', body: JSON.stringify({ prompt: 'a'.repeat(2 * 1024 * 1024) }) },
  { name: 'empty', type: 'application/json', body: '' },
];

const ID_VALUES = ['0x10', '1e3', '+5', '00001', '-1', '99999999999999999999', '%00', 'abc', '1.5'];

async function snapshot(app: TestApp) {
  const db = app.database.db;
  const count = async (table: typeof tokenLedger | typeof generationRequests | typeof chatRequests) =>
    Number((await db.select({ n: sql<number>`count(*)::int` }).from(table))[0]?.n);
  const balances = (await db.select({ id: users.id, tokens: users.tokensAmount }).from(users)).sort(
    (a, b) => a.id - b.id,
  );
  const files = (await fs.readdir(app.config.imagesDir).catch(() => [] as string[])).sort();
  return {
    balances,
    ledger: await count(tokenLedger),
    generations: await count(generationRequests),
    chats: await count(chatRequests),
    files,
  };
}

describe.each(testDatabases())('fuzzing every endpoint on $name', (kind) => {
  let app: TestApp;
  let person: Person;
  let conversationId: number;
  beforeAll(async () => {
    app = await startTestApp(kind);
    person = await signInPerson(app, 'fuzz@example.com', 1000);
    const created = await app.server.inject({
      method: 'POST',
      url: '/llm/conversations',
      headers: { cookie: person.jar.header(), 'content-type': 'application/json' },
      payload: '{"title":"fuzz"}',
    });
    conversationId = created.json<{ data: { id: number } }>().data.id;
  });
  afterAll(async () => {
    await app.close();
  });

  function expectClearAnswer(label: string, status: number, body: string): void {
    expect(status, label).toBeLessThan(500);
    if (status >= 400) {
      const parsed = JSON.parse(body) as { success?: boolean; code?: unknown; message?: unknown };
      expect(parsed.success, label).toBe(false);
      expect(typeof parsed.code, label).toBe('string');
      expect(typeof parsed.message, label).toBe('string');
    }
  }

  it('answers every malformed body with a clear 4xx and changes no balance, ledger row, request row or file', async () => {
    const before = await snapshot(app);
    for (const endpoint of ENDPOINTS) {
      if (endpoint.method === 'GET' || endpoint.url === '/auth/logout') continue;
      for (const { name, type, body } of BODIES) {
        const url = endpoint.url.replace(':id', String(conversationId));
        if (endpoint.method === 'DELETE') continue;
        const response = await app.server.inject({
          method: endpoint.method,
          url,
          headers: { cookie: person.jar.header(), 'content-type': type, origin: app.url },
          payload: body,
        });
        expectClearAnswer(`${endpoint.method} ${url} ${name}`, response.statusCode, response.body);
      }
    }
    const after = await snapshot(app);
    expect(after).toEqual(before);
  });

  it('answers malformed ids, query values and anonymous calls with a clear 4xx and changes nothing', async () => {
    const before = await snapshot(app);
    for (const endpoint of ENDPOINTS) {
      const urls = endpoint.url.includes(':id')
        ? ID_VALUES.map((id) => endpoint.url.replace(':id', id))
        : endpoint.url === '/api/images/my-images'
          ? ID_VALUES.flatMap((v) => [
              `${endpoint.url}?page=${v}`,
              `${endpoint.url}?limit=${v}`,
              `${endpoint.url}?page=1&page=2`,
            ])
          : [endpoint.url];
      for (const url of urls) {
        for (const cookie of [person.jar.header(), 'session=not-a-session', '']) {
          if (endpoint.url === '/auth/logout' && cookie === person.jar.header()) continue;
          const response = await app.server.inject({
            method: endpoint.method,
            url,
            headers: { cookie, origin: app.url, 'content-type': 'application/json' },
            payload: endpoint.method === 'POST' ? '{"message": "\\u0000"}' : undefined,
          });
          expectClearAnswer(
            `${endpoint.method} ${url} cookie=${cookie.slice(0, 8)}`,
            response.statusCode,
            response.body,
          );
        }
      }
    }
    // A foreign Origin on a state-changing call is refused before anything happens.
    const foreign = await app.server.inject({
      method: 'POST',
      url: '/api/stability-core/generate',
      headers: { cookie: person.jar.header(), origin: 'https://evil.example', 'content-type': 'application/json' },
      payload: JSON.stringify({ prompt: 'a cat', aspect_ratio: '1:1' }),
    });
    expect(foreign.statusCode).toBe(403);
    expect(await snapshot(app)).toEqual(before);
  });
});
