import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { currentUserEndpoint } from '../../src/domain/api/auth';
import { screenNames, screenOfPath, screens, type ScreenName } from '../../src/domain/routes';
import { withSessionHint } from '../../src/domain/session-hint';

/**
 * The SPA's page, one copy per screen it opens with. Each copy names, as modulepreload
 * links, the code of the screen (and of the shell around it) beside the entry's own, so
 * the browser fetches it at once instead of after the entry has run and asked for it:
 * one round trip less before the first screen. The file names come from the build's
 * manifest (dist/.vite/manifest.json, see vite.config.ts); without one, every page is the
 * plain index.html.
 */

/** Vite's build manifest: source module -> its chunk and the chunks it imports. */
type Manifest = Record<string, { file: string; imports?: string[]; isEntry?: boolean }>;

const APP = ['src/app.tsx', 'src/i18n/texts.ru.ts'] as const;
const SHELL = [...APP, 'src/ui/shell/AppShell.tsx'] as const;

/**
 * The source modules a page's first screen needs beyond the entry's own: src/main.tsx
 * starts either the login page alone (login-page.tsx, for /login without a session) or
 * the app (app.tsx, which loads every text of the page's language: the Russian ones, the
 * default, are preloaded), whose router loads each screen (src/domain/routes.ts names its
 * module) lazily, and a protected one inside the shell.
 */
export type Screen = 'loginPage' | ScreenName;

const SCREENS = new Map<Screen, readonly string[]>([
  ['loginPage', ['src/login-page.tsx']],
  ...screenNames.map(
    (name) => [name, [...(screens[name].access === 'protected' ? SHELL : APP), screens[name].source]] as const,
  ),
]);

/**
 * The screen a page opens with. /login without a session cookie is the login page on its
 * own; every other page is the app, where without a session cookie every protected page
 * shows the login screen (the router's guard sends it there), and with one / and /login
 * go on to the dashboard. Pages of no screen (the not-found view, development pages)
 * preload only what the entry itself names.
 */
export function openingScreen(pathname: string, hasSession: boolean): Screen | undefined {
  if (pathname === '/') return hasSession ? 'dashboard' : 'login';
  // One trailing slash, as the SPA's routes allow (src/domain/routes.ts).
  const screen = screenOfPath(pathname);
  if (screen === 'login') return hasSession ? 'dashboard' : 'loginPage';
  if (!screen) return undefined;
  return hasSession ? screen : 'login';
}

/** The chunks a module needs, itself first, then what it imports (each once). */
function chunksOf(manifest: Manifest, key: string, seen = new Set<string>()): string[] {
  if (seen.has(key)) return [];
  seen.add(key);
  const entry = manifest[key];
  if (!entry) return [];
  return [entry.file, ...(entry.imports ?? []).flatMap((imported) => chunksOf(manifest, imported, seen))];
}

/** The modulepreload links of a screen's code that the entry does not already preload. */
export function screenPreloads(manifest: Manifest, screen: Screen): string[] {
  const entryKey = Object.keys(manifest).find((key) => manifest[key]?.isEntry);
  const loadedByEntry = new Set(entryKey ? chunksOf(manifest, entryKey) : []);
  const files = new Set<string>();
  for (const source of SCREENS.get(screen) ?? []) {
    if (!manifest[source]) throw new Error(`the build's manifest has no ${source}`);
    for (const file of chunksOf(manifest, source)) if (!loadedByEntry.has(file)) files.add(file);
  }
  return [...files];
}

/**
 * A visitor with a session cookie: the page asks for the current user while its code is
 * still arriving, instead of after it has run (the session statechart's fetch, with the
 * same credentials, takes the answer from the preload).
 */
function withUserPreload(html: string): string {
  return html.replace(
    '</head>',
    `<link rel="preload" href="${currentUserEndpoint.path}" as="fetch" crossorigin="use-credentials"></head>`,
  );
}

export interface Encoded {
  identity: Buffer;
  br: Buffer;
  gzip: Buffer;
}

function encoded(html: string): Encoded {
  const identity = Buffer.from(html);
  return {
    identity,
    br: zlib.brotliCompressSync(identity, {
      params: { [zlib.constants.BROTLI_PARAM_QUALITY]: zlib.constants.BROTLI_MAX_QUALITY },
    }),
    gzip: zlib.gzipSync(identity, { level: zlib.constants.Z_BEST_COMPRESSION }),
  };
}

export interface Pages {
  /** The page for a path, as sent to a visitor with or without a session cookie. */
  pageFor(pathname: string, hasSession: boolean): Encoded;
}

/**
 * Reads index.html and the manifest once at start and makes every copy then, each
 * compressed once (brotli and gzip at their highest levels); a visitor who sent a session
 * cookie gets the copy marked for it (src/domain/session-hint.ts).
 */
export function readPages(webDir: string): Pages | undefined {
  const indexFile = path.join(webDir, 'index.html');
  if (!fs.existsSync(indexFile)) return undefined;
  const index = fs.readFileSync(indexFile, 'utf8');
  const manifestFile = path.join(webDir, '.vite', 'manifest.json');
  const manifest: Manifest | undefined = fs.existsSync(manifestFile)
    ? (JSON.parse(fs.readFileSync(manifestFile, 'utf8')) as Manifest)
    : undefined;

  const withPreloads = (html: string, screen: Screen | undefined) => {
    if (!manifest || !screen) return html;
    const links = screenPreloads(manifest, screen)
      .map((file) => `<link rel="modulepreload" crossorigin href="/${file}">`)
      .join('');
    return html.replace('</head>', `${links}</head>`);
  };
  // Every copy is made now, so no request waits for a compression.
  const keyOf = (screen: Screen | undefined, hasSession: boolean) => `${screen ?? ''}:${hasSession}`;
  const pages = new Map<string, Encoded>();
  for (const hasSession of [false, true]) {
    for (const screen of [undefined, ...SCREENS.keys()]) {
      const html = withPreloads(index, screen);
      pages.set(keyOf(screen, hasSession), encoded(hasSession ? withSessionHint(withUserPreload(html)) : html));
    }
  }
  return {
    pageFor: (pathname, hasSession) => pages.get(keyOf(openingScreen(pathname, hasSession), hasSession))!,
  };
}
