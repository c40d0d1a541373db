import type { RegenerateSearch } from './gallery';
import { gallerySearchOf } from './gallery-search';
import { NEGATIVE_PROMPT_MAX_LENGTH, PROMPT_MAX_LENGTH } from './image-catalogue';

/**
 * SPEC section 2: the app's screens, the one list that the router (src/ui/router.tsx), its
 * preloads, the server's page answers (server/http/pages.ts, server/http/web.ts) and the
 * header's tabs (navTabs below) read. A new screen is an entry here and its screen module:
 * the router's maps of screens and of routes are typed by this list, so the compiler asks
 * for the screen's lazy import and its route there, and the route takes its place in the
 * tree from here.
 *
 * - `path`: the address (one trailing slash allowed, as everywhere in the SPA);
 * - `param`: a child path segment the same screen answers (`/chat/{conversationId}`);
 * - `access`: `public` for /login, `protected` for what only a signed-in visitor sees;
 * - `source`: the screen's module, as the build's manifest names it;
 * - `nav`: the header tab's text key, in the order of the tabs;
 * - `search`: what the page keeps of its query string (SPEC's values are text).
 */
export const screens = {
  login: {
    path: '/login',
    access: 'public',
    source: 'src/ui/login/LoginScreen.tsx',
    search: loginSearchOf,
  },
  dashboard: {
    path: '/dashboard',
    access: 'protected',
    source: 'src/ui/dashboard/DashboardScreen.tsx',
    nav: 'nav.dashboard',
    search: dashboardSearchOf,
  },
  portrait: {
    path: '/portrait-creator',
    access: 'protected',
    source: 'src/ui/portrait/PortraitScreen.tsx',
    nav: 'nav.portrait',
  },
  gallery: {
    path: '/gallery',
    access: 'protected',
    source: 'src/ui/gallery/GalleryScreen.tsx',
    nav: 'nav.gallery',
    search: gallerySearchOfAddress,
  },
  chat: {
    path: '/chat',
    param: '$conversationId',
    access: 'protected',
    source: 'src/ui/chat/ChatScreen.tsx',
    nav: 'nav.chat',
  },
  billing: {
    path: '/billing',
    access: 'protected',
    source: 'src/ui/billing/BillingScreen.tsx',
    nav: 'nav.billing',
  },
  paymentStatus: {
    path: '/payment-status',
    access: 'protected',
    source: 'src/ui/payment-status/PaymentStatusScreen.tsx',
    search: paymentStatusSearchOf,
  },
} as const satisfies Record<string, ScreenRoute>;

interface ScreenRoute {
  path: `/${string}`;
  param?: `$${string}`;
  access: 'public' | 'protected';
  source: `src/ui/${string}.tsx`;
  nav?: `nav.${string}`;
  search?: (search: Record<string, unknown>) => object;
}

export type ScreenName = keyof typeof screens;
export type ProtectedScreenName = {
  [N in ScreenName]: (typeof screens)[N]['access'] extends 'protected' ? N : never;
}[ScreenName];

export const screenNames = Object.keys(screens) as ScreenName[];

/** The screens inside the app's shell, for signed-in visitors only. */
export const protectedScreenNames = screenNames.filter(
  (name): name is ProtectedScreenName => screens[name].access === 'protected',
);

const escaped = (path: string) => path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** A screen's pathname pattern: its path, its parameter's segment if it has one, one trailing slash. */
function patternOf(route: ScreenRoute): RegExp {
  return new RegExp(`^${escaped(route.path)}${route.param ? '(?:/[^/]+)?' : ''}/?$`);
}

const screenPatterns = screenNames.map((name) => [name, patternOf(screens[name])] as const);

/** The screen a pathname shows, if any. */
export function screenOfPath(pathname: string): ScreenName | undefined {
  return screenPatterns.find(([, pattern]) => pattern.test(pathname))?.[0];
}

/** Every page the SPA answers, for the server's history fallback. */
export const spaRoutePatterns: readonly RegExp[] = [
  // Pages of no screen of their own: / leads to one; the statechart viewer is development's.
  /^\/$/,
  /^\/dev\/statecharts\/?$/,
  ...screenPatterns.map(([, pattern]) => pattern),
];

type NavScreenName = { [N in ScreenName]: (typeof screens)[N] extends { nav: string } ? N : never }[ScreenName];

/** The header's tabs (SPEC section 2), in the order of the list. */
export const navTabs = screenNames.flatMap((name) => {
  const route: ScreenRoute = screens[name];
  return route.nav ? [{ screen: name, to: route.path, label: route.nav }] : [];
}) as Array<{
  screen: NavScreenName;
  to: (typeof screens)[NavScreenName]['path'];
  label: (typeof screens)[NavScreenName]['nav'];
}>;

/**
 * A query string as the address holds it: every value stays text (`?prompt=12345` is the
 * prompt "12345", `?paymentId=007` keeps its zeros). The first of repeated keys wins.
 * Route schemas turn the values they want as numbers into numbers themselves.
 */
export function parseSearchText(searchStr: string): Record<string, string> {
  const search: Record<string, string> = {};
  for (const [key, value] of new URLSearchParams(searchStr.startsWith('?') ? searchStr.slice(1) : searchStr)) {
    if (!Object.hasOwn(search, key)) search[key] = value;
  }
  return search;
}

/**
 * The inverse of {@link parseSearchText}: text as it is (no quotes around text that
 * looks like a number), numbers and booleans as written, undefined and null left out.
 */
export function stringifySearchText(search: Record<string, unknown>): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(search)) {
    if (value === undefined || value === null) continue;
    if (typeof value === 'string') params.set(key, value);
    else if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') {
      params.set(key, String(value));
    } else params.set(key, JSON.stringify(value));
  }
  const text = params.toString();
  return text ? `?${text}` : '';
}

/**
 * The search values a route keeps: each named key whose value is text (values arrive as
 * text, parseSearchText) of at most its length. Anything else is left out, as if the
 * address had not named it.
 */
export function textSearch<K extends string>(
  search: Record<string, unknown>,
  maxLengths: Record<K, number>,
): Partial<Record<K, string>> {
  const kept: Partial<Record<K, string>> = {};
  for (const key of Object.keys(maxLengths) as K[]) {
    const value = search[key];
    if (typeof value === 'string' && value.length <= maxLengths[key]) kept[key] = value;
  }
  return kept;
}

/** What /login keeps of its address: the page to come back to and a failed sign-in's reason. */
export function loginSearchOf(search: Record<string, unknown>): { redirect?: string; error?: string } {
  return textSearch(search, { redirect: Infinity, error: Infinity });
}

/**
 * /dashboard's query (Regenerate carries an image's parameters, src/domain/gallery.ts
 * regenerateSearch), kept as text: the prompts up to their longest, the rest short.
 */
export function dashboardSearchOf(search: Record<string, unknown>): Partial<RegenerateSearch> {
  return textSearch(search, {
    prompt: PROMPT_MAX_LENGTH,
    model: 40,
    size: 40,
    aspectRatio: 40,
    stylePreset: 40,
    negativePrompt: NEGATIVE_PROMPT_MAX_LENGTH,
    variant: 40,
    seed: 20,
  });
}

/** What /payment-status keeps of its address (SPEC section 2: paymentId and status). */
export function paymentStatusSearchOf(search: Record<string, unknown>): { paymentId?: string; status?: string } {
  return textSearch(search, { paymentId: Infinity, status: Infinity });
}

/**
 * What /gallery keeps of its address. The router hands a route its parent's raw query
 * merged under what this returns: a page or size that is not one is named here as absent,
 * else ?page=abc reached the server.
 */
export function gallerySearchOfAddress(search: Record<string, unknown>): ReturnType<typeof gallerySearchOf> {
  return { page: undefined, limit: undefined, ...gallerySearchOf(search) };
}
