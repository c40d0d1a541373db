// One file: every page answer of the server (SPEC section 2's routes) from one built app.
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
const LOGIN_PAGE_SOURCE = 'src/login-page.tsx';
const APP_SOURCE = 'src/app.tsx';
const TEXTS_RU_SOURCE = 'src/i18n/texts.ru.ts';
const LOGIN_SCREEN_SOURCE = 'src/ui/login/LoginScreen.tsx';
const SHELL_SOURCE = 'src/ui/shell/AppShell.tsx';
const DASHBOARD_SOURCE = 'src/ui/dashboard/DashboardScreen.tsx';

const PROTECTED_SCREENS = ['dashboard', 'portrait', 'gallery', 'chat', 'billing', 'paymentStatus'] as const;
const ALL_SCREENS: Screen[] = ['loginPage', 'login', ...PROTECTED_SCREENS];

/**
 * A build's manifest as Vite writes it: the entry (index.html, src/main.tsx) imports the
 * vendor chunk, which imports a polyfill chunk, and loads lazily either the login page on
 * its own or the app; the app loads the Russian texts (whose common part sits in the
 * entry's chunk) and its screens, each a dynamic entry importing shared chunks.
 */
function fakeManifest(): Manifest {
  const manifest: Manifest = {
    'index.html': {
      file: 'assets/index-e.js',
      src: 'index.html',
      isEntry: true,
      imports: ['_vendor.js'],
      dynamicImports: [LOGIN_PAGE_SOURCE, APP_SOURCE, TEXTS_RU_SOURCE],
      css: ['assets/index-e.css'],
    },
    '_vendor.js': { file: 'assets/vendor-v.js', imports: ['_polyfill.js'] },
    '_polyfill.js': { file: 'assets/polyfill-p.js' },
    '_icons.js': { file: 'assets/icons-i.js', imports: ['_shared.js'] },
    '_shared.js': { file: 'assets/shared-s.js', imports: ['_polyfill.js'] },
    '_router.js': { file: 'assets/router-r.js', imports: ['_vendor.js'] },
    '_screen-kit.js': { file: 'assets/screen-kit-k.js', imports: ['_icons.js', '_vendor.js'] },
    [LOGIN_PAGE_SOURCE]: {
      file: 'assets/login-page-q.js',
      src: LOGIN_PAGE_SOURCE,
      isDynamicEntry: true,
      imports: ['_vendor.js', '_icons.js'],
      css: ['assets/login-page-q.css'],
    },
    [APP_SOURCE]: {
      file: 'assets/app-a.js',
      src: APP_SOURCE,
      isDynamicEntry: true,
      imports: ['_vendor.js', '_router.js'],
      dynamicImports: [LOGIN_SCREEN_SOURCE, SHELL_SOURCE],
    },
    // The Russian common texts are in the entry's chunk (src/i18n/index.ts imports them).
    [TEXTS_RU_SOURCE]: {
      file: 'assets/texts.ru-t.js',
      src: TEXTS_RU_SOURCE,
      isDynamicEntry: true,
      imports: ['index.html'],
    },
    [LOGIN_SCREEN_SOURCE]: {
      file: 'assets/LoginScreen-x.js',
      src: LOGIN_SCREEN_SOURCE,
      isDynamicEntry: true,
      imports: ['_vendor.js', '_icons.js'],
      css: ['assets/LoginScreen-x.css'],
    },
    [SHELL_SOURCE]: {
      file: 'assets/AppShell-h.js',
      src: SHELL_SOURCE,
      isDynamicEntry: true,
      imports: ['_vendor.js', '_icons.js', '_screen-kit.js'],
    },
    [DASHBOARD_SOURCE]: {
      file: 'assets/DashboardScreen-d.js',
      src: DASHBOARD_SOURCE,
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

/** /login without a session: the login page on its own, none of the app. */
const LOGIN_PAGE_PRELOADS = ['assets/login-page-q.js', 'assets/icons-i.js', 'assets/shared-s.js'];
/** The app's texts: app.tsx and what it imports, then the Russian texts. */
const APP_PRELOADS = ['assets/app-a.js', 'assets/router-r.js', 'assets/texts.ru-t.js'];
/** Any other page without a session: the app showing its login screen. */
const LOGIN_PRELOADS = [...APP_PRELOADS, 'assets/LoginScreen-x.js', 'assets/icons-i.js', 'assets/shared-s.js'];
const SHELL_PRELOADS = [
  ...APP_PRELOADS,
  'assets/AppShell-h.js',
  'assets/icons-i.js',
  'assets/shared-s.js',
  'assets/screen-kit-k.js',
];
const DASHBOARD_PRELOADS = [...SHELL_PRELOADS, 'assets/DashboardScreen-d.js'];
const ENTRY_CHUNKS = ['assets/index-e.js', 'assets/vendor-v.js', 'assets/polyfill-p.js'];

describe('openingScreen', () => {
  it.each([
    ['/', 'login', 'dashboard'],
    ['/login', 'loginPage', 'dashboard'],
    ['/login/', 'loginPage', 'dashboard'],
    ['/dashboard', 'login', 'dashboard'],
    ['/dashboard/', 'login', 'dashboard'],
    ['/chat', 'login', 'chat'],
    ['/chat/abc', 'login', 'chat'],
    ['/chat/abc/', 'login', 'chat'],
    ['/gallery', 'login', 'gallery'],
    ['/billing', 'login', 'billing'],
    ['/portrait-creator', 'login', 'portrait'],
    ['/portrait-creator/', 'login', 'portrait'],
    ['/payment-status', 'login', 'paymentStatus'],
  ] as const)('opens %s with %s signed out and %s signed in', (pathname, signedOut, signedIn) => {
    expect(openingScreen(pathname, false)).toBe(signedOut);
    expect(openingScreen(pathname, true)).toBe(signedIn);
  });

  it('opens the login page on its own only for /login without a session', () => {
    const pages = ['/', '/login', '/login/', '/dashboard', '/chat/abc', '/gallery', '/billing', '/nope', '/login/more'];
    const opensLoginPage = pages.filter(
      (pathname) => openingScreen(pathname, false) === 'loginPage' || openingScreen(pathname, true) === 'loginPage',
    );
    expect(opensLoginPage).toEqual(['/login', '/login/']);
  });

  it.each([
    '/nope',
    '/dev/statecharts',
    '/chat/abc/def',
    '/dashboardx',
    '/login/more',
    '/loginx',
    '/login-page',
    '/gallery/1',
    '/assets/x.js',
    // One trailing slash only, as the SPA's routes (a page the SPA does not answer).
    '/login//',
    '/dashboard//',
  ])('opens %s with no screen, signed in or not', (pathname) => {
    expect(openingScreen(pathname, false)).toBeUndefined();
    expect(openingScreen(pathname, true)).toBeUndefined();
  });
});

describe('screenPreloads', () => {
  it("lists the login page's chunk first, then what it imports, and nothing of the app", () => {
    const files = screenPreloads(fakeManifest(), 'loginPage');
    expect(files).toEqual(LOGIN_PAGE_PRELOADS);
    for (const file of ['assets/app-a.js', 'assets/texts.ru-t.js', 'assets/LoginScreen-x.js', 'assets/router-r.js']) {
      expect(files).not.toContain(file);
    }
  });

  it("lists the app, its Russian texts and the app's login screen for the in-app login", () => {
    expect(screenPreloads(fakeManifest(), 'login')).toEqual(LOGIN_PRELOADS);
  });

  it('lists the app, its texts, the shell and the screen, each shared chunk once', () => {
    const files = screenPreloads(fakeManifest(), 'dashboard');
    expect(files).toEqual(DASHBOARD_PRELOADS);
    expect(new Set(files).size).toBe(files.length);
  });

  it.each(PROTECTED_SCREENS)('lists, for %s, the app, its texts, the shell and the screen, in that order', (screen) => {
    const screenFile = screen === 'dashboard' ? 'assets/DashboardScreen-d.js' : `assets/${screen}-s.js`;
    expect(screenPreloads(fakeManifest(), screen)).toEqual([...SHELL_PRELOADS, screenFile]);
  });

  it.each(ALL_SCREENS)('lists, for %s, its own code and none of what the entry loads', (screen) => {
    const files = screenPreloads(fakeManifest(), screen);
    expect(files[0]).toBe(screen === 'loginPage' ? 'assets/login-page-q.js' : 'assets/app-a.js');
    if (screen === 'loginPage') {
      expect(files).not.toContain('assets/app-a.js');
      expect(files).not.toContain('assets/texts.ru-t.js');
    } else {
      expect(files).toContain('assets/router-r.js');
      expect(files).toContain('assets/texts.ru-t.js');
      expect(files).not.toContain('assets/login-page-q.js');
    }
    if (screen === 'login') {
      expect(files).toContain('assets/LoginScreen-x.js');
      expect(files).not.toContain('assets/AppShell-h.js');
    }
    if (screen !== 'login' && screen !== 'loginPage') {
      const screenFile = screen === 'dashboard' ? 'assets/DashboardScreen-d.js' : `assets/${screen}-s.js`;
      expect(files).toContain('assets/AppShell-h.js');
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
    expect(screenPreloads(manifest, 'loginPage')).toEqual([
      'assets/login-page-q.js',
      'assets/vendor-v.js',
      'assets/polyfill-p.js',
      'assets/icons-i.js',
      'assets/shared-s.js',
    ]);
    // The Russian texts import the entry's chunk, which is then preloaded too.
    expect(screenPreloads(manifest, 'login')).toEqual([
      'assets/app-a.js',
      'assets/vendor-v.js',
      'assets/polyfill-p.js',
      'assets/router-r.js',
      'assets/texts.ru-t.js',
      'assets/index-e.js',
      'assets/LoginScreen-x.js',
      'assets/icons-i.js',
      'assets/shared-s.js',
    ]);
  });

  it('throws when a module of the screen is missing from the manifest', () => {
    for (const [screen, source] of [
      ['loginPage', LOGIN_PAGE_SOURCE],
      ['login', APP_SOURCE],
      ['login', TEXTS_RU_SOURCE],
      ['login', LOGIN_SCREEN_SOURCE],
      ['dashboard', APP_SOURCE],
      ['dashboard', TEXTS_RU_SOURCE],
      ['dashboard', SHELL_SOURCE],
      ['dashboard', DASHBOARD_SOURCE],
      ['chat', APP_SOURCE],
      ['chat', TEXTS_RU_SOURCE],
      ['chat', SCREEN_SOURCES.chat],
      ['paymentStatus', SCREEN_SOURCES.paymentStatus],
    ] as const) {
      const manifest = fakeManifest();
      delete manifest[source];
      expect(() => screenPreloads(manifest, screen), `${screen} without ${source}`).toThrow(source);
    }
  });

  it('needs only the modules of the screen asked for', () => {
    const withoutChat = fakeManifest();
    delete withoutChat[SCREEN_SOURCES.chat];
    expect(screenPreloads(withoutChat, 'login')).toEqual(LOGIN_PRELOADS);
    expect(screenPreloads(withoutChat, 'loginPage')).toEqual(LOGIN_PAGE_PRELOADS);
    // The login page on its own needs none of the app.
    const withoutApp = fakeManifest();
    for (const source of [APP_SOURCE, TEXTS_RU_SOURCE, LOGIN_SCREEN_SOURCE, SHELL_SOURCE]) delete withoutApp[source];
    expect(screenPreloads(withoutApp, 'loginPage')).toEqual(LOGIN_PAGE_PRELOADS);
    // And the app none of the login page.
    const withoutLoginPage = fakeManifest();
    delete withoutLoginPage[LOGIN_PAGE_SOURCE];
    expect(screenPreloads(withoutLoginPage, 'login')).toEqual(LOGIN_PRELOADS);
    expect(screenPreloads(withoutLoginPage, 'dashboard')).toEqual(DASHBOARD_PRELOADS);
  });
});

const INDEX =
  '<!doctype html><html lang="ru"><head><title>ImageGen Studio</title>' +
  '<script type="module" crossorigin src="/assets/index-e.js"></script>' +
  '<link rel="modulepreload" crossorigin href="/assets/vendor-v.js"></head>' +
  '<body><div id="root"></div></body></html>';
const MARK = `<meta name="${SESSION_HINT_META}" content="present" />`;
/** With a session cookie the page also asks for the current user early. */
const USER_PRELOAD = '<link rel="preload" href="/auth/me" as="fetch" crossorigin="use-credentials">';

const links = (files: string[]) =>
  files.map((file) => `<link rel="modulepreload" crossorigin href="/${file}">`).join('');
const withLinks = (files: string[]) => INDEX.replace('</head>', `${links(files)}</head>`);
const withMark = (html: string) => html.replace('</head>', `${USER_PRELOAD}${MARK}</head>`);

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

  it("preloads the login page's code, unmarked, before </head> for /login without a session", () => {
    const html = textOf(pages, '/login', false);
    const link = '<link rel="modulepreload" crossorigin href="/assets/login-page-q.js">';
    expect(html).toContain(link);
    expect(html.indexOf(link)).toBeLessThan(html.indexOf('</head>'));
    expect(html).toBe(withLinks(LOGIN_PAGE_PRELOADS));
    // None of the app: the login page runs on its own.
    for (const file of ['app-a.js', 'texts.ru-t.js', 'LoginScreen-x.js', 'AppShell-h.js']) {
      expect(html, file).not.toContain(file);
    }
    // The entry's own preloads are not repeated.
    expect(html.split('vendor-v.js')).toHaveLength(2);
    expect(html).not.toContain(SESSION_HINT_META);
    // No session cookie: nobody to ask the server about.
    expect(html).not.toContain('/auth/me');
    expect(textOf(pages, '/login/', false)).toBe(html);
  });

  it('sends brotli and gzip copies of the same page', () => {
    for (const [pathname, hasSession] of [
      ['/login', false],
      ['/', false],
      ['/dashboard', false],
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

  it('marks the page and preloads the app, its texts, the shell and the dashboard for a visitor with a session', () => {
    const html = textOf(pages, '/dashboard', true);
    expect(html).toContain(`<meta name="${SESSION_HINT_META}"`);
    expect(html).toBe(withMark(withLinks(DASHBOARD_PRELOADS)));
    expect(textOf(pages, '/', true)).toBe(html);
    expect(textOf(pages, '/login', true)).toBe(html);
    expect(textOf(pages, '/login/', true)).toBe(html);
    expect(html).not.toContain('login-page-q.js');
    expect(html).not.toContain('LoginScreen-x.js');
  });

  it("preloads the app, its texts and the app's login screen, unmarked, for any other page without a session", () => {
    for (const pathname of [
      '/',
      '/dashboard',
      '/chat/abc',
      '/gallery',
      '/billing',
      '/payment-status',
      '/portrait-creator',
    ]) {
      const html = textOf(pages, pathname, false);
      expect(html, pathname).toBe(withLinks(LOGIN_PRELOADS));
      expect(html, pathname).not.toContain(SESSION_HINT_META);
      expect(html, pathname).not.toContain('AppShell-h.js');
      expect(html, pathname).not.toContain('login-page-q.js');
    }
    expect(textOf(pages, '/', false)).not.toBe(textOf(pages, '/login', false));
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
    for (const pathname of ['/', '/login', '/login/', '/dashboard', '/chat/abc', '/nope']) {
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

  it.each([
    SCREEN_SOURCES.billing,
    LOGIN_PAGE_SOURCE,
    APP_SOURCE,
    TEXTS_RU_SOURCE,
    LOGIN_SCREEN_SOURCE,
    SHELL_SOURCE,
    DASHBOARD_SOURCE,
  ])('refuses, when it starts, a manifest that lacks %s', (source) => {
    const manifest = fakeManifest();
    delete manifest[source];
    expect(() => readPages(buildDir({ index: INDEX, manifest }))).toThrow(source);
  });
});
