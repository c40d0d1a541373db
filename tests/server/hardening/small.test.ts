import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, testDatabases, type TestApp } from '../helpers';
import { signInPerson, type Person } from '../chat/helpers';

describe.each(testDatabases())('small things on $name', (kind) => {
  let app: TestApp;
  let person: Person;
  beforeAll(async () => {
    app = await startTestApp(kind);
    person = await signInPerson(app, 'small@example.com');
  });
  afterAll(async () => {
    await app.close();
  });

  const get = (path: string) => fetch(`${app.url}${path}`, { headers: { cookie: person.jar.header() } });

  it('authenticated JSON answers carry Cache-Control: no-store', async () => {
    for (const path of [
      '/auth/me',
      '/llm/models',
      '/llm/conversations',
      '/api/images/my-images',
      '/llm/conversations/999',
    ]) {
      const response = await get(path);
      expect(response.headers.get('cache-control'), path).toBe('no-store');
      await response.arrayBuffer();
    }
  });

  it('POST /llm/conversations with no body, or an empty JSON body, creates a conversation with the default title', async () => {
    for (const headers of [{}, { 'content-type': 'application/json' }] as Array<Record<string, string>>) {
      const response = await fetch(`${app.url}/llm/conversations`, {
        method: 'POST',
        headers: { ...headers, origin: app.url, cookie: person.jar.header() },
      });
      expect(response.status).toBe(201);
      const body = (await response.json()) as { data: { title: string } };
      expect(body.data.title).toBe('New Chat');
    }
  });

  it('numeric query values and ids accept only plain decimal digits', async () => {
    for (const value of ['0x10', '1e3', '+5', '00001', ' 1', '1 ', '1.0', '-1', '١', '1_000', '']) {
      const page = await get(`/api/images/my-images?page=${encodeURIComponent(value)}`);
      expect(page.status, `page=${value}`).toBe(400);
      const limit = await get(`/api/images/my-images?limit=${encodeURIComponent(value)}`);
      expect(limit.status, `limit=${value}`).toBe(400);
      if (value !== '') {
        const conversation = await get(`/llm/conversations/${encodeURIComponent(value)}`);
        expect(conversation.status, `id=${value}`).toBe(400);
        expect(((await conversation.json()) as { code: string }).code).toBe('VALIDATION_ERROR');
      }
    }
    expect((await get('/api/images/my-images?page=1&page=2')).status).toBe(400);
    expect((await get('/api/images/my-images?page=2&limit=6')).status).toBe(200);
    expect((await get('/llm/conversations/0')).status).toBe(404);
  });
});

describe.each(testDatabases())('rate limit on $name', (kind) => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp(kind, { RATE_LIMIT_PER_MINUTE: '3' });
  });
  afterAll(async () => {
    await app.close();
  });

  it('unknown paths (no build here: every one is an API-style 404) count against the rate limit', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 5; i += 1) {
      const response = await fetch(`${app.url}/no-such-page-${i}`);
      statuses.push(response.status);
      await response.arrayBuffer();
    }
    expect(statuses).toEqual([404, 404, 404, 429, 429]);
  });
});
