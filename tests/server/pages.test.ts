import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openingScreen, readPages, screenPreloads, type Pages, type Screen } from '../../server/http/pages';
import { SESSION_HINT_META } from '../../src/domain/session-hint';

type ManifestChunk = {
  file: string;
  src?: string;
  imports?: string[];
  dynamicImports?: string[];
  css?: string[];
  isEntry?: boolean;
  isDynamicEntry?: boolean;
};
type Manifest = Record<string, ManifestChunk>;

const SCREEN_SOURCES = {
  portrait: 'src/ui/portrait/PortraitScreen.tsx',
  gallery: 'src/ui/gallery/GalleryScreen.tsx',
  chat: 'src/ui/chat/ChatScreen.tsx',
  billing: 'src/ui/billing/BillingScreen.tsx',
  paymentStatus: 'src/ui/payment-status/PaymentStatusScreen.tsx',
} as const;

const ALL_SCREENS: Screen[] = ['login', 'dashboard', 'portrait', 'gallery', 'chat', 'billing', 'paymentStatus'];

/**
 * A build's manifest as Vite writes it: the entry (index.html) imports the vendor chunk,
 * which imports a polyfill chunk; the screens are dynamic entries importing shared chunks.
 */
function fakeManifest(): Manifest {
  const manifest: Manifest = {
    'index.html': {
      file: 'assets/index-e.js',
      src: 'index.html',
      isEntry: true,
      imports: ['_vendor.js'],
      dynamicImports: ['src/ui/login/LoginScreen.tsx', 'src/ui/shell/AppShell.tsx'],
      css: ['assets/index-e.css'],
    },
    '_vendor.js': { file: 'assets/vendor-v.js', imports: ['_polyfill.js'] },
    '_polyfill.js': { file: 'assets/polyfill-p.js' },
    '_icons.js': { file: 'assets/icons-i.js', imports: ['_shared.js'] },
    '_shared.js': { file: 'assets/shared-s.js', imports: ['_polyfill.js'] },
    '_screen-kit.js': { file: 'assets/screen-kit-k.js', imports: ['_icons.js', '_vendor.js'] },
    'src/ui/login/LoginScreen.tsx': {
      file: 'assets/LoginScreen-x.js',
      src: 'src/ui/login/LoginScreen.tsx',
      isDynamicEntry: true,
      imports: ['_vendor.js', '_icons.js'],
      css: ['assets/LoginScreen-x.css'],
    },
    'src/ui/shell/AppShell.tsx': {
      file: 'assets/AppShell-a.js',
      src: 'src/ui/shell/AppShell.tsx',
      isDynamicEntry: true,
      imports: ['_vendor.js', '_icons.js', '_screen-kit.js'],
    },
    'src/ui/dashboard/DashboardScreen.tsx': {
      file: 'assets/DashboardScreen-d.js',
      src: 'src/ui/dashboard/DashboardScreen.tsx',
      isDynamicEntry: true,
      imports: ['_vendor.js', '_screen-kit.js'],
    },
  };
  for (const [screen, source] of Object.entries(SCREEN_SOURCES)) {
    manifest[source] = {
      file: `assets/${screen}-s.js`,
      src: source,
      isDynamicEntry: true,
      imports: ['_screen-kit.js', '_vendor.js'],
    };
  }
  return manifest;
}

const LOGIN_PRELOADS = ['assets/LoginScreen-x.js', 'assets/icons-i.js', 'assets/shared-s.js'];
const DASHBOARD_PRELOADS = [
  'assets/AppShell-a.js',
  'assets/icons-i.js',
  'assets/shared-s.js',
  'assets/screen-kit-k.js',
  'assets/DashboardScreen-d.js',
];
const ENTRY_CHUNKS = ['assets/index-e.js', 'assets/vendor-v.js', 'assets/polyfill-p.js'];

describe('openingScreen', () => {
  it.each([
    ['/', 'login', 'dashboard'],
    ['/login', 'login', 'dashboard'],
    ['/login/', 'login', 'dashboard'],
    ['/dashboard', 'login', 'dashboard'],
    ['/dashboard/', 'login', 'dashboard'],
    ['/chat', 'login', 'chat'],
    ['/chat/abc', 'login', 'chat'],
    ['/chat/abc/', 'login', 'chat'],
    ['/gallery', 'login', 'gallery'],
    ['/billing', 'login', 'billing'],
    ['/portrait-creator', 'login', 'portrait'],
    ['/payment-status', 'login', 'paymentStatus'],
  ] as const)('opens %s with %s signed out and %s signed in', (pathname, signedOut, signedIn) => {
    expect(openingScreen(pathname, false)).toBe(signedOut);
    expect(openingScreen(pathname, true)).toBe(signedIn);
  });

  it.each(['/nope', '/dev/statecharts', '/chat/abc/def', '/dashboardx', '/login/more', '/gallery/1', '/assets/x.js'])(
    'opens %s with no screen, signed in or not',
    (pathname) => {
      expect(openingScreen(pathname, false)).toBeUndefined();
      expect(openingScreen(pathname, true)).toBeUndefined();
    },
  );
});

describe('screenPreloads', () => {
  it("lists the login screen's chunk first, then what it imports, without the entry's chunks", () => {
    expect(screenPreloads(fakeManifest(), 'login')).toEqual(LOGIN_PRELOADS);
  });

  it('lists the shell and the screen, each shared chunk once', () => {
    const files = screenPreloads(fakeManifest(), 'dashboard');
    expect(files).toEqual(DASHBOARD_PRELOADS);
    expect(new Set(files).size).toBe(files.length);
  });

  it.each(ALL_SCREENS)('lists, for %s, its own code and none of what the entry loads', (screen) => {
    const files = screenPreloads(fakeManifest(), screen);
    const own = screen === 'login' ? 'assets/LoginScreen-x.js' : 'assets/AppShell-a.js';
    expect(files[0]).toBe(own);
    if (screen !== 'login') {
      const screenFile = screen === 'dashboard' ? 'assets/DashboardScreen-d.js' : `assets/${screen}-s.js`;
      expect(files).toContain(screenFile);
      expect(files).toContain('assets/screen-kit-k.js');
      expect(files).not.toContain('assets/LoginScreen-x.js');
    }
    expect(files).toContain('assets/icons-i.js');
    // Reached only through _icons.js: imports are followed to the end.
    expect(files).toContain('assets/shared-s.js');
    for (const chunk of ENTRY_CHUNKS) expect(files).not.toContain(chunk);
    expect(files.filter((file) => file.endsWith('.css'))).toEqual([]);
    expect(new Set(files).size).toBe(files.length);
  });

  it('keeps what the entry loads when the manifest names no entry', () => {
    const manifest = fakeManifest();
    delete manifest['index.html']?.isEntry;
    expect(screenPreloads(manifest, 'login')).toEqual([
      'assets/LoginScreen-x.js',
      'assets/vendor-v.js',
      'assets/polyfill-p.js',
      'assets/icons-i.js',
      'assets/shared-s.js',
    ]);
  });

  it('throws when a screen module is missing from the manifest', () => {
    for (const [screen, source] of [
      ['login', 'src/ui/login/LoginScreen.tsx'],
      ['dashboard', 'src/ui/dashboard/DashboardScreen.tsx'],
      ['dashboard', 'src/ui/shell/AppShell.tsx'],
      ['chat', SCREEN_SOURCES.chat],
      ['paymentStatus', SCREEN_SOURCES.paymentStatus],
    ] as const) {
      const manifest = fakeManifest();
      delete manifest[source];
      expect(() => screenPreloads(manifest, screen), source).toThrow(source);
    }
    const withoutChat = fakeManifest();
    delete withoutChat[SCREEN_SOURCES.chat];
    expect(screenPreloads(withoutChat, 'login')).toEqual(LOGIN_PRELOADS);
  });
});

const INDEX =
  '<!doctype html><html lang="ru"><head><title>ImageGen Studio</title>' +
  '<script type="module" crossorigin src="/assets/index-e.js"></script>' +
  '<link rel="modulepreload" crossorigin href="/assets/vendor-v.js"></head>' +
  '<body><div id="root"></div></body></html>';
const MARK = `<meta name="${SESSION_HINT_META}" content="present" />`;

const links = (files: string[]) =>
  files.map((file) => `<link rel="modulepreload" crossorigin href="/${file}">`).join('');
const withLinks = (files: string[]) => INDEX.replace('</head>', `${links(files)}</head>`);
const withMark = (html: string) => html.replace('</head>', `${MARK}</head>`);

function textOf(pages: Pages, pathname: string, hasSession: boolean): string {
  return pages.pageFor(pathname, hasSession).identity.toString('utf8');
}

describe('readPages', () => {
  const dirs: string[] = [];
  const buildDir = (files: { index?: string; manifest?: Manifest }) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'imagegen-pages-'));
    dirs.push(dir);
    if (files.index !== undefined) fs.writeFileSync(path.join(dir, 'index.html'), files.index);
    if (files.manifest) {
      fs.mkdirSync(path.join(dir, '.vite'));
      fs.writeFileSync(path.join(dir, '.vite', 'manifest.json'), JSON.stringify(files.manifest, null, 2));
    }
    return dir;
  };
  let pages: Pages;

  beforeAll(() => {
    const read = readPages(buildDir({ index: INDEX, manifest: fakeManifest() }));
    if (!read) throw new Error('readPages found no page');
    pages = read;
  });
  afterAll(() => {
    for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
  });

  it("preloads the login screen's code before </head> for a signed-out visitor", () => {
    const html = textOf(pages, '/login', false);
    const link = '<link rel="modulepreload" crossorigin href="/assets/LoginScreen-x.js">';
    expect(html).toContain(link);
    expect(html.indexOf(link)).toBeLessThan(html.indexOf('</head>'));
    expect(html).toBe(withLinks(LOGIN_PRELOADS));
    // The entry's own preloads are not repeated.
    expect(html.split('vendor-v.js')).toHaveLength(2);
    expect(html).not.toContain(SESSION_HINT_META);
  });

  it('sends brotli and gzip copies of the same page', () => {
    for (const [pathname, hasSession] of [
      ['/login', false],
      ['/dashboard', true],
      ['/chat/abc', true],
      ['/nope', false],
      ['/nope', true],
    ] as const) {
      const page = pages.pageFor(pathname, hasSession);
      expect(page.identity.length, pathname).toBeGreaterThan(0);
      expect(zlib.brotliDecompressSync(page.br).equals(page.identity), pathname).toBe(true);
      expect(zlib.gunzipSync(page.gzip).equals(page.identity), pathname).toBe(true);
    }
  });

  it('marks the page and preloads the dashboard for a visitor with a session', () => {
    const html = textOf(pages, '/dashboard', true);
    expect(html).toContain(`<meta name="${SESSION_HINT_META}"`);
    expect(html).toBe(withMark(withLinks(DASHBOARD_PRELOADS)));
    expect(textOf(pages, '/', true)).toBe(html);
    expect(textOf(pages, '/login', true)).toBe(html);
  });

  it('preloads the login screen, unmarked, for a protected page without a session', () => {
    for (const pathname of ['/dashboard', '/', '/chat/abc', '/gallery', '/billing', '/payment-status']) {
      const html = textOf(pages, pathname, false);
      expect(html, pathname).toBe(withLinks(LOGIN_PRELOADS));
      expect(html, pathname).not.toContain(SESSION_HINT_META);
      expect(html, pathname).not.toContain('AppShell-a.js');
    }
  });

  it("preloads each protected screen's code for a visitor with a session", () => {
    expect(textOf(pages, '/chat/abc', true)).toBe(withMark(withLinks(screenPreloads(fakeManifest(), 'chat'))));
    expect(textOf(pages, '/chat/abc', true)).toContain('assets/chat-s.js');
    expect(textOf(pages, '/gallery', true)).toContain('assets/gallery-s.js');
    expect(textOf(pages, '/portrait-creator/', true)).toContain('assets/portrait-s.js');
    expect(textOf(pages, '/billing', true)).toContain('assets/billing-s.js');
    expect(textOf(pages, '/payment-status', true)).toContain('assets/paymentStatus-s.js');
    expect(textOf(pages, '/gallery', true)).not.toContain('assets/chat-s.js');
  });

  it('gives a page of no screen the plain index.html, marked only with a session', () => {
    expect(textOf(pages, '/nope', false)).toBe(INDEX);
    expect(textOf(pages, '/dev/statecharts', false)).toBe(INDEX);
    expect(textOf(pages, '/nope', true)).toBe(withMark(INDEX));
  });

  it('serves the plain index.html without a manifest, marked with a session', () => {
    const plain = readPages(buildDir({ index: INDEX }));
    expect(plain).toBeDefined();
    if (!plain) return;
    for (const pathname of ['/', '/login', '/dashboard', '/chat/abc', '/nope']) {
      expect(textOf(plain, pathname, false), pathname).toBe(INDEX);
      expect(textOf(plain, pathname, true), pathname).toBe(withMark(INDEX));
      const page = plain.pageFor(pathname, true);
      expect(zlib.brotliDecompressSync(page.br).equals(page.identity), pathname).toBe(true);
      expect(zlib.gunzipSync(page.gzip).equals(page.identity), pathname).toBe(true);
    }
  });

  it('finds no pages without index.html, manifest or not', () => {
    expect(readPages(buildDir({ manifest: fakeManifest() }))).toBeUndefined();
    expect(readPages(buildDir({}))).toBeUndefined();
    expect(readPages(path.join(os.tmpdir(), 'imagegen-pages-no-such-dir'))).toBeUndefined();
  });

  it('refuses, when it starts, a manifest that lacks a screen module', () => {
    const manifest = fakeManifest();
    delete manifest[SCREEN_SOURCES.billing];
    expect(() => readPages(buildDir({ index: INDEX, manifest }))).toThrow(SCREEN_SOURCES.billing);
  });
});
