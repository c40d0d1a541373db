import { render } from '@testing-library/react';
import userEvent, { type UserEvent } from '@testing-library/user-event';
import { createMemoryHistory } from '@tanstack/react-router';
import { vi, type Mock } from 'vitest';
import { createApp, type App } from '../../../src/app';
import type { User } from '../../../src/domain/user';
import { initI18n, LANGUAGE_STORAGE_KEY, type Language } from '../../../src/i18n';
import { FakeApi, json } from './fake-api';

/**
 * The whole app in jsdom, opened at an address: the router with its guards, the session
 * and toasts actors, the header and the screen, the real API client, and a fake of our
 * HTTP API behind `fetch`.
 */
export interface OpenApp {
  api: FakeApi;
  app: App;
  user: UserEvent;
  lang: Language;
  /** The addresses the page sent the browser to (`location.assign`: sign-in, checkout). */
  assigned: Mock<(url: string) => void>;
  /** The file names of the downloads the page started (an <a download> clicked). */
  downloads: string[];
  /** The address the app shows (path and query). */
  location(): string;
  close(): void;
}

/** A signed-in user as GET /auth/me returns it (SPEC section 3). */
export function signedInUser(overrides: Partial<User> = {}): User {
  return {
    id: 1,
    email: 'anna@example.com',
    name: 'Anna',
    avatar: null,
    createdAt: '2026-11-01T10:00:00.000Z',
    isActive: true,
    tokensAmount: 50,
    subscriptionType: 'starter',
    subscriptionStatus: 'active',
    subscriptionTokensTotal: 0,
    subscriptionTokensUsed: 0,
    nextBillingDate: null,
    trialEndsAt: null,
    ...overrides,
  };
}

let objectUrls = 0;

export async function openApp(
  path: string,
  options: { lang: Language; api?: FakeApi; user?: User | null } = { lang: 'ru' },
): Promise<OpenApp> {
  const api = options.api ?? new FakeApi();
  const user = options.user === undefined ? signedInUser() : options.user;
  api.fallback('GET', '/auth/me', () =>
    user
      ? json({ success: true, data: user })
      : json({ success: false, code: 'UNAUTHORIZED', message: 'Unauthorized access' }, 401),
  );
  api.fallback('POST', '/auth/logout', json({ success: true }));
  // The signed-in shell's job queue (issue #28): no jobs, and an event stream that stays quiet,
  // unless the suite says otherwise.
  api.fallback('GET', '/api/jobs', json({ success: true, data: { jobs: [], perUserLimit: 4 } }));
  api.quietStream('GET', '/api/events');
  globalThis.fetch = api.fetch;
  // jsdom has no object URLs; the previews only need an address.
  if (!('createObjectURL' in URL)) {
    Object.assign(URL, {
      createObjectURL: () => `blob:http://localhost/${(objectUrls += 1)}`,
      revokeObjectURL: () => undefined,
    });
  }
  localStorage.setItem(LANGUAGE_STORAGE_KEY, options.lang);
  await initI18n(options.lang);
  const downloads: string[] = [];
  const anchor = HTMLAnchorElement.prototype;
  const click = Object.getOwnPropertyDescriptor(HTMLElement.prototype, 'click')!;
  Object.defineProperty(anchor, 'click', {
    configurable: true,
    value(this: HTMLAnchorElement) {
      if (this.download) downloads.push(this.download);
      else (click.value as (this: HTMLElement) => void).call(this);
    },
  });
  // jsdom cannot leave the page: the app's location is one whose assign is watched.
  const realLocation = Object.getOwnPropertyDescriptor(globalThis, 'location')!;
  const actual = globalThis.location;
  const assigned = vi.fn<(url: string) => void>();
  const watched = {
    get href() {
      return actual.href;
    },
    get origin() {
      return actual.origin;
    },
    get pathname() {
      return actual.pathname;
    },
    get search() {
      return actual.search;
    },
    get hash() {
      return actual.hash;
    },
    assign: assigned,
    replace: vi.fn(),
    reload: vi.fn(),
  };
  Object.defineProperty(globalThis, 'location', { configurable: true, get: () => watched });
  const app = createApp(createMemoryHistory({ initialEntries: [path] }));
  render(app.element);
  return {
    api,
    app,
    // A person can pick any file in the system dialog ("All files") or drop one.
    user: userEvent.setup({ delay: null, applyAccept: false }),
    lang: options.lang,
    assigned,
    downloads,
    location: () => {
      const { pathname, searchStr } = app.router.state.location;
      return pathname + searchStr;
    },
    close: () => {
      app.stop();
      Object.defineProperty(globalThis, 'location', realLocation);
      delete (anchor as Partial<HTMLAnchorElement>).click;
    },
  };
}
