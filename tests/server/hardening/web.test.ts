import fs from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { preferredEncoding } from '../../../server/http/web';
import { startTestApp, testDatabases, type TestApp } from '../helpers';
import { newConversation, post, signInPerson, type Person } from '../chat/helpers';

const INDEX =
  '<!doctype html><html lang="ru"><head><title>ImageGen Studio</title></head><body><div id="root"></div></body></html>';
const SCRIPT = `export const text = ${JSON.stringify('a fairly compressible script. '.repeat(200))};\n`;
const ASSET = '/assets/app-Abc123.js';

/**
 * Every module server/http/pages.ts looks up, each in its own chunk: the screens share one
 * chunk; the Russian texts import the entry's chunk (which holds their common part).
 */
const SCREEN_CHUNKS: Array<{ source: string; file: string; imports?: string[] }> = [
  { source: 'src/login-page.tsx', file: 'assets/login-page-Q1.js', imports: ['_forms.js'] },
  { source: 'src/app.tsx', file: 'assets/app-A1.js', imports: ['_router.js'] },
  { source: 'src/i18n/texts.ru.ts', file: 'assets/texts.ru-T1.js', imports: ['index.html'] },
  { source: 'src/ui/login/LoginScreen.tsx', file: 'assets/LoginScreen-L1.js', imports: ['_forms.js'] },
  { source: 'src/ui/shell/AppShell.tsx', file: 'assets/AppShell-S1.js', imports: ['_forms.js'] },
  { source: 'src/ui/dashboard/DashboardScreen.tsx', file: 'assets/DashboardScreen-D1.js', imports: ['_forms.js'] },
  { source: 'src/ui/portrait/PortraitScreen.tsx', file: 'assets/PortraitScreen-P1.js', imports: ['_forms.js'] },
  { source: 'src/ui/gallery/GalleryScreen.tsx', file: 'assets/GalleryScreen-G1.js', imports: ['_forms.js'] },
  { source: 'src/ui/chat/ChatScreen.tsx', file: 'assets/ChatScreen-C1.js', imports: ['_forms.js'] },
  { source: 'src/ui/billing/BillingScreen.tsx', file: 'assets/BillingScreen-B1.js', imports: ['_forms.js'] },
  {
    source: 'src/ui/payment-status/PaymentStatusScreen.tsx',
    file: 'assets/PaymentStatusScreen-Y1.js',
    imports: ['_forms.js'],
  },
  { source: '_forms.js', file: 'assets/forms-F1.js' },
  { source: '_router.js', file: 'assets/router-R1.js' },
];
const MANIFEST = {
  'index.html': { file: ASSET.slice(1), src: 'index.html', isEntry: true },
  ...Object.fromEntries(
    SCREEN_CHUNKS.map(({ source, file, imports }) => [
      source,
      {
        file,
        ...(source.startsWith('src/') ? { src: source, isDynamicEntry: true } : {}),
        ...(imports ? { imports } : {}),
      },
    ]),
  ),
};

const preload = (file: string) => `<link rel="modulepreload" crossorigin href="/${file}">`;
const withPreloads = (files: string[]) => INDEX.replace('</head>', `${files.map(preload).join('')}</head>`);
/** The app and its Russian texts (the entry's own chunk is not repeated). */
const APP_FILES = ['assets/app-A1.js', 'assets/router-R1.js', 'assets/texts.ru-T1.js'];
/** index.html as sent for /login without a session: it preloads the login page alone. */
const LOGIN_PAGE = withPreloads(['assets/login-page-Q1.js', 'assets/forms-F1.js']);
/** index.html as sent for any other page without a session: the app showing its login screen. */
const SIGNED_OUT_APP = withPreloads([...APP_FILES, 'assets/LoginScreen-L1.js', 'assets/forms-F1.js']);
const DASHBOARD_LINKS = [...APP_FILES, 'assets/AppShell-S1.js', 'assets/forms-F1.js', 'assets/DashboardScreen-D1.js']
  .map(preload)
  .join('');

/** A build as vite.config.ts writes it: files, their .br and .gz copies, no maps in dist/. */
async function fakeBuild(): Promise<string> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'imagegen-web-'));
  await fs.mkdir(path.join(dir, 'assets'));
  const write = async (name: string, content: string) => {
    await fs.writeFile(path.join(dir, name), content);
    await fs.writeFile(path.join(dir, `${name}.br`), zlib.brotliCompressSync(content));
    await fs.writeFile(path.join(dir, `${name}.gz`), zlib.gzipSync(content));
  };
  await write('index.html', INDEX);
  await write(ASSET.slice(1), SCRIPT);
  await write('favicon.svg', `<svg xmlns="http://www.w3.org/2000/svg">${'<g/>'.repeat(300)}</svg>`);
  // A map left in dist/ by mistake is still never served.
  await fs.writeFile(path.join(dir, `${ASSET.slice(1)}.map`), '{"version":3}');
  for (const chunk of SCREEN_CHUNKS) await write(chunk.file, `export default ${JSON.stringify(chunk.file)};\n`);
  // The build's manifest (vite.config.ts writes it uncompressed): read by the server, never served.
  await fs.mkdir(path.join(dir, '.vite'));
  await fs.writeFile(path.join(dir, '.vite', 'manifest.json'), JSON.stringify(MANIFEST, null, 2));
  return dir;
}

interface Raw {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/** One request whose body is kept as sent (fetch would decode it). */
function raw(url: string, headers: Record<string, string> = {}, method = 'GET', body?: string): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const request = http.request(url, { method, headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () =>
        resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks) }),
      );
      response.on('error', reject);
    });
    request.on('error', reject);
    request.end(body);
  });
}

function decode(response: Raw): string {
  const encoding = response.headers['content-encoding'];
  if (encoding === 'br') return zlib.brotliDecompressSync(response.body).toString('utf8');
  if (encoding === 'gzip') return zlib.gunzipSync(response.body).toString('utf8');
  return response.body.toString('utf8');
}

describe('Accept-Encoding negotiation', () => {
  it('prefers brotli, then gzip, and honours q=0', () => {
    expect(preferredEncoding('gzip, deflate, br, zstd')).toBe('br');
    expect(preferredEncoding('gzip, deflate')).toBe('gzip');
    expect(preferredEncoding('br;q=0, gzip;q=0.5')).toBe('gzip');
    expect(preferredEncoding('*')).toBe('br');
    expect(preferredEncoding('identity')).toBe('identity');
    expect(preferredEncoding(undefined)).toBe('identity');
  });
});

describe.each(testDatabases())('the built app and compression on $name', (kind) => {
  let app: TestApp;
  let webDir: string;
  let anna: Person;

  beforeAll(async () => {
    webDir = await fakeBuild();
    app = await startTestApp(kind, { CHAT_OFFLINE_TOKEN_DELAY_MS: '0' }, { webDir });
    anna = await signInPerson(app, 'anna-web@example.com');
  });
  afterAll(async () => {
    await app.close();
    await fs.rm(webDir, { recursive: true, force: true });
  });

  it('sends hashed assets as the brotli or gzip copy made at build time, cached for a year', async () => {
    const br = await raw(`${app.url}${ASSET}`, { 'accept-encoding': 'gzip, deflate, br' });
    expect(br.status).toBe(200);
    expect(br.headers['content-encoding']).toBe('br');
    expect(br.body.equals(await fs.readFile(path.join(webDir, `${ASSET.slice(1)}.br`)))).toBe(true);
    expect(decode(br)).toBe(SCRIPT);
    expect(br.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(br.headers.vary).toMatch(/accept-encoding/i);
    expect(br.headers['content-type']).toMatch(/javascript/);

    const gzip = await raw(`${app.url}${ASSET}`, { 'accept-encoding': 'gzip' });
    expect(gzip.headers['content-encoding']).toBe('gzip');
    expect(decode(gzip)).toBe(SCRIPT);

    const plain = await raw(`${app.url}${ASSET}`);
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.body.toString('utf8')).toBe(SCRIPT);

    const icon = await raw(`${app.url}/favicon.svg`, { 'accept-encoding': 'br' });
    expect(icon.headers['content-encoding']).toBe('br');
    expect(icon.headers['cache-control']).toBe('no-cache');
  });

  it('never serves source maps, and never the compressed copies by their own names', async () => {
    for (const file of [`${ASSET}.map`, `${ASSET}.br`, `${ASSET}.gz`, '/index.html.br']) {
      const response = await raw(`${app.url}${file}`, { 'accept-encoding': 'br' });
      expect(response.status, file).toBe(404);
      expect(decode(response), file).not.toContain('"version":3');
    }
    const missing = await raw(`${app.url}/assets/gone-123.js`);
    expect(missing.status).toBe(404);
    expect(missing.headers['content-type']).toMatch(/application\/json/);
  });

  it('answers every page with index.html, compressed, always revalidated; unknown pages with 404', async () => {
    for (const [page, expected] of [
      ['/login', LOGIN_PAGE],
      ['/login/', LOGIN_PAGE],
      ['/login?returnTo=%2Fgallery', LOGIN_PAGE],
      ['/', SIGNED_OUT_APP],
      ['/dashboard', SIGNED_OUT_APP],
      ['/chat/12', SIGNED_OUT_APP],
      ['/gallery?page=2', SIGNED_OUT_APP],
    ] as const) {
      const response = await raw(`${app.url}${page}`, { 'accept-encoding': 'br, gzip' });
      expect(response.status, page).toBe(200);
      expect(response.headers['content-type'], page).toBe('text/html; charset=utf-8');
      expect(response.headers['cache-control'], page).toBe('no-cache');
      expect(response.headers['content-encoding'], page).toBe('br');
      expect(decode(response), page).toBe(expected);
    }
    const gzip = await raw(`${app.url}/login`, { 'accept-encoding': 'gzip' });
    expect(gzip.headers['content-encoding']).toBe('gzip');
    expect(decode(gzip)).toBe(LOGIN_PAGE);
    const unknown = await raw(`${app.url}/no-such-page`);
    expect(unknown.status).toBe(404);
    expect(unknown.body.toString('utf8')).toBe(INDEX);
    expect(unknown.headers['cache-control']).toBe('no-cache');
  });

  it('marks the page for a visitor who sent a session cookie, compressed too, and never caches either', async () => {
    // The mark, and the current user asked for while the code arrives.
    const mark =
      '<link rel="preload" href="/auth/me" as="fetch" crossorigin="use-credentials">' +
      '<meta name="imagegen-session" content="present" /></head>';
    const signedInDashboard = INDEX.replace('</head>', `${DASHBOARD_LINKS}${mark}`);
    for (const encoding of ['br', 'gzip', 'identity']) {
      for (const page of ['/dashboard', '/', '/login']) {
        const signedIn = await raw(`${app.url}${page}`, { cookie: anna.jar.header(), 'accept-encoding': encoding });
        expect(decode(signedIn), `${page} ${encoding}`).toBe(signedInDashboard);
        expect(signedIn.headers.vary, `${page} ${encoding}`).toMatch(/cookie/i);
      }
      const signedOut = await raw(`${app.url}/login`, { 'accept-encoding': encoding });
      expect(decode(signedOut), encoding).toBe(LOGIN_PAGE);
      const signedOutApp = await raw(`${app.url}/dashboard`, { 'accept-encoding': encoding });
      expect(decode(signedOutApp), encoding).toBe(SIGNED_OUT_APP);
    }
    // Only the session cookie counts, not any cookie.
    expect(decode(await raw(`${app.url}/login`, { cookie: 'other=1' }))).toBe(LOGIN_PAGE);
    expect(decode(await raw(`${app.url}/dashboard`, { cookie: 'other=1' }))).toBe(SIGNED_OUT_APP);
    // A page of no screen preloads nothing.
    expect(decode(await raw(`${app.url}/no-such-page`, { cookie: anna.jar.header() }))).toBe(
      INDEX.replace('</head>', mark),
    );
  });

  it('serves the chunks the pages preload, and never the build manifest', async () => {
    for (const { file } of SCREEN_CHUNKS) {
      const chunk = await raw(`${app.url}/${file}`, { 'accept-encoding': 'br' });
      expect(chunk.status, file).toBe(200);
      expect(decode(chunk), file).toBe(`export default ${JSON.stringify(file)};\n`);
    }
    // Every file a page preloads, signed in or not, as the browser asks for it.
    const preloaded = new Set<string>();
    for (const [page, cookie] of [
      ['/login', undefined],
      ['/dashboard', undefined],
      ['/dashboard', anna.jar.header()],
      ['/chat/12', anna.jar.header()],
      ['/payment-status', anna.jar.header()],
    ] as const) {
      const html = decode(await raw(`${app.url}${page}`, cookie ? { cookie } : {}));
      const hrefs = [...html.matchAll(/<link rel="modulepreload" crossorigin href="([^"]+)">/g)].map((m) => m[1]);
      expect(hrefs.length, page).toBeGreaterThan(0);
      for (const href of hrefs) if (href) preloaded.add(href);
    }
    expect(preloaded).toContain('/assets/login-page-Q1.js');
    expect(preloaded).toContain('/assets/texts.ru-T1.js');
    expect(preloaded).toContain('/assets/PaymentStatusScreen-Y1.js');
    for (const href of preloaded) {
      const chunk = await raw(`${app.url}${href}`, { 'accept-encoding': 'br, gzip' });
      expect(chunk.status, href).toBe(200);
      expect(chunk.headers['content-type'], href).toMatch(/javascript/);
      expect(decode(chunk), href).toBe(`export default ${JSON.stringify(href.slice(1))};\n`);
    }
    const headerSets: Array<Record<string, string>> = [
      {},
      { 'accept-encoding': 'br, gzip' },
      { cookie: anna.jar.header() },
    ];
    for (const headers of headerSets) {
      const response = await raw(`${app.url}/.vite/manifest.json`, headers);
      expect(response.status).toBe(404);
      expect(decode(response)).not.toContain('isEntry');
      expect(decode(response)).not.toContain('LoginScreen');
    }
    for (const url of [
      '/.vite/',
      '/.vite',
      '/.vite/manifest.json?x=1',
      '/%2Evite/manifest.json',
      '/assets/../.vite/manifest.json',
      '//.vite/manifest.json',
    ]) {
      const response = await raw(`${app.url}${url}`);
      expect(response.status, url).toBe(404);
      expect(decode(response), url).not.toContain('isEntry');
    }
  });

  it('compresses JSON answers per request', async () => {
    for (let i = 0; i < 12; i += 1) await newConversation(app, anna, `A conversation about compression, number ${i}`);
    const br = await raw(`${app.url}/llm/conversations`, { cookie: anna.jar.header(), 'accept-encoding': 'br' });
    expect(br.status).toBe(200);
    expect(br.headers['content-encoding']).toBe('br');
    expect(br.headers['content-type']).toMatch(/application\/json/);
    const list = JSON.parse(decode(br)) as { data: unknown[] };
    expect(list.data.length).toBeGreaterThanOrEqual(12);
    expect(br.body.length).toBeLessThan(Buffer.byteLength(decode(br)));

    const gzip = await raw(`${app.url}/llm/conversations`, { cookie: anna.jar.header(), 'accept-encoding': 'gzip' });
    expect(gzip.headers['content-encoding']).toBe('gzip');
    expect(JSON.parse(decode(gzip))).toEqual(list);
    const plain = await raw(`${app.url}/llm/conversations`, { cookie: anna.jar.header() });
    expect(plain.headers['content-encoding']).toBeUndefined();
  });

  it('never compresses the chat event stream', async () => {
    const id = await newConversation(app, anna);
    const response = await post(
      app,
      anna,
      `/llm/conversations/${id}/stream`,
      { message: 'Hello', model: 'offline-assistant', maxTokens: 200, contextTokensLimit: 500 },
      { headers: { 'content-type': 'application/json', origin: app.url, 'accept-encoding': 'br, gzip' } },
    );
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(response.headers.get('content-encoding')).toBeNull();
    const text = await response.text();
    expect(text).toContain('data: [DONE]');
  });
});

describe.each(testDatabases())('the rate limit and the built app on $name', (kind) => {
  let app: TestApp;
  let webDir: string;

  beforeAll(async () => {
    webDir = await fakeBuild();
    app = await startTestApp(kind, { RATE_LIMIT_PER_MINUTE: '3' }, { webDir });
  });
  afterAll(async () => {
    await app.close();
    await fs.rm(webDir, { recursive: true, force: true });
  });

  it('never counts files and pages, and counts unknown API paths like every API route', async () => {
    for (let i = 0; i < 10; i += 1) {
      const asset = await raw(`${app.url}${ASSET}`, { 'accept-encoding': 'br' });
      expect(asset.status).toBe(200);
      expect(asset.headers['x-ratelimit-limit']).toBeUndefined();
      expect((await raw(`${app.url}/favicon.svg`)).status).toBe(200);
      expect((await raw(`${app.url}/login`)).status).toBe(200);
      expect((await raw(`${app.url}/no-such-page-${i}`)).status).toBe(404);
    }
    const statuses: number[] = [];
    for (let i = 0; i < 5; i += 1) statuses.push((await raw(`${app.url}/api/no-such-route-${i}`)).status);
    expect(statuses).toEqual([404, 404, 404, 429, 429]);
    // Pages and files are still served once the API allowance is spent.
    expect((await raw(`${app.url}/dashboard`)).status).toBe(200);
    expect((await raw(`${app.url}${ASSET}`)).status).toBe(200);
  });
});
