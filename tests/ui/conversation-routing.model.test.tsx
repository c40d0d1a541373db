// One file: one chart's walk: its table of what each state shows (SPEC) and the steps that drive it
// read side by side.
import { screen, within } from '@testing-library/react';
import { expect, vi } from 'vitest';
import type { AnyEventObject, AnyMachineSnapshot } from 'xstate';
import { conversationRoutingMachine, type ConversationRoutingContext } from '../../src/machines/conversation-routing';
import type { Conversation, Message } from '../../src/domain/conversation';
import type { Language } from '../../src/i18n';
import type { OpenApp } from './support/app';
import { FakeApi, json, type Reply } from './support/fake-api';
import {
  BROKEN,
  bySource,
  errorOfReply,
  MODEL_KEY,
  MODELS,
  NOT_FOUND,
  openChat,
  plural,
  stubScrollIntoView,
  toastTexts,
} from './support/fixtures';
import { describeInvariants, describeScreenModel, replyOf, type Reached, type ScreenModel } from './support/model';

/*
 * The chat page's lists, the open conversation, deletion and the route (SPEC section 2
 * "Chat", section 4 "Conversation deletion" and "Conversation reload", section 5, section 8)
 * walked along the conversation-routing statechart on the real screen at /chat and
 * /chat/{id}. What is expected comes from SPEC and is written here; the Russian wording is
 * the product's, written out by hand so a change of it is seen.
 */

vi.setConfig({ testTimeout: 60_000 });
// jsdom lays nothing out: the message list's scrolling (SPEC 2) has nothing to move.
stubScrollIntoView();

const ONE = /^\/llm\/conversations\/\d+$/;

const noon = (daysAgo: number) => {
  const d = new Date();
  d.setHours(12, 0, 0, 0);
  d.setDate(d.getDate() - daysAgo);
  return d.toISOString();
};

/** GET /llm/conversations (SPEC 3 "Conversation" without messages), as the server orders them. */
const LIST = [
  { id: 5, title: 'Recipes', isDeleted: false, createdAt: noon(10), updatedAt: noon(0) },
  { id: 7, title: 'Travel plans', isDeleted: false, createdAt: noon(10), updatedAt: noon(1) },
  { id: 8, title: 'Old notes', isDeleted: false, createdAt: noon(10), updatedAt: noon(3) },
  {
    id: 3,
    title: 'Archive',
    isDeleted: false,
    createdAt: new Date(2025, 2, 4, 12).toISOString(),
    updatedAt: new Date(2025, 2, 4, 12).toISOString(),
  },
];
const TITLES: Record<number, string> = { 5: 'Recipes', 7: 'Travel plans', 8: 'Old notes', 3: 'Archive' };

/** A message's creation time: 09:05 local (SPEC 2: hour and minute, two digits each). */
const AT_0905 = new Date(2026, 10, 20, 9, 5).toISOString();

/** GET /llm/conversations/{id}: 5 has an exchange, 7 none yet. */
const CONVERSATIONS: Record<number, unknown> = {
  5: {
    ...LIST[0],
    messages: [
      { id: 51, role: 'user', content: 'How do I bake bread?', model: null, tokensUsed: null, createdAt: AT_0905 },
      {
        id: 52,
        role: 'assistant',
        content: '**Flour**, water and salt.',
        model: 'gpt-4o',
        tokensUsed: 42,
        createdAt: AT_0905,
      },
    ],
  },
  7: { ...LIST[1], messages: [] },
};

type Src = 'loadModels' | 'loadConversations' | 'loadConversation' | 'deleteConversation';
/** The server's answers to an actor of the state, marked with the actor's source (the rows tell them apart). */
const { answered, srcOf } = bySource<Src>();

const TEXT = {
  en: {
    pageTitle: 'AI Chat',
    conversations: 'Conversations',
    emptyTitle: 'Chat with AI',
    emptyText: 'No conversation selected. Type a message below to start a new chat.',
    noMessages: 'No messages',
    startNew: 'Start a new chat by sending the first message',
    newChat: 'New Chat',
    noConversations: 'No conversations yet',
    notFound: 'Conversation not found',
    back: 'Back to conversations',
    loadFailedTitle: 'The conversation could not be loaded',
    loadFailedRetry: 'Try again',
    confirm: 'Are you sure you want to delete this conversation?',
    deleteLabel: (title: string) => `Delete conversation: ${title}`,
    cancel: 'Cancel',
    delete: 'Delete',
    retry: 'Retry',
    model: (name: string) => `Model: ${name}`,
    noModel: 'No model selected',
    dates: { 5: 'Today', 7: 'Yesterday', 8: '3 days ago', 3: '3/4/2025' } as Record<number, string>,
    // SPEC section 8, word for word.
    loadModels: 'Failed to load available models',
    loadConversations: 'Failed to load conversations',
    loadConversation: 'Failed to load conversation',
    deleteConversation: 'Failed to delete conversation',
  },
  ru: {
    pageTitle: 'AI-чат',
    conversations: 'Разговоры',
    emptyTitle: 'Начните разговор с ИИ',
    emptyText: 'Разговоров не выбрано. Напишите сообщение ниже, чтобы начать новый чат.',
    noMessages: 'Сообщений нет',
    startNew: 'Начните новый чат: напишите первое сообщение',
    newChat: 'Новый чат',
    noConversations: 'Разговоров пока нет',
    notFound: 'Разговор не найден',
    back: 'К списку разговоров',
    loadFailedTitle: 'Не удалось загрузить разговор',
    loadFailedRetry: 'Повторить',
    confirm: 'Вы уверены, что хотите удалить этот разговор?',
    deleteLabel: (title: string) => `Удалить разговор: ${title}`,
    cancel: 'Отмена',
    delete: 'Удалить',
    retry: 'Повторить',
    model: (name: string) => `Модель: ${name}`,
    noModel: 'Модель не выбрана',
    dates: {
      5: 'Сегодня',
      7: 'Вчера',
      8: `3 ${plural('ru', 3, { one: 'день', few: 'дня', other: 'дней' })} назад`,
      3: '04.03.2025',
    } as Record<number, string>,
    loadModels: 'Не удалось загрузить список моделей',
    loadConversations: 'Не удалось загрузить разговоры',
    loadConversation: 'Не удалось загрузить разговор',
    deleteConversation: 'Не удалось удалить разговор',
  },
};
type Texts = (typeof TEXT)['en'];

const isWhole = (param: string) => /^\d+$/.test(param);
/** The conversation deleted is the open one, another is open, or none is. */
const which = (open: number | null, deleted: number | null) =>
  open === null ? 'none' : open === deleted ? 'open' : 'other';
const conversationOf = (s: AnyMachineSnapshot) => (s.value as { ready: { conversation: string } }).ready.conversation;

/**
 * What has happened, as SPEC says it counts: the oracle the rows read. `ready`: both lists
 * were asked for once (SPEC 2: on open, models, then conversations, then the conversation).
 */
interface Facts {
  ready: boolean;
  /** The route value the page was last given. */
  param: string | undefined;
  address: string;
  models: 'loaded' | 'failed' | 'loading';
  list: 'loaded' | 'failed' | 'loading';
  ids: number[];
  open: { id: number; status: 'loading' | 'loaded' | 'notFound' | 'failed' } | null;
  deleting: number | null;
  /** The notification the last step showed, if any (SPEC 8). */
  toast: keyof Texts | null;
  /** Every notification of the path. */
  toasts: Array<keyof Texts>;
}

function factsOf(events: readonly AnyEventObject[]): Facts {
  const f: Facts = {
    ready: false,
    param: undefined,
    address: '/chat',
    models: 'loading',
    list: 'loading',
    ids: [],
    open: null,
    deleting: null,
    toast: null,
    toasts: [],
  };
  const notify = (key: keyof Texts) => {
    f.toast = key;
    f.toasts.push(key);
  };
  // SPEC 2: a route value that is not a whole number goes back to /chat; another id loads.
  const follow = (param: string | undefined) => {
    if (param === undefined || !isWhole(param)) {
      f.address = '/chat';
      f.open = null;
    } else if (f.open?.id !== Number(param)) {
      f.open = { id: Number(param), status: 'loading' };
    }
  };
  for (const event of events) {
    f.toast = null;
    const ok = event.type.startsWith('xstate.done.');
    switch (event.type) {
      case 'ROUTE.CHANGED': {
        const param = (event as unknown as { param?: string }).param;
        f.param = param;
        f.address = param === undefined ? '/chat' : `/chat/${param}`;
        if (f.ready) follow(param);
        break;
      }
      case 'DELETE':
        f.deleting = (event as unknown as { id: number }).id;
        break;
      case 'CONVERSATIONS.RETRY':
        f.list = 'loading';
        break;
      case 'CONVERSATION.RETRY':
        if (f.open?.status === 'failed') f.open = { id: f.open.id, status: 'loading' };
        break;
      case 'MODELS.RETRY':
        f.models = 'loading';
        break;
      default: {
        const src = srcOf(event);
        if (src === 'loadModels') {
          f.models = ok ? 'loaded' : 'failed';
          if (!ok) notify('loadModels');
        } else if (src === 'loadConversations') {
          f.list = ok ? 'loaded' : 'failed';
          f.ids = ok ? LIST.map((c) => c.id) : [];
          if (!ok) notify('loadConversations');
          if (!f.ready) {
            f.ready = true;
            follow(f.param);
          }
        } else if (src === 'loadConversation') {
          const code = replyOf<Reply>(event).status ?? 200;
          // #26: a missing conversation and one that failed to load are different states; the
          // failure is also said (SPEC 8) and offers to try again.
          const status = code === 200 ? 'loaded' : code === 404 ? 'notFound' : 'failed';
          f.open = { id: f.open!.id, status };
          if (status === 'failed') notify('loadConversation');
        } else if (ok) {
          // SPEC 4: deletion removes it from the list and clears the open one (SPEC 2: to /chat).
          f.ids = f.ids.filter((id) => id !== f.deleting);
          if (f.open?.id === f.deleting) {
            f.open = null;
            f.address = '/chat';
          }
          f.deleting = null;
        } else {
          notify('deleteConversation');
          f.deleting = null;
        }
      }
    }
  }
  return f;
}

const input = () => screen.queryByTestId<HTMLTextAreaElement>('chat-input');

/** The sidebar (SPEC 2 "Conversation list") and the config bar, once the page is ready. */
function pageShows(ui: OpenApp, reached: Reached, f: Facts) {
  const text = TEXT[reached.lang];
  expect(ui.location()).toBe(f.address);
  const nav = screen.getByTestId('conversation-list').closest('nav')!;
  expect(nav.getAttribute('aria-label')).toBe(text.conversations);
  expect(within(nav).getByTestId('new-chat').textContent?.trim()).toBe(text.newChat);
  const links = within(nav).queryAllByTestId('conversation-link');
  if (f.list === 'failed') {
    // SPEC 8: "Failed to load conversations", with Retry.
    const alert = within(nav).getByTestId('conversations-failed');
    expect(within(alert).getByText(text.loadConversations)).toBeTruthy();
    expect(within(alert).getByTestId('conversations-retry').textContent?.trim()).toBe(text.retry);
    expect(links).toHaveLength(0);
  } else if (f.list === 'loading') {
    expect(within(nav).getByTestId('conversations-loading')).toBeTruthy();
  } else {
    // Title and a relative date: Today, Yesterday, "n days ago", otherwise a date.
    expect(links.map((a) => a.textContent)).toEqual(f.ids.map((id) => `${TITLES[id]}${text.dates[id]}`));
    expect(within(nav).queryByText(text.noConversations)).toBeNull();
  }
  const bar = screen.queryByTestId('config-bar');
  if (bar) {
    if (f.models === 'failed') {
      // SPEC 8: "Failed to load available models" (with Retry).
      const alert = within(bar).getByTestId('models-failed');
      expect(alert.textContent?.trim()).toBe(`${text.loadModels} ${text.retry}`);
    } else {
      // While the list loads again after a failure no model is known yet.
      expect(bar.textContent).toContain(text.model(f.models === 'loaded' ? 'GPT-4o' : text.noModel));
    }
  }
  if (f.toast) expect(toastTexts()).toContain(text[f.toast]);
}

function loadedShows(ui: OpenApp, reached: Reached) {
  const f = factsOf(reached.events);
  const text = TEXT[reached.lang];
  pageShows(ui, reached, f);
  const id = f.open!.id;
  expect(f.open!.status).toBe('loaded');
  // SPEC 2 "Conversation selected": the title, the message list and the input box.
  expect(screen.getByTestId('chat-title').textContent).toBe(TITLES[id]);
  expect(input()!.disabled).toBe(false);
  if (id === 5) {
    expect(screen.getByTestId('message-user').textContent).toBe('How do I bake bread?');
    const assistant = screen.getByTestId('message-assistant');
    // Markdown (bold), then the model's name and the time, hour and minute in two digits.
    expect(within(assistant).getByText('Flour').tagName).toBe('STRONG');
    expect(within(assistant).getByTestId('assistant-markdown').textContent).toBe('Flour, water and salt.');
    const name = f.models === 'failed' ? 'gpt-4o' : 'GPT-4o';
    expect(within(assistant).getByTestId('message-meta').textContent).toBe(`${name} · 09:05`);
  } else {
    // The message list's empty state: "no messages", "start a new chat".
    const empty = screen.getByTestId('no-messages');
    expect(within(empty).getByText(text.noMessages)).toBeTruthy();
    expect(within(empty).getByText(text.startNew)).toBeTruthy();
  }
}

export const model: ScreenModel<OpenApp> = {
  machine: conversationRoutingMachine,
  // The page's events while the lists rest (loaded), the lists' events while the page rests
  // (nothing open, nothing being deleted): every transition is still taken, and the
  // traversal does not multiply the regions' states.
  events: (snapshot: AnyMachineSnapshot) => {
    const context = snapshot.context as ConversationRoutingContext;
    const starting = snapshot.matches('initialising');
    const listsRest =
      starting ||
      (snapshot.matches({ ready: { conversationList: 'loaded' } }) &&
        snapshot.matches({ ready: { modelList: 'loaded' } }));
    const pageRests =
      starting ||
      (snapshot.matches({ ready: { conversation: 'none' } }) && snapshot.matches({ ready: { deletion: 'idle' } }));
    return [
      ...(listsRest
        ? [
            // While the lists load, the address a link or a bookmark gave; then any move.
            { type: 'ROUTE.CHANGED', param: '5' },
            ...(starting
              ? []
              : [
                  { type: 'ROUTE.CHANGED', param: '7' },
                  { type: 'ROUTE.CHANGED', param: undefined },
                ]),
            { type: 'ROUTE.CHANGED', param: '7abc' },
            ...(snapshot.matches({ ready: { deletion: 'idle' } }) && context.conversations.some((c) => c.id === 5)
              ? [{ type: 'DELETE', id: 5 }]
              : []),
            ...answered(
              snapshot,
              'loadConversation',
              { output: CONVERSATIONS[context.targetId ?? 0] },
              json({ success: true, data: CONVERSATIONS[context.targetId ?? 0] }),
            ),
            ...answered(snapshot, 'loadConversation', { error: errorOfReply(NOT_FOUND) }, NOT_FOUND),
            ...answered(snapshot, 'loadConversation', { error: errorOfReply(BROKEN) }, BROKEN),
            ...answered(snapshot, 'deleteConversation', { output: undefined }, json({ success: true })),
            ...answered(snapshot, 'deleteConversation', { error: errorOfReply(BROKEN) }, BROKEN),
          ]
        : []),
      ...(pageRests
        ? [
            { type: 'CONVERSATIONS.RETRY' },
            { type: 'MODELS.RETRY' },
            ...answered(snapshot, 'loadModels', { output: MODELS.data }, json(MODELS)),
            ...answered(snapshot, 'loadModels', { error: errorOfReply(BROKEN) }, BROKEN),
            ...answered(snapshot, 'loadConversations', { output: LIST }, json({ success: true, data: LIST })),
            ...answered(snapshot, 'loadConversations', { error: errorOfReply(BROKEN) }, BROKEN),
          ]
        : []),
      ...(snapshot.matches({ ready: { conversation: 'failed' } }) ? [{ type: 'CONVERSATION.RETRY' }] : []),
    ].filter((event) => {
      // Retry is offered only where a list failed.
      if (event.type === 'CONVERSATIONS.RETRY') return snapshot.matches({ ready: { conversationList: 'failed' } });
      if (event.type === 'MODELS.RETRY') return snapshot.matches({ ready: { modelList: 'failed' } });
      return true;
    });
  },
  serializeState: (snapshot: AnyMachineSnapshot) => {
    const c = snapshot.context as ConversationRoutingContext;
    return JSON.stringify([
      snapshot.value,
      c.routeParam === undefined ? null : isWhole(c.routeParam) ? Number(c.routeParam) : 'invalid',
      c.targetId,
      c.current?.id ?? null,
      c.deletingId,
      c.conversations.map((x) => x.id),
      c.failures.models !== null,
      c.failures.conversations !== null,
    ]);
  },
  // What SPEC tells apart, and only that (each step on the screen costs): where the route
  // points from which page state, which answer the server gave, whether the conversation
  // deleted is the open one, and how a list's region moves.
  edgeKey: (before: AnyMachineSnapshot, event: AnyEventObject, after: AnyMachineSnapshot) => {
    const b = before.context as ConversationRoutingContext;
    const param = (event as { param?: string }).param;
    const route =
      param === undefined ? 'none' : !isWhole(param) ? 'invalid' : Number(param) === b.targetId ? 'same' : 'other';
    const status = event.type.startsWith('xstate.') ? (replyOf<Reply>(event).status ?? 200) : null;
    const src = srcOf(event) ?? event.type;
    if (before.matches('initialising')) {
      const where: unknown = after.matches('initialising') ? after.value : conversationOf(after);
      return JSON.stringify([before.value, src, event.type === 'ROUTE.CHANGED' ? route : status, where]);
    }
    switch (src) {
      case 'ROUTE.CHANGED':
        return JSON.stringify(['route', conversationOf(before), route]);
      case 'DELETE':
        return JSON.stringify(['delete', which(b.targetId, 5)]);
      case 'loadConversation':
        return JSON.stringify(['open', status]);
      case 'CONVERSATION.RETRY':
        return JSON.stringify(['reopen']);
      case 'deleteConversation':
        return JSON.stringify(['deleted', status, which(b.targetId, b.deletingId)]);
      default: {
        // A list's own region: the other list and the page are left as they are.
        const region = src === 'loadModels' || src === 'MODELS.RETRY' ? 'modelList' : 'conversationList';
        const of = (x: AnyMachineSnapshot) => (x.value as { ready: Record<string, string> }).ready[region];
        return JSON.stringify([src, status, of(before), of(after)]);
      }
    }
  },
  open: async (lang: Language) => {
    localStorage.removeItem(MODEL_KEY);
    const api = new FakeApi()
      .hold('GET', '/llm/models')
      .hold('GET', '/llm/conversations')
      .hold('GET', ONE)
      .hold('DELETE', ONE);
    return openChat(lang, api);
  },
  close: (ui: OpenApp) => ui.close(),
  async perform(ui: OpenApp, event: AnyEventObject, before: AnyMachineSnapshot) {
    const { user, api } = ui;
    const context = before.context as ConversationRoutingContext;
    const text = TEXT[ui.lang];
    switch (event.type) {
      case 'ROUTE.CHANGED': {
        const param = (event as unknown as { param?: string }).param;
        if (param === undefined) return user.click(screen.getAllByTestId('new-chat')[0]!);
        const link = screen
          .queryAllByTestId('conversation-link')
          .find((a) => a.getAttribute('href') === `/chat/${param}`);
        if (link) return user.click(link);
        // No link to it: the address is typed (or comes from a bookmark).
        const entries = ui.app.router.history.length;
        await ui.app.router.navigate({ to: `/chat/${param}` as '/' });
        if (isWhole(param) || before.matches('initialising')) return;
        // SPEC 2: back to /chat with the history entry replaced: nothing added after the typed one.
        await vi.waitFor(() => expect(ui.location()).toBe('/chat'));
        expect(ui.app.router.history.length).toBe(entries + 1);
        return;
      }
      case 'DELETE': {
        // SPEC 2: delete asks for confirmation; cancelling deletes nothing.
        const ask = () => user.click(screen.getByLabelText(text.deleteLabel(TITLES[5]!)));
        const dialog = () => document.querySelector<HTMLElement>('[role="alertdialog"]');
        const deletions = api.sent('DELETE').length;
        await ask();
        expect(within(dialog()!).getByText(text.confirm)).toBeTruthy();
        await user.click(within(dialog()!).getByText(text.cancel));
        expect(dialog()).toBeNull();
        expect(api.sent('DELETE')).toHaveLength(deletions);
        await ask();
        const confirm = within(dialog()!).getByTestId('confirm-delete');
        expect(confirm.textContent).toBe(text.delete);
        return user.click(confirm);
      }
      case 'CONVERSATIONS.RETRY':
        return user.click(screen.getByTestId('conversations-retry'));
      case 'CONVERSATION.RETRY':
        return user.click(screen.getByTestId('conversation-retry'));
      case 'MODELS.RETRY':
        return user.click(screen.getByTestId('models-retry'));
      default: {
        const reply = replyOf<Reply>(event);
        const src = srcOf(event);
        const [method, path] =
          src === 'loadModels'
            ? ['GET', '/llm/models']
            : src === 'loadConversations'
              ? ['GET', '/llm/conversations']
              : src === 'deleteConversation'
                ? ['DELETE', `/llm/conversations/${context.deletingId}`]
                : ['GET', `/llm/conversations/${context.targetId}`];
        // Every request of the call waiting gets the answer: an earlier one nobody awaits any
        // more (the route moved away and back, or React's development double mount) included.
        await api.answerAll(method, path, reply);
      }
    }
  },
  always: {
    says: 'DESIGN: nothing reaches a server the app did not mean; every notification is one SPEC 8 gives for what happened',
    check: (ui: OpenApp, reached: Reached) => {
      expect(ui.api.strays()).toEqual([]);
      const said = factsOf(reached.events).toasts.map((key) => TEXT[reached.lang][key]);
      for (const shown of toastTexts()) expect(said).toContain(shown);
    },
  },
  sees: [
    [
      'initialising',
      {
        says: 'SPEC 2: on open the page loads the model list and the conversation list: a spinner',
        check: (_ui: OpenApp, reached: Reached) => {
          const f = factsOf(reached.events);
          expect(screen.getByTestId('chat-loading')).toBeTruthy();
          expect(input()).toBeNull();
          expect(screen.queryAllByTestId('conversation-link')).toHaveLength(0);
          if (f.toast) expect(toastTexts()).toContain(TEXT[reached.lang][f.toast]);
        },
      },
    ],
    [
      { ready: { conversation: 'loading' } },
      {
        says: 'SPEC 2 "Conversation selected": a spinner while loading (SPEC 4: reloaded whenever the route id differs)',
        check: (ui: OpenApp, reached: Reached) => {
          const f = factsOf(reached.events);
          pageShows(ui, reached, f);
          expect(f.open?.status).toBe('loading');
          expect(ui.location()).toBe(`/chat/${f.open!.id}`);
          expect(screen.getByTestId('chat-loading')).toBeTruthy();
          expect(input()).toBeNull();
          // The conversation loaded is the one the route names.
          expect(ui.api.sent('GET', ONE).at(-1)?.path).toBe(`/llm/conversations/${f.open!.id}`);
        },
      },
    ],
    [
      { ready: { conversation: 'loaded' } },
      {
        says: 'SPEC 2 "Conversation selected": the title, the messages (markdown; model name and time) and the input',
        check: loadedShows,
      },
    ],
    [
      { ready: { conversation: 'notFound' } },
      {
        says: 'SPEC 2: a "conversation not found" error state when no conversation matches (SPEC 8: its wording is the product’s)',
        check: (ui: OpenApp, reached: Reached) => {
          const f = factsOf(reached.events);
          const text = TEXT[reached.lang];
          pageShows(ui, reached, f);
          expect(f.open?.status).toBe('notFound');
          const state = screen.getByTestId('conversation-not-found');
          expect(state.querySelector('h2')?.textContent).toBe(text.notFound);
          expect(within(state).getByTestId('back-to-conversations').textContent?.trim()).toBe(text.back);
          expect(input()).toBeNull();
        },
      },
    ],
    [
      { ready: { conversation: 'failed' } },
      {
        says: '#26: a conversation that failed to load (not a missing one) says so and offers to try again; SPEC 8 notifies',
        check: (ui: OpenApp, reached: Reached) => {
          const f = factsOf(reached.events);
          const text = TEXT[reached.lang];
          pageShows(ui, reached, f);
          expect(f.open?.status).toBe('failed');
          expect(screen.queryByTestId('conversation-not-found')).toBeNull();
          const state = screen.getByTestId('conversation-load-failed');
          expect(state.querySelector('h2')?.textContent).toBe(text.loadFailedTitle);
          expect(within(state).getByTestId('conversation-retry').textContent?.trim()).toBe(text.loadFailedRetry);
          expect(input()).toBeNull();
        },
      },
    ],
    [
      { ready: { conversation: 'none' } },
      {
        says: 'SPEC 2 "No conversation selected": a title, the start-a-new-chat message and the input box',
        check: (ui: OpenApp, reached: Reached) => {
          const f = factsOf(reached.events);
          const text = TEXT[reached.lang];
          pageShows(ui, reached, f);
          expect(f.open).toBeNull();
          expect(ui.location()).toBe('/chat');
          expect(screen.getByTestId('chat-title').textContent).toBe(text.pageTitle);
          const empty = screen.getByTestId('chat-empty');
          expect(empty.querySelector('h2')?.textContent).toBe(text.emptyTitle);
          expect(within(empty).getByText(text.emptyText)).toBeTruthy();
          expect(input()!.disabled).toBe(false);
        },
      },
    ],
  ],
};

describeScreenModel('conversation routing', model);

const ctx = (s: AnyMachineSnapshot) => s.context as ConversationRoutingContext;

describeInvariants('conversation routing', model, [
  {
    name: 'the conversation shown is the one the route names (SPEC 2, SPEC 4 "Conversation reload")',
    state: (s) => !s.matches({ ready: { conversation: 'loaded' } }) || ctx(s).current?.id === ctx(s).targetId,
  },
  {
    name: 'deleting the open conversation clears it and removes it from the list (SPEC 4)',
    step: (before, event, after) =>
      !event.type.startsWith('xstate.done.actor') ||
      !before.matches({ ready: { deletion: 'deleting' } }) ||
      after.matches({ ready: { deletion: 'deleting' } }) ||
      (!ctx(after).conversations.some((c) => c.id === ctx(before).deletingId) &&
        (ctx(before).deletingId !== ctx(before).targetId ||
          (after.matches({ ready: { conversation: 'none' } }) && ctx(after).current === null))),
  },
  {
    name: 'a route value that is not a whole number never opens a conversation (SPEC 5)',
    step: (_before, event, after) =>
      event.type !== 'ROUTE.CHANGED' ||
      after.matches('initialising') ||
      isWhole((event as { param?: string }).param ?? '') ||
      (after.matches({ ready: { conversation: 'none' } }) && ctx(after).targetId === null),
  },
  {
    name: 'a list that failed is never shown as an empty one: it stays failed (with Retry) until it loads',
    state: (s) =>
      s.matches('initialising') ||
      ((ctx(s).failures.conversations === null || !s.matches({ ready: { conversationList: 'loaded' } })) &&
        (ctx(s).failures.models === null || !s.matches({ ready: { modelList: 'loaded' } }))),
  },
  {
    name: 'a deletion under way is not cancelled by opening another conversation',
    step: (before, event, after) =>
      !(event.type === 'ROUTE.CHANGED' && before.matches({ ready: { deletion: 'deleting' } })) ||
      after.matches({ ready: { deletion: 'deleting' } }),
  },
]);

/**
 * What chat-send and chat-reply tell this chart (a conversation created for a first message,
 * an exchange finished, a conversation read again). The screen walk of chat-send makes them happen; here every reachable state
 * meets them, on the pure graph.
 */
const CREATED = { id: 9, title: 'New Chat', isDeleted: false, createdAt: noon(0), updatedAt: noon(0), messages: [] };
const withChatSend = {
  ...model,
  events: (snapshot: AnyMachineSnapshot) => [
    ...model.events(snapshot),
    ...(snapshot.matches('ready')
      ? [
          { type: 'CONVERSATION.CREATED', conversation: CREATED },
          // The created conversation read as it opens: still "New Chat", no messages.
          ...(ctx(snapshot).targetId === CREATED.id
            ? answered(snapshot, 'loadConversation', { output: CREATED }, json({ success: true, data: CREATED }))
            : []),
          {
            type: 'MESSAGES.APPENDED',
            conversationId: ctx(snapshot).targetId ?? 5,
            messages: [
              { id: -1, role: 'user', content: 'Hello', model: null, tokensUsed: null, createdAt: noon(0) },
              { id: 31, role: 'assistant', content: 'Hi', model: 'gpt-4o', tokensUsed: 12, createdAt: noon(0) },
            ],
          },
          // chat-reply (issue #28): the open conversation read again while a reply is written elsewhere.
          {
            type: 'CONVERSATION.UPDATED',
            conversation: { ...CREATED, id: ctx(snapshot).targetId ?? 5, title: 'Read again' },
          },
        ]
      : []),
  ],
};

describeInvariants('conversation routing, told by chat send', withChatSend, [
  {
    name: 'a conversation created for a first message is selected, opened and put at the top of the list (SPEC 2)',
    step: (_before, event, after) =>
      event.type !== 'CONVERSATION.CREATED' ||
      (after.matches({ ready: { conversation: 'loading' } }) &&
        ctx(after).targetId === CREATED.id &&
        ctx(after).conversations[0]?.id === CREATED.id),
  },
  {
    name: 'a deletion under way is not cancelled by a conversation created meanwhile',
    step: (before, event, after) =>
      event.type !== 'CONVERSATION.CREATED' ||
      !before.matches({ ready: { deletion: 'deleting' } }) ||
      (after.matches({ ready: { deletion: 'deleting' } }) && ctx(after).deletingId === ctx(before).deletingId),
  },
  {
    name: 'a finished exchange joins the open conversation, after its messages (SPEC 4)',
    step: (before, event, after) => {
      if (event.type !== 'MESSAGES.APPENDED') return true;
      const open = ctx(before).current;
      if (!open || open.id !== (event as { conversationId?: number }).conversationId) {
        return ctx(after).current === open;
      }
      // A message already shown (the same stored id, read again with the conversation) is not shown twice.
      const shown = new Set(open.messages.map((m) => m.id));
      const added = ((event as { messages?: Message[] }).messages ?? []).filter((m) => !shown.has(m.id));
      return JSON.stringify(ctx(after).current?.messages) === JSON.stringify([...open.messages, ...added]);
    },
  },
  {
    // The list as the server gives it when read again: most recently active first, and a
    // conversation still called "New Chat" named after its first message.
    name: 'a finished exchange puts its conversation first in the list, named after its first message while it had no title',
    step: (before, event, after) => {
      if (event.type !== 'MESSAGES.APPENDED') return true;
      const id = (event as { conversationId?: number }).conversationId;
      const listed = ctx(before).conversations;
      const was = listed.find((c) => c.id === id);
      if (!was) return JSON.stringify(ctx(after).conversations) === JSON.stringify(listed);
      const title = was.title === 'New Chat' ? 'Hello' : was.title;
      const [first, ...rest] = ctx(after).conversations;
      const [open, shown] = [ctx(after).current, ctx(before).current];
      return (
        JSON.stringify(first) === JSON.stringify({ ...was, title, updatedAt: noon(0) }) &&
        JSON.stringify(rest) === JSON.stringify(listed.filter((c) => c.id !== id)) &&
        (!open || open.id !== id || open.title === (shown?.title === 'New Chat' ? 'Hello' : shown?.title))
      );
    },
  },
  {
    name: 'a conversation read again (a reply written elsewhere, issue #28) replaces only the open one',
    step: (before, event, after) => {
      if (event.type !== 'CONVERSATION.UPDATED') return true;
      const read = (event as unknown as { conversation: Conversation }).conversation;
      const open = ctx(before).current;
      return (
        ctx(after).current === (open?.id === read.id ? read : open) && ctx(after).targetId === ctx(before).targetId
      );
    },
  },
]);
