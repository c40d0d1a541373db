import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { signInThroughIdp, startTestApp, testDatabases, type TestApp } from '../helpers';
import { countsFor, signInPerson, type Person } from '../chat/helpers';
import { postJson } from '../images/support';

/** Issue #25 item 14: the smaller edges. */

/** Log lines as pino writes them (one JSON object a line), kept for the test to read. */
function logCollector() {
  const lines: Array<Record<string, unknown> & { level: number; msg?: string }> = [];
  return {
    lines,
    text: () => lines.map((line) => JSON.stringify(line)).join('\n'),
    stream: {
      write(chunk: string) {
        for (const line of chunk.split('\n')) if (line.trim()) lines.push(JSON.parse(line) as (typeof lines)[number]);
      },
    },
  };
}

describe.each(testDatabases())('probes on $name', (kind) => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp(kind, { RATE_LIMIT_PER_MINUTE: '3', METRICS_TOKEN: 'a-metrics-token-of-16+' });
  });
  afterAll(async () => {
    await app.close();
  });

  it("/healthz, /readyz and /metrics answer a balancer's probe however often it asks", async () => {
    // The allowance is spent first, on an API path.
    for (let i = 0; i < 4; i += 1) await (await fetch(`${app.url}/api/payments/plans`)).arrayBuffer();
    expect((await fetch(`${app.url}/api/payments/plans`)).status).toBe(429);
    for (let i = 0; i < 10; i += 1) {
      const health = await fetch(`${app.url}/healthz`);
      expect(health.status).toBe(200);
      await health.arrayBuffer();
      const ready = await fetch(`${app.url}/readyz`);
      expect(ready.status).toBe(200);
      await ready.arrayBuffer();
      const metrics = await fetch(`${app.url}/metrics`, {
        headers: { authorization: 'Bearer a-metrics-token-of-16+' },
      });
      expect(metrics.status).toBe(200);
      await metrics.arrayBuffer();
    }
  });
});

describe.each(testDatabases())('edges on $name', (kind) => {
  let app: TestApp;
  let person: Person;
  const logs = logCollector();
  beforeAll(async () => {
    app = await startTestApp(kind, { LOG_LEVEL: 'info' }, {}, { logStream: logs.stream });
    person = await signInPerson(app, 'edges@example.com', 100);
  });
  afterAll(async () => {
    await app.close();
  });
  afterEach(() => {
    logs.lines.length = 0;
  });

  it("a picture is kept by its owner's browser only, never by a shared cache", async () => {
    const generated = await postJson(app, { jar: person.jar, id: person.id }, '/api/stability-core/generate', {
      prompt: 'a lighthouse',
      aspect_ratio: '1:1',
    });
    expect(generated.status).toBe(200);
    const { imageUrl, thumbnailUrl } = generated.body.data as { imageUrl: string; thumbnailUrl: string };
    await app.services.thumbnails.drain();
    for (const url of [imageUrl, thumbnailUrl]) {
      const response = await fetch(url);
      expect(response.status).toBe(200);
      const cacheControl = response.headers.get('cache-control') ?? '';
      expect(cacheControl.split(',').map((d) => d.trim())).toContain('private');
      expect(cacheControl).not.toMatch(/public|s-maxage/);
      await response.arrayBuffer();
    }
  });

  it('a 5,000-character path gets our 414 body', async () => {
    for (const path of [`/images/${'a'.repeat(5000)}.png`, `/llm/conversations/${'1'.repeat(5000)}`]) {
      const response = await fetch(`${app.url}${path}`, { headers: { cookie: person.jar.header() } });
      expect(response.status, path.slice(0, 20)).toBe(414);
      expect(await response.json()).toEqual({
        success: false,
        code: 'URI_TOO_LONG',
        message: 'Please check your input',
      });
    }
  });

  it("the sign-in callback's code and state never reach the logs", async () => {
    const { callbackUrl, response } = await signInThroughIdp(app, 'logged@example.com');
    expect(response?.status).toBe(302);
    const query = new URL(callbackUrl).searchParams;
    const code = query.get('code') ?? '';
    const state = query.get('state') ?? '';
    expect(code.length).toBeGreaterThan(10);
    expect(state.length).toBeGreaterThan(10);
    const text = logs.text();
    expect(text).toContain('/auth/google/callback?');
    expect(text).not.toContain(code);
    expect(text).not.toContain(state);
    const callbackLine = logs.lines.find((line) =>
      String((line.req as { url?: string } | undefined)?.url ?? '').startsWith('/auth/google/callback'),
    );
    expect((callbackLine?.req as { url: string }).url).toMatch(/code=\[Redacted\]/);
  });

  it('conversation titles refuse bidirectional overrides; a title of zero-width characters is a blank one', async () => {
    const before = await countsFor(app, person.id);
    const user = { jar: person.jar, id: person.id };
    for (const title of ['\u202egpj.exe', 'Chat \u202d1', 'a\u2066b\u2069', 'x\u202ay\u202c']) {
      const response = await postJson(app, user, '/llm/conversations', { title });
      expect(response.status, JSON.stringify(title)).toBe(400);
      expect(response.body).toMatchObject({ success: false, code: 'INVALID_TEXT' });
    }
    expect(await countsFor(app, person.id)).toEqual(before);
    for (const title of ['\u200b', '\u200b\u200c\u200d\ufeff', ' \u2060 \u200b ']) {
      const response = await postJson(app, user, '/llm/conversations', { title });
      expect(response.status, JSON.stringify(title)).toBe(201);
      // As a blank title does (DESIGN: a blank or missing title gets the placeholder).
      expect((response.body.data as { title: string }).title).toBe('New Chat');
    }
    // Right-to-left text itself is welcome.
    const hebrew = await postJson(app, user, '/llm/conversations', { title: 'שלום עולם' });
    expect(hebrew.status).toBe(201);
    expect((hebrew.body.data as { title: string }).title).toBe('שלום עולם');
  });
});
