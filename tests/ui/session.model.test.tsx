// One file: one chart's walk: its table of what each state shows (SPEC) and the steps that drive it
// read side by side.
import { screen, within } from '@testing-library/react';
import { beforeAll, expect, vi } from 'vitest';
import type { AnyEventObject, AnyMachineSnapshot } from 'xstate';
import { ApiError } from '../../src/api/client';
import type { User } from '../../src/domain/user';
import type { Language } from '../../src/i18n';
import { sessionMachine, type SessionContext } from '../../src/machines/session';
import { openApp, signedInUser, type OpenApp } from './support/app';
import { apiError, FakeApi, json, type Reply } from './support/fake-api';
import {
  answers,
  describeInvariants,
  describeScreenModel,
  replyOf,
  type Reached,
  type ScreenModel,
} from './support/model';

/*
 * The session (SPEC sections 2 and 4, the calls of section 7) walked along its statechart
 * on the whole app: the router's guards, the full-screen spinner, the header, the login
 * screen and the browser leaving for Google. What is expected comes from SPEC and is
 * written here by hand; the Russian wording is the product's, written out literally.
 */

// A path walks the whole app through many steps: more than vitest's default 5 s on a busy machine.
vi.setConfig({ testTimeout: 30_000 });
// The screens' code is split (src/ui/router.tsx); compiling it on first use can take longer
// than a row's 2 s on a busy machine, so the first path would see the route's spinner.
beforeAll(async () => {
  await Promise.all([
    import('../../src/ui/shell/AppShell'),
    import('../../src/ui/login/LoginScreen'),
    import('../../src/ui/dashboard/DashboardScreen'),
  ]);
}, 60_000);

/** The protected page the visitor opens: a query makes the remembered page tell from the default. */
const ENTRY = '/dashboard?prompt=fox';
/** SPEC section 2's public addresses: / and /login. */
const PUBLIC_ENTRIES = ['/login', '/'] as const;
const isProtected = (entry: string) => !(PUBLIC_ENTRIES as readonly string[]).includes(entry);
const GENERATE = '/api/stability/text-to-image';
/** SPEC section 9: the default model (original) costs 2 tokens. */
const COST = 2;

/** GET /auth/me on opening: SPEC section 3's user, no avatar (the header shows a letter). */
const USER: User = signedInUser({ email: 'anna@example.com', avatar: null, tokensAmount: 50 });
/** GET /auth/me when the user is refreshed: tokens bought meanwhile, and a Google avatar. */
const REFRESHED: User = { ...USER, tokensAmount: 120, avatar: 'https://lh3.googleusercontent.com/a/anna.png' };
const NOT_SIGNED_IN = apiError(401, 'UNAUTHORIZED', 'Unauthorized access');
const SERVER_DOWN = apiError(500, 'INTERNAL', 'Internal server error');

/** SPEC section 3 "Image", as a generation returns it (section 7: success, data, tokens.charged, message). */
const IMAGE = {
  id: 11,
  fileName: '0123456789abcdef0123456789abcdef.png',
  originalName: null,
  imageUrl: 'http://localhost/images/0123456789abcdef0123456789abcdef.png',
  prompt: 'fox',
  width: 1024,
  height: 1024,
  steps: null,
  cfgScale: null,
  stylePreset: null,
  size: '1024x1024',
  fileSize: 1_024_000,
  mimeType: 'image/png',
  userId: 1,
  createdAt: '2026-11-02T10:00:00.000Z',
  updatedAt: '2026-11-02T10:00:00.000Z',
  seed: 42,
  model: 'original',
  finish_reason: 'SUCCESS',
  negativePrompt: null,
  aspectRatio: null,
  modelVariant: null,
  thumbnailUrl: 'http://localhost/images/0123456789abcdef0123456789abcdef.png',
};
/** The server states the balance after the charge (another tab spent the rest meanwhile). */
const STATED_BALANCE = 1;
const CHARGED_WITH_BALANCE = {
  success: true,
  data: IMAGE,
  tokens: { charged: COST },
  balanceAfter: STATED_BALANCE,
  message: 'ok',
};
/** Only tokens.charged: SPEC section 4, the balance is reduced by the charged amount. */
const CHARGED = { success: true, data: IMAGE, tokens: { charged: COST }, message: 'ok' };

const apiErrorOf = (reply: Reply) => {
  const body = reply.body as { code: string; message: string };
  return new ApiError(body.message, reply.status ?? 500, body.code, body);
};

const plural = (lang: Language, n: number, forms: Record<string, string>) =>
  forms[new Intl.PluralRules(lang).select(n)] ?? forms.other!;

/** SPEC section 2 in English; the ru locale files (common.ru.ts) written out. */
const TEXT = {
  en: {
    loading: 'Loading…',
    tabs: ['AI Generator', 'Portrait Creator', 'Your Gallery', 'AI Chat', 'Billing'],
    logout: 'Logout',
    menu: 'Menu',
    language: 'Language: English, EN',
    languageCode: 'EN',
    tokens: (n: number) => `${n} ${n === 1 ? 'token' : 'tokens'}`,
    title: 'Create images with AI',
    signIn: 'Sign in with Google',
    signUp: 'Sign up with Google',
    redirecting: 'Taking you to sign-in…',
    sessionEnded: 'Your session has ended. Sign in again to continue where you were.',
    features: ['AI-powered', 'Multiple styles', 'High quality'],
    prompt: 'Prompt',
    generating: 'Generating…',
  },
  ru: {
    loading: 'Загрузка…',
    tabs: ['AI-генератор', 'Портреты', 'Ваша галерея', 'AI-чат', 'Оплата'],
    logout: 'Выйти',
    menu: 'Меню',
    language: 'Язык: Русский, RU',
    languageCode: 'RU',
    tokens: (n: number) => `${n} ${plural('ru', n, { one: 'токен', few: 'токена', other: 'токенов' })}`,
    title: 'Создавайте изображения с помощью ИИ',
    signIn: 'Войти через Google',
    signUp: 'Зарегистрироваться через Google',
    redirecting: 'Переходим к входу…',
    sessionEnded: 'Сеанс завершён. Войдите снова, чтобы продолжить с того же места.',
    features: ['На базе ИИ', 'Множество стилей', 'Высокое качество'],
    prompt: 'Промпт',
    generating: 'Генерация…',
  },
};
const TAB_PATHS = ['/dashboard', '/portrait-creator', '/gallery', '/chat', '/billing'];

/** The app (its `assigned` watches the sign-in leaving for the server by `location.assign`). */
interface SessionUi extends OpenApp {
  /** The address the app was opened at. */
  entry: string;
  /** What the session wrote to the console. */
  logged(): string[];
  origin: string;
  restore(): void;
}

/**
 * What SPEC says the visitor has, from what happened: the oracle the rows read.
 * `phase` follows SPEC section 4 (loading, signed in, signed out, leaving for sign-in).
 */
interface Facts {
  phase: 'loading' | 'in' | 'out' | 'leaving';
  user: { email: string; avatar: string | null; balance: number } | null;
  /** The address the app shows. */
  address: string;
  /** The page the login remembers (SPEC section 2), if any. */
  remembered: string | null;
  /** Where the browser was sent for sign-in. */
  signIn: string | null;
  logoutCalled: boolean;
  /** The server ended the session while the user worked: the login says so (#26). */
  expired: boolean;
  /** Failures of the auth check, a refresh or the logout, in order: SPEC 4/8, only logged. */
  logged: Array<'auth check' | 'user refresh' | 'logout'>;
}

const loginAddress = (remembered: string | null) =>
  remembered === null ? '/login' : `/login?${new URLSearchParams({ redirect: remembered }).toString()}`;

function factsOf(events: readonly AnyEventObject[], entry: string): Facts {
  const f: Facts = {
    phase: 'loading',
    user: null,
    address: entry,
    remembered: null,
    signIn: null,
    logoutCalled: false,
    expired: false,
    logged: [],
  };
  // Whether the server logout is still answering (SPEC: the user is already signed out).
  let loggingOut = false;
  for (const event of events) {
    const signedIn = f.phase === 'in';
    switch (event.type) {
      case 'LOGIN':
        // The sign-in buttons are on /login only; a click while the server logout is still
        // answering is not acted on (SPEC says nothing of that moment; see the report).
        if (f.phase === 'out' && !loggingOut) {
          f.phase = 'leaving';
          f.expired = false;
          f.signIn = f.remembered ?? '/dashboard';
        }
        break;
      case 'LOGOUT':
        // SPEC 2/4: logout clears the session, calls the server and goes to /login.
        if (signedIn) {
          f.phase = 'out';
          f.user = null;
          f.address = '/login';
          f.remembered = null;
          f.logoutCalled = true;
          loggingOut = true;
        }
        break;
      case 'SESSION.EXPIRED':
        // Any 401 ends the session; SPEC 2's guard sends the visitor on a protected page to
        // /login remembering the page.
        if (signedIn) {
          f.phase = 'out';
          f.user = null;
          f.remembered = f.address;
          f.address = loginAddress(f.remembered);
          f.expired = true;
        }
        break;
      case 'BALANCE.CHANGED':
        if (signedIn) f.user!.balance = (event as unknown as { balance: number }).balance;
        break;
      case 'BALANCE.CHARGED':
        if (signedIn) f.user!.balance = Math.max(0, f.user!.balance - (event as unknown as { amount: number }).amount);
        break;
      case 'USER.REFRESH':
        break;
      default: {
        const reply = replyOf<Reply>(event);
        const failed = event.type.startsWith('xstate.error.');
        if (failed) f.logged.push(loggingOut ? 'logout' : f.phase === 'loading' ? 'auth check' : 'user refresh');
        if (loggingOut) {
          // The server logout answered (its failure only logged): nothing to see.
          loggingOut = false;
        } else if (event.type.startsWith('xstate.done.')) {
          const user = (reply.body as { data: User }).data;
          f.user = { email: user.email, avatar: user.avatar, balance: user.tokensAmount };
          // SPEC 2: / and /login send a signed-in user to /dashboard; a protected page stays.
          if (f.phase === 'loading' && !isProtected(entry)) f.address = '/dashboard';
          f.phase = 'in';
        } else if (f.phase === 'loading') {
          // SPEC 2: a visitor on a protected page goes to /login, the page remembered; / and
          // /login lead to /login.
          f.phase = 'out';
          f.remembered = isProtected(entry) ? entry : null;
          f.address = loginAddress(f.remembered);
        }
        // A failed refresh is only logged: nothing changes.
      }
    }
  }
  return f;
}

const loginButtons = () => [screen.queryByTestId('google-sign-in'), screen.queryByTestId('google-sign-up')];
const submit = () => screen.getByTestId<HTMLButtonElement>('generate');

/** SPEC section 2: the header of every protected screen. */
function headerShows(ui: SessionUi, reached: Reached) {
  const f = factsOf(reached.events, ui.entry);
  const text = TEXT[reached.lang];
  expect(ui.location()).toBe(f.address);
  expect(screen.queryByTestId('app-loading')).toBeNull();
  // The app's header (a screen may have a heading block of its own).
  const header = screen.getAllByRole('banner').find((b) => within(b).queryByTestId('token-balance'))!;
  expect(header).toBeTruthy();
  const switcher = within(header).getByTestId('language-switcher');
  expect(switcher.getAttribute('aria-label')).toBe(text.language);
  expect(switcher.textContent).toBe(text.languageCode);
  expect(within(header).getByTestId('token-balance').textContent).toBe(text.tokens(f.user!.balance));
  if (f.user!.avatar) {
    expect(within(header).getByRole('img', { name: f.user!.email }).getAttribute('src')).toBe(f.user!.avatar);
    expect(within(header).queryByTestId('avatar-letter')).toBeNull();
  } else {
    // The first letter of the e-mail (shown as a capital).
    expect(within(header).getByTestId('avatar-letter').textContent?.toUpperCase()).toBe(
      f.user!.email[0]!.toUpperCase(),
    );
  }
  expect(within(header).getByTestId('logout').textContent).toBe(text.logout);
  // A mobile menu exists.
  expect(within(header).getByRole('button', { name: text.menu })).toBeTruthy();
  const tabs = within(within(header).getByRole('navigation')).getAllByRole('link');
  expect(tabs.map((a) => a.textContent)).toEqual(text.tabs);
  expect(tabs.map((a) => a.getAttribute('href'))).toEqual(TAB_PATHS);
  expect(loginButtons()).toEqual([null, null]);
  expect(ui.assigned).not.toHaveBeenCalled();
  // A failed refresh is not shown (SPEC 8: only logged).
  expect(screen.queryByRole('alert')).toBeNull();
}

/** SPEC section 2 "Login": Google sign-in, a sign-up button doing the same, the features blurb. */
function loginShows(ui: SessionUi, reached: Reached, leaving: boolean): Facts {
  const f = factsOf(reached.events, ui.entry);
  const text = TEXT[reached.lang];
  expect(ui.location()).toBe(f.address);
  // The guard replaces the history entry: no way back to the protected page.
  expect(ui.app.router.history.length).toBe(1);
  expect(screen.queryByTestId('app-loading')).toBeNull();
  expect(screen.queryByRole('banner')).toBeNull();
  expect(screen.queryByTestId('token-balance')).toBeNull();
  expect(screen.queryByTestId('logout')).toBeNull();
  expect(screen.getByRole('heading', { level: 1 }).textContent).toBe(text.title);
  expect(screen.getAllByRole('heading', { level: 2 }).map((h) => h.textContent)).toEqual(text.features);
  const [signIn, signUp] = loginButtons() as [HTMLButtonElement, HTMLButtonElement];
  expect(signIn.textContent).toBe(leaving ? text.redirecting : text.signIn);
  expect(signUp.textContent).toBe(text.signUp);
  expect(signIn.disabled).toBe(leaving);
  expect(signUp.disabled).toBe(leaving);
  expect(ui.api.sent('POST', '/auth/logout').length).toBe(f.logoutCalled ? 1 : 0);
  // A failed auth check or logout is not shown (SPEC 4/8: only logged).
  expect(screen.queryByRole('alert')).toBeNull();
  // #26: a session the server ended is said so (not an error: a status note).
  expect(screen.queryByTestId('session-ended')?.textContent ?? null).toBe(f.expired ? text.sessionEnded : null);
  if (!leaving) expect(ui.assigned).not.toHaveBeenCalled();
  return f;
}

/**
 * SPEC section 7: the browser goes to /auth/google with successRedirect (the remembered
 * page, else /dashboard: SPEC 2) and failureRedirect (back to /login).
 */
function sentToGoogle(ui: SessionUi, reached: Reached) {
  const f = factsOf(reached.events, ui.entry);
  expect(ui.assigned).toHaveBeenCalledTimes(1);
  const url = new URL(ui.assigned.mock.calls[0]![0], ui.origin);
  expect(url.pathname).toBe('/auth/google');
  expect([...url.searchParams.keys()].sort()).toEqual(['failureRedirect', 'successRedirect']);
  expect(url.searchParams.get('successRedirect')).toBe(`${ui.origin}${f.signIn}`);
  const failure = new URL(url.searchParams.get('failureRedirect')!);
  expect(failure.origin + failure.pathname).toBe(`${ui.origin}/login`);
}

/** A generation on the dashboard, answered at once: how a person makes the balance change. */
async function generate(ui: SessionUi, lang: Language, reply: Reply) {
  ui.api.on('POST', GENERATE, reply);
  // The screen shows a step after the header (src/ui/common/Deferred.tsx).
  const prompt = await screen.findByRole<HTMLTextAreaElement>(
    'textbox',
    { name: TEXT[lang].prompt },
    { timeout: 10_000 },
  );
  if (!prompt.value.trim()) await ui.user.type(prompt, 'fox');
  const sent = ui.api.sent('POST', GENERATE).length;
  await ui.user.click(submit());
  await expect.poll(() => ui.api.sent('POST', GENERATE).length).toBe(sent + 1);
}

/**
 * The session model opened at `entry`. `gestures: 'all'` samples every event in every
 * state; 'entry' only what differs with the address opened (the first answer, sign-in,
 * logout, a refresh, the session ending), so the public addresses' suites stay short.
 */
export function sessionModel(entry: string, gestures: 'all' | 'entry'): ScreenModel<SessionUi> {
  const sampled = (snapshot: AnyMachineSnapshot): AnyEventObject[] => {
    const all = events(snapshot);
    if (gestures === 'all') return all;
    return all.filter(
      (e) =>
        !['BALANCE.CHANGED', 'BALANCE.CHARGED'].includes(e.type) &&
        ((e as { via?: string }).via === undefined || ['sign-in', 'header'].includes((e as { via?: string }).via!)),
    );
  };
  return {
    machine: sessionMachine,
    events: sampled,
    serializeState,
    edgeKey,
    maxSteps: 16,
    open: (lang: Language) => openSession(entry, lang),
    close: (ui: SessionUi) => {
      ui.close();
      ui.restore();
    },
    perform,
    sees,
    always: {
      says: 'SPEC 4/8: a failed auth check, refresh or logout is only logged (one line each); nothing strays',
      check: (ui: SessionUi, reached: Reached) => {
        const logged = factsOf(reached.events, ui.entry).logged;
        expect(ui.logged()).toHaveLength(logged.length);
        // Each line names what failed (the app's own words for the operator).
        ui.logged().forEach((line, i) => expect(line.startsWith(`[session] ${logged[i]}`), line).toBe(true));
        expect(ui.api.strays()).toEqual([]);
      },
    },
  };
}

function events(snapshot: AnyMachineSnapshot): AnyEventObject[] {
  const user = (snapshot.context as SessionContext).user;
  // Signed in, the balance is changed by generating, which needs the model's cost.
  const canGenerate = user === null || user.tokensAmount >= COST;
  const refreshing = snapshot.matches({ authenticated: 'refreshing' });
  return [
    { type: 'LOGIN', returnTo: '(the remembered page)', via: 'sign-in' },
    { type: 'LOGIN', returnTo: '(the remembered page)', via: 'sign-up' },
    { type: 'LOGOUT', via: 'header' },
    { type: 'LOGOUT', via: 'mobile-menu' },
    { type: 'USER.REFRESH' },
    ...(canGenerate || refreshing ? [{ type: 'SESSION.EXPIRED' }] : []),
    ...(canGenerate
      ? [
          { type: 'BALANCE.CHANGED', balance: STATED_BALANCE },
          { type: 'BALANCE.CHARGED', amount: COST },
        ]
      : []),
    ...(refreshing
      ? [
          ...answers(snapshot, 'fetchUser', { output: REFRESHED }, json({ success: true, data: REFRESHED })),
          ...answers(snapshot, 'fetchUser', { error: apiErrorOf(SERVER_DOWN) }, SERVER_DOWN),
        ]
      : [
          ...answers(snapshot, 'fetchUser', { output: USER }, json({ success: true, data: USER })),
          ...answers(snapshot, 'fetchUser', { error: apiErrorOf(NOT_SIGNED_IN) }, NOT_SIGNED_IN),
        ]),
    ...answers(snapshot, 'logout', { output: undefined }, json({ success: true })),
    ...answers(snapshot, 'logout', { error: apiErrorOf(SERVER_DOWN) }, SERVER_DOWN),
  ];
}

function serializeState(snapshot: AnyMachineSnapshot): string {
  const user = (snapshot.context as SessionContext).user;
  return JSON.stringify([
    snapshot.value,
    user === null ? null : user.tokensAmount >= COST ? 'enough' : 'short',
    user?.avatar ? 'avatar' : 'letter',
  ]);
}

/** The two sign-in buttons and the two logouts are each a transition of their own. */
function edgeKey(before: AnyMachineSnapshot, event: AnyEventObject, after: AnyMachineSnapshot): string {
  return JSON.stringify([
    before.value,
    event.type.replace(/^(xstate\.(done|error)\.actor)\..*$/, '$1'),
    after.value,
    (event as { via?: string }).via ?? null,
  ]);
}

async function openSession(entry: string, lang: Language): Promise<SessionUi> {
  const origin = window.location.origin;
  // SPEC: failures of the auth check and of the logout are only logged.
  const log = vi.spyOn(console, 'log').mockImplementation(() => undefined);
  const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
  const api = new FakeApi()
    .hold('GET', '/auth/me')
    .hold('POST', '/auth/logout')
    .fallback('GET', '/api/images/my-images', {
      body: {
        success: true,
        data: { images: [], pagination: { currentPage: 1, totalPages: 0, total: 0, hasNext: false, hasPrev: false } },
      },
    });
  const ui = await openApp(entry, { lang, api, user: null });
  return {
    ...ui,
    entry,
    origin,
    logged: () =>
      [...log.mock.calls, ...warn.mock.calls]
        .map((call) => String(call[0]))
        .filter((line) => line.startsWith('[session]')),
    restore: () => {
      log.mockRestore();
      warn.mockRestore();
    },
  };
}

async function perform(ui: SessionUi, event: AnyEventObject, before: AnyMachineSnapshot): Promise<void> {
  const { user, api } = ui;
  const lang = ui.lang;
  const signedIn = before.matches('authenticated');
  switch (event.type) {
    case 'LOGIN': {
      const button = screen.queryByTestId<HTMLButtonElement>(
        (event as unknown as { via: string }).via === 'sign-in' ? 'google-sign-in' : 'google-sign-up',
      );
      // Signed in or still loading: there is no login screen to click on.
      if (!button) return expect(before.matches('unauthenticated')).toBe(false);
      if (button.disabled) return expect(before.matches({ unauthenticated: 'redirecting' })).toBe(true);
      return user.click(button);
    }
    case 'LOGOUT':
      if (!signedIn) return expect(screen.queryByTestId('logout')).toBeNull();
      if ((event as unknown as { via: string }).via === 'header') return user.click(screen.getByTestId('logout'));
      await user.click(screen.getByRole('button', { name: TEXT[lang].menu }));
      return user.click(within(screen.getByRole('dialog')).getByRole('button', { name: TEXT[lang].logout }));
    case 'USER.REFRESH':
      // Its gestures live on other screens (a confirmed payment on /payment-status, a
      // cancelled subscription on /billing, a finished chat reply): sent as they send it.
      ui.app.actors.session.send({ type: 'USER.REFRESH' });
      return;
    case 'SESSION.EXPIRED':
      if (before.matches({ authenticated: 'refreshing' })) {
        // The refresh itself is answered 401: the session ended on the server.
        await api.answer('GET', '/auth/me', NOT_SIGNED_IN);
        return;
      }
      if (!signedIn) return expect(screen.queryByTestId('generate')).toBeNull();
      // Any call answered 401 ends the session (SPEC 7/8 "Unauthorized access").
      return generate(ui, lang, NOT_SIGNED_IN);
    case 'BALANCE.CHANGED':
    case 'BALANCE.CHARGED':
      if (!signedIn) return expect(screen.queryByTestId('generate')).toBeNull();
      await generate(ui, lang, json(event.type === 'BALANCE.CHANGED' ? CHARGED_WITH_BALANCE : CHARGED));
      // The generator is ready for the next one when its loader is gone.
      return void (await expect.poll(() => submit().textContent).not.toBe(TEXT[lang].generating));
    default: {
      const reply = replyOf<Reply>(event);
      if (before.matches({ unauthenticated: 'loggingOut' })) await api.answer('POST', '/auth/logout', reply);
      else await api.answer('GET', '/auth/me', reply);
    }
  }
}

const sees: ScreenModel<SessionUi>['sees'] = [
  [
    'loading',
    {
      says: 'SPEC 2/4: while the user is not yet loaded, a full-screen loading spinner and nothing else',
      check: (ui: SessionUi, reached: Reached) => {
        expect(ui.location()).toBe(ui.entry);
        const spinner = screen.getByTestId('app-loading');
        expect(within(spinner).getByRole('status').getAttribute('aria-label')).toBe(TEXT[reached.lang].loading);
        expect(screen.queryByRole('banner')).toBeNull();
        expect(loginButtons()).toEqual([null, null]);
        expect(ui.assigned).not.toHaveBeenCalled();
      },
    },
  ],
  [
    { authenticated: 'refreshing' },
    {
      says: 'SPEC 2: signed in, the header (switcher, balance, avatar, logout, tabs) stays while the user is reloaded',
      check: (ui: SessionUi, reached: Reached) => {
        headerShows(ui, reached);
        expect(ui.api.isHeld('GET', '/auth/me')).toBe(true);
      },
    },
  ],
  [
    'authenticated',
    {
      says: 'SPEC 2: the protected page with its header: language switcher, balance, avatar or e-mail letter, logout, five tabs',
      check: (ui: SessionUi, reached: Reached) => headerShows(ui, reached),
    },
  ],
  [
    { unauthenticated: 'loggingOut' },
    {
      says: 'SPEC 2/4: logout clears the session, calls POST /auth/logout and goes to /login at once',
      check: (ui: SessionUi, reached: Reached) => {
        loginShows(ui, reached, false);
        expect(ui.api.isHeld('POST', '/auth/logout')).toBe(true);
      },
    },
  ],
  [
    { unauthenticated: 'redirecting' },
    {
      says: 'SPEC 2/7: the browser goes to /auth/google with successRedirect and failureRedirect; the buttons wait',
      check: (ui: SessionUi, reached: Reached) => {
        loginShows(ui, reached, true);
        sentToGoogle(ui, reached);
      },
    },
  ],
  [
    { unauthenticated: 'expired' },
    {
      says: 'SPEC 2 and #26: the server ended the session: /login remembering the page, saying the session ended',
      check: (ui: SessionUi, reached: Reached) => {
        const f = loginShows(ui, reached, false);
        expect(f.expired).toBe(true);
        expect(f.address).toBe(loginAddress(f.remembered));
      },
    },
  ],
  [
    'unauthenticated',
    {
      says: 'SPEC 2: /login (the protected page remembered, the entry replaced); a failed check or logout only logged',
      check: (ui: SessionUi, reached: Reached) => loginShows(ui, reached, false),
    },
  ],
];

const model = sessionModel(ENTRY, 'all');

describeScreenModel('session', model);
for (const entry of PUBLIC_ENTRIES) describeScreenModel(`session opened at ${entry}`, sessionModel(entry, 'entry'));

describeInvariants('session', model, [
  {
    name: 'the user is null whenever the session is not authenticated',
    state: (snapshot) => snapshot.matches('authenticated') || (snapshot.context as SessionContext).user === null,
  },
  {
    name: 'an authenticated session always has a user',
    state: (snapshot) => !snapshot.matches('authenticated') || (snapshot.context as SessionContext).user !== null,
  },
  {
    name: 'the balance is never negative',
    state: (snapshot) => ((snapshot.context as SessionContext).user?.tokensAmount ?? 0) >= 0,
  },
  {
    name: 'the browser leaves for sign-in only from a signed-out /login',
    step: (before, event, after) =>
      before.matches({ unauthenticated: 'redirecting' }) ||
      !after.matches({ unauthenticated: 'redirecting' }) ||
      ((before.matches({ unauthenticated: 'idle' }) || before.matches({ unauthenticated: 'expired' })) &&
        event.type === 'LOGIN'),
  },
  {
    name: 'a signed-out visitor is signed in only by the current-user call',
    step: (before, event, after) =>
      before.matches('authenticated') || !after.matches('authenticated') || event.type.startsWith('xstate.done.actor'),
  },
]);
