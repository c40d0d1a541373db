import { act, screen, within } from '@testing-library/react';
import { afterAll, beforeAll, expect, vi } from 'vitest';
import type { AnyEventObject, AnyMachineSnapshot } from 'xstate';
import type { Language } from '../../src/i18n';
import { toastsMachine, type Toast } from '../../src/machines/toasts';
import { openApp, type OpenApp } from './support/app';
import { FakeApi, json } from './support/fake-api';
import { describeInvariants, describeScreenModel, type Reached, type ScreenModel } from './support/model';

// A path walks the whole app through several steps: more than vitest's default 5 s on a busy machine.
vi.setConfig({ testTimeout: 30_000 });

/*
 * The notifications (SPEC section 8: "Notifications appear top-right: success green 4 s,
 * error red 5 s, warning amber 4 s, info blue 4 s"; section 9: success 4000 ms, error
 * 5000 ms, info and warning 4000 ms) walked along their statechart on the whole app at
 * /dashboard. Time is the test's: it moves only when a path lets a notification close by
 * itself, so each one's life is measured to the millisecond.
 */

type Kind = 'success' | 'error' | 'warning' | 'info';
/** Notifications shown in one path at most. */
const MAX_SHOWN = 4;
const KINDS: readonly Kind[] = ['success', 'error', 'warning', 'info'];

/** SPEC sections 8 and 9, by hand. */
const DURATION_MS: Record<Kind, number> = { success: 4000, error: 5000, warning: 4000, info: 4000 };
/** SPEC section 8's colours, as the classes that paint the notification. */
const COLOUR: Record<Kind, RegExp> = {
  success: /(^|\s)bg-green-\d{3}(\s|$)/,
  error: /(^|\s)bg-red-\d{3}(\s|$)/,
  warning: /(^|\s)bg-amber-\d{3}(\s|$)/,
  info: /(^|\s)bg-blue-\d{3}(\s|$)/,
};

/**
 * What each notification says. success is the dashboard's own "Copy Prompt" notification
 * (generation.en.ts / generation.ru.ts); the others are sent to the toasts actor (see
 * `perform`) with texts of SPEC section 8 (Russian: the product's locale files).
 */
const MESSAGE: Record<Language, Record<Kind, string>> = {
  en: {
    success: 'Prompt copied',
    error: 'Failed to send message',
    warning: 'Insufficient tokens',
    info: 'Please try again later',
  },
  ru: {
    success: 'Промпт скопирован',
    error: 'Не удалось отправить сообщение',
    warning: 'Недостаточно токенов',
    info: 'Попробуйте позже',
  },
};
const COPY_PROMPT: Record<Language, string> = { en: 'Copy Prompt', ru: 'Копировать промпт' };
const PROMPT: Record<Language, string> = { en: 'Prompt', ru: 'Промпт' };

/** A generation, so the result with its Copy Prompt button is on the dashboard. */
const GENERATED = {
  success: true,
  data: {
    id: 11,
    fileName: '0123456789abcdef0123456789abcdef.png',
    originalName: null,
    imageUrl: 'http://localhost/images/0123456789abcdef0123456789abcdef.png',
    prompt: 'A red fox',
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
  },
  tokens: { charged: 2 },
  message: 'ok',
};

/** The app, and when each notification on screen appeared (the test's clock). */
interface ToastsUi extends OpenApp {
  shownAt: Map<Element, number>;
}

/** A notification as SPEC says the user sees it. */
interface Seen {
  id: number;
  kind: Kind;
  message: string;
}

/**
 * The notifications on screen after these events, oldest first: each TOAST.SHOW adds one
 * (the n-th shown is the one a later TOAST.DISMISS names n), each dismissal removes the
 * one it names. At most five stay, the oldest leaving first (the product's rule,
 * src/machines/toasts.ts; SPEC has no limit).
 */
function factsOf(events: readonly AnyEventObject[], lang: Language): Seen[] {
  let shown: Seen[] = [];
  let next = 1;
  for (const event of events) {
    if (event.type === 'TOAST.SHOW') {
      const kind = (event as unknown as { kind: Kind }).kind;
      shown = [...shown, { id: next, kind, message: MESSAGE[lang][kind] }].slice(-5);
      next += 1;
    } else if (event.type === 'TOAST.DISMISS') {
      const id = (event as unknown as { id: number }).id;
      shown = shown.filter((toast) => toast.id !== id);
    }
  }
  return shown;
}

/** The notifications on screen, oldest first. */
const onScreen = () => [...document.querySelectorAll<HTMLElement>('[data-kind]')];

function dismissed(before: AnyMachineSnapshot, event: AnyEventObject) {
  const toasts = (before.context as { toasts: Toast[] }).toasts;
  const id = (event as unknown as { id: number }).id;
  return { index: toasts.findIndex((toast) => toast.id === id), toast: toasts.find((toast) => toast.id === id) };
}

/** The real clock, kept before the fake one replaces it. */
const realSetTimeout = globalThis.setTimeout;

/**
 * Waits until `check` passes, letting React and the notifications' effects run, without
 * moving the fake clock (vi.waitFor and Testing Library's waitFor both advance it).
 */
async function settle(check: () => void): Promise<void> {
  const deadline = performance.now() + 2000;
  for (;;) {
    try {
      check();
      return;
    } catch (error) {
      if (performance.now() > deadline) throw error;
    }
    await act(async () => {
      await new Promise((resolve) => realSetTimeout(resolve, 10));
    });
  }
}

export const model: ScreenModel<ToastsUi> = {
  machine: toastsMachine,
  events: (snapshot: AnyMachineSnapshot) => {
    const { toasts, nextId } = snapshot.context as { toasts: Toast[]; nextId: number };
    return [
      // Two at a time, four in a path, are enough to see the queue and keep the traversal small.
      ...(toasts.length < 2 && nextId <= MAX_SHOWN
        ? KINDS.map((kind) => ({ type: 'TOAST.SHOW', kind, message: kind }))
        : []),
      ...toasts.map((toast) => ({ type: 'TOAST.DISMISS', id: toast.id, via: 'close' })),
      // Alone on screen, a notification is let close by itself: its duration is measured.
      ...(toasts.length === 1 ? [{ type: 'TOAST.DISMISS', id: toasts[0]!.id, via: 'timeout' }] : []),
      // A dismissal for a notification no longer there changes nothing.
      { type: 'TOAST.DISMISS', id: 99, via: 'stale' },
    ];
  },
  // The whole context: a dismissal names a notification by its id, so states that differ in
  // ids must not be merged (a path's events would name notifications it never showed).
  serializeState: (snapshot: AnyMachineSnapshot) => JSON.stringify([snapshot.value, snapshot.context]),
  // Each kind shown and closed (by hand, first or second, or by its timer) is a transition of its own.
  edgeKey: (before: AnyMachineSnapshot, event: AnyEventObject, after: AnyMachineSnapshot) => {
    const { toasts } = before.context as { toasts: Toast[] };
    const { index, toast } = event.type === 'TOAST.DISMISS' ? dismissed(before, event) : { index: -1, toast: null };
    return JSON.stringify([
      before.value,
      event.type,
      after.value,
      toasts.length,
      (event as { kind?: string }).kind ?? toast?.kind ?? null,
      (event as { via?: string }).via ?? null,
      index,
    ]);
  },
  async open(lang: Language) {
    const api = new FakeApi()
      .fallback('GET', '/api/images/my-images', {
        body: {
          success: true,
          data: { images: [], pagination: { currentPage: 1, totalPages: 0, total: 0, hasNext: false, hasPrev: false } },
        },
      })
      .on('POST', '/api/stability/text-to-image', json(GENERATED));
    // Regenerate's address fills the prompt (SPEC section 2), which saves typing it.
    const ui = await openApp('/dashboard?prompt=fox', { lang, api });
    await screen.findByRole('textbox', { name: PROMPT[lang] }, { timeout: 10_000 });
    await ui.user.click(screen.getByTestId('generate'));
    await screen.findByRole('button', { name: COPY_PROMPT[lang] }, { timeout: 10_000 });
    // From here the clock moves only when a path says so (see `perform`). Testing Library's
    // waitFor advances it while it waits (it takes vitest's fake timers for jest's, below).
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    return { ...ui, shownAt: new Map() };
  },
  close: (ui: ToastsUi) => {
    vi.useRealTimers();
    ui.close();
  },
  async perform(ui: ToastsUi, event: AnyEventObject, before: AnyMachineSnapshot) {
    const count = onScreen().length;
    if (event.type === 'TOAST.SHOW') {
      const kind = (event as unknown as { kind: Kind }).kind;
      if (kind === 'success') {
        // The dashboard's Copy Prompt shows a success notification.
        await ui.user.click(screen.getByRole('button', { name: COPY_PROMPT[ui.lang] }));
      } else {
        // No screen of the product shows warning or info notifications, and error ones come
        // from the chat's failures (their suites): sent to the toasts actor as screens do.
        await act(async () => {
          ui.app.actors.toasts.send({ type: 'TOAST.SHOW', kind, message: MESSAGE[ui.lang][kind] });
        });
      }
      await settle(() => expect(onScreen().length).toBe(count + 1));
      // The clock stood still since it appeared: its timer started now.
      ui.shownAt.set(onScreen().at(-1)!, Date.now());
      return;
    }
    const via = (event as unknown as { via: string }).via;
    if (via === 'stale') {
      // No gesture sends it: a dismissal arriving for a notification already closed.
      await act(async () => {
        ui.app.actors.toasts.send({ type: 'TOAST.DISMISS', id: 99 });
      });
      return;
    }
    const { index, toast } = dismissed(before, event);
    const element = onScreen()[index]!;
    if (via === 'close') {
      await ui.user.click(within(element).getByRole('button'));
      // The person moves on: pointer and focus leave the notifications, which Radix pauses
      // while they are there.
      await ui.user.click(screen.getByRole('heading', { level: 1 }));
      await settle(() => expect(element.isConnected).toBe(false));
      return;
    }
    // By its timer: alive until its duration is over, gone at that millisecond.
    const duration = DURATION_MS[toast!.kind];
    const left = ui.shownAt.get(element)! + duration - Date.now();
    await act(async () => {
      vi.advanceTimersByTime(left - 1);
    });
    expect(
      element.isConnected && element.getAttribute('data-state'),
      `the ${toast!.kind} notification 1 ms before its ${duration} ms`,
    ).toBe('open');
    await act(async () => {
      vi.advanceTimersByTime(1);
    });
    await settle(() => expect(element.isConnected, `the ${toast!.kind} notification at ${duration} ms`).toBe(false));
  },
  sees: [
    [
      'empty',
      {
        says: 'SPEC 8: no notification on screen',
        check: (ui: ToastsUi, reached: Reached) => {
          expect(factsOf(reached.events, reached.lang), 'every notification shown has been closed').toEqual([]);
          expect(ui.location()).toBe('/dashboard?prompt=fox');
          expect(onScreen()).toEqual([]);
        },
      },
    ],
    [
      'showing',
      {
        says: 'SPEC 8: the notifications top-right, each with its text and colour (success green, error red, warning amber, info blue)',
        check: (ui: ToastsUi, reached: Reached) => {
          const expected = factsOf(reached.events, reached.lang);
          expect(expected.length, 'notifications the user has been shown and not closed').toBeGreaterThan(0);
          const shown = onScreen();
          expect(ui.location()).toBe('/dashboard?prompt=fox');
          expect(shown.map((el) => [el.getAttribute('data-kind'), el.textContent])).toEqual(
            expected.map((toast) => [toast.kind, toast.message]),
          );
          for (const [i, el] of shown.entries()) expect(el.className).toMatch(COLOUR[expected[i]!.kind]);
          // Top-right: the list is fixed to the top and right edges of the window.
          const list = shown[0]!.closest('ol')!;
          expect(list.className.split(/\s+/)).toContain('fixed');
          expect(list.className).toMatch(/(^|\s)top-\S+/);
          expect(list.className).toMatch(/(^|\s)right-\S+/);
          expect(list.className).not.toMatch(/(^|\s)(bottom|left)-\S+/);
        },
      },
    ],
  ],
  always: {
    says: 'nothing reaches a server the app does not call',
    check: (ui: ToastsUi) => expect(ui.api.strays()).toEqual([]),
  },
};

const pointerCapture: Array<'hasPointerCapture' | 'setPointerCapture' | 'releasePointerCapture'> = [];

// Testing Library recognises jest's fake timers only: vitest's stand in (its waitFor then
// advances the fake clock while it polls, rather than waiting on a clock that stands still).
beforeAll(async () => {
  // The screens' and the notifications' code is split (src/ui/router.tsx): compiled once here.
  await Promise.all([
    import('../../src/ui/shell/AppShell'),
    import('../../src/ui/dashboard/DashboardScreen'),
    import('../../src/ui/common/Toaster'),
  ]);
  (globalThis as { jest?: unknown }).jest = { advanceTimersByTime: (ms: number) => vi.advanceTimersByTime(ms) };
  // jsdom has no pointer capture, which a notification's swipe handling asks about on a click.
  for (const name of ['hasPointerCapture', 'setPointerCapture', 'releasePointerCapture'] as const) {
    if (!(name in Element.prototype)) {
      Object.defineProperty(Element.prototype, name, { configurable: true, value: () => false });
      pointerCapture.push(name);
    }
  }
});
afterAll(() => {
  delete (globalThis as { jest?: unknown }).jest;
  for (const name of pointerCapture) delete (Element.prototype as Partial<Element>)[name];
});

describeScreenModel('notifications', model);

describeInvariants('notifications', model, [
  {
    name: 'the queue is empty exactly in the state empty',
    state: (snapshot) => snapshot.matches('empty') === ((snapshot.context as { toasts: Toast[] }).toasts.length === 0),
  },
  {
    name: 'a notification leaves only when its own dismissal (close button or its timer) names it',
    step: (before, event, after) => {
      const was = (before.context as { toasts: Toast[] }).toasts.map((t) => t.id);
      const is = new Set((after.context as { toasts: Toast[] }).toasts.map((t) => t.id));
      const gone = was.filter((id) => !is.has(id));
      return event.type === 'TOAST.DISMISS'
        ? gone.every((id) => id === (event as unknown as { id: number }).id)
        : gone.length === 0;
    },
  },
  {
    name: 'each notification shown gets a new id, and keeps its kind and text',
    step: (before, event, after) => {
      if (event.type !== 'TOAST.SHOW') return true;
      const was = (before.context as { toasts: Toast[] }).toasts;
      const added = (after.context as { toasts: Toast[] }).toasts.at(-1)!;
      const e = event as unknown as { kind: Kind; message: string };
      return was.every((t) => t.id < added.id) && added.kind === e.kind && added.message === e.message;
    },
  },
]);

// The queue's own limit, on the pure chart with more notifications than the screen paths show.
describeInvariants(
  'notification queue',
  {
    machine: toastsMachine,
    events: (snapshot: AnyMachineSnapshot) =>
      (snapshot.context as { nextId: number }).nextId <= 7 ? [{ type: 'TOAST.SHOW', kind: 'info', message: 'm' }] : [],
    serializeState: (snapshot: AnyMachineSnapshot) => JSON.stringify((snapshot.context as { nextId: number }).nextId),
  },
  [
    {
      name: 'at most five at a time, the oldest leaving first',
      step: (before, _event, after) => {
        const was = (before.context as { toasts: Toast[] }).toasts.map((t) => t.id);
        const is = (after.context as { toasts: Toast[] }).toasts.map((t) => t.id);
        const next = (before.context as { nextId: number }).nextId;
        return JSON.stringify(is) === JSON.stringify([...was, next].slice(-5));
      },
    },
  ],
);
