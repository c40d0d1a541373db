import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signInThroughIdp, startTestApp, step, CookieJar, testDatabases, type TestApp } from '../helpers';

/** The issue's examples: each one, before the fix, ended with `Location: //evil.com`. */
const ISSUE_VALUES = [
  '/.//evil.com',
  '/..//evil.com',
  '/%2e//evil.com',
  '/./\\evil.com',
  '/x/..//evil.com',
  './/evil.com',
  '..//evil.com',
];

function expectOwnOrigin(location: string | null, app: TestApp): void {
  expect(location).not.toBeNull();
  const value = location ?? '';
  expect(value.startsWith('/')).toBe(true);
  expect(value.startsWith('//') || value.startsWith('/\\')).toBe(false);
  expect(new URL(value, app.url).origin).toBe(new URL(app.url).origin);
}

describe.each(testDatabases())('sign-in redirects on $name', (kind) => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp(kind);
  });
  afterAll(async () => {
    await app.close();
  });

  it('the whole sign-in flow never ends on another origin, for every example of the issue', async () => {
    for (const [i, value] of ISSUE_VALUES.entries()) {
      const { response } = await signInThroughIdp(app, `redirect${i}@example.com`, {
        query: `?successRedirect=${encodeURIComponent(value)}&failureRedirect=${encodeURIComponent(value)}`,
      });
      expect(response?.status).toBe(302);
      const location = response?.headers.get('location') ?? null;
      expectOwnOrigin(location, app);
      expect(location).toBe('/dashboard');
    }
  });

  it('a failed sign-in goes back to a same-origin page too', async () => {
    for (const value of ISSUE_VALUES) {
      const jar = new CookieJar();
      const start = await step(jar, `${app.url}/auth/google?failureRedirect=${encodeURIComponent(value)}`);
      expect(start.status).toBe(302);
      // The identity provider answers with an error instead of a code.
      const callback = await step(jar, `${app.url}/auth/google/callback?error=access_denied&state=x`);
      const location = callback.headers.get('location');
      expectOwnOrigin(location, app);
      expect(location).toBe('/login?error=signin_failed');
    }
  });

  it('a same-origin page is still remembered', async () => {
    const { response } = await signInThroughIdp(app, 'redirect-ok@example.com', {
      query: `?successRedirect=${encodeURIComponent(`${app.url}/chat/7?x=1`)}&failureRedirect=/login`,
    });
    expect(response?.headers.get('location')).toBe('/chat/7?x=1');
  });
});
